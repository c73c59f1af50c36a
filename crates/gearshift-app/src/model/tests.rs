use std::collections::HashMap;

use gearshift_dbus::values::Dict;
use zbus::zvariant::{OwnedValue, Value};

use super::*;

fn v(value: Value<'_>) -> OwnedValue {
    value.try_to_owned().expect("plain value")
}

fn props(state: &str, reason: &str) -> Dict {
    HashMap::from([
        ("State".to_owned(), v(Value::from(state))),
        ("StateReason".to_owned(), v(Value::from(reason))),
        ("Profile".to_owned(), v(Value::from("low-power"))),
        ("Mode".to_owned(), v(Value::from("low-power"))),
        ("Preemption".to_owned(), v(Value::from(false))),
    ])
}

#[test]
fn every_state_has_words_and_the_right_action() {
    let running = DaemonProperties::from_props(&props("running", ""));
    let view = running.status_view();
    assert_eq!(view.action, Some(Action::Stop));
    assert!(view.description.contains("Low power"), "{view:?}");

    let stopped = DaemonProperties::from_props(&props("stopped", ""));
    assert_eq!(stopped.status_view().action, Some(Action::Start));

    let failed = DaemonProperties::from_props(&props("failed", "EXIT: runtime error"));
    let view = failed.status_view();
    assert_eq!(view.action, Some(Action::Retry));
    assert!(view.details.contains("EXIT: runtime error"), "{view:?}");

    let unsupported = DaemonProperties::from_props(&props("unsupported", "no sched_ext"));
    let view = unsupported.status_view();
    assert_eq!(view.action, None);
    assert!(view.title.contains("sched_ext"), "{view:?}");
    assert!(
        view.description.contains("CONFIG_SCHED_CLASS_EXT"),
        "{view:?}"
    );

    assert_eq!(absent_view("gone").action, None);
}

#[test]
fn an_older_daemon_has_no_reason_and_a_newer_one_says_why() {
    let mut d = DaemonProperties::from_props(&props("running", ""));
    assert_eq!(d.reason_text(), None);
    assert_eq!(d.power_text(), "");

    let hold = HashMap::from([
        ("cookie".to_owned(), Value::from(7u32)),
        ("profile".to_owned(), Value::from("low-power")),
        ("reason".to_owned(), Value::from("video call")),
        ("application_id".to_owned(), Value::from("org.example.Call")),
    ]);
    let newer = HashMap::from([
        ("ProfileReason".to_owned(), v(Value::from("hold"))),
        ("ActiveHolds".to_owned(), v(Value::from(vec![hold]))),
        ("OnBattery".to_owned(), v(Value::from(true))),
        ("PowerProfile".to_owned(), v(Value::from("power-saver"))),
        ("SomethingNew".to_owned(), v(Value::from(1u32))),
    ]);
    d.apply(&newer);
    assert_eq!(
        d.active_holds.as_ref().map(|h| h[0].cookie),
        Some(7),
        "{d:?}"
    );
    let why = d.reason_text().unwrap_or_default();
    assert!(
        why.contains("org.example.Call") && why.contains("video call"),
        "{why}"
    );
    assert!(d.power_text().contains("power-saver"), "{}", d.power_text());

    for (reason, word) in [
        ("user", "You chose"),
        ("battery", "battery"),
        ("low-battery", "battery is low"),
        ("ac", "AC power"),
        ("power-profile", "power-saver"),
        ("default", "default"),
        ("fallback", "kept failing"),
    ] {
        d.apply(&HashMap::from([(
            "ProfileReason".to_owned(),
            v(Value::from(reason)),
        )]));
        let why = d.reason_text().unwrap_or_default();
        assert!(why.contains(word), "{reason}: {why}");
    }
}

#[test]
fn profile_names_read_as_words() {
    assert_eq!(profile_title("low-power"), "Low power");
    assert_eq!(profile_title("custom"), "Custom");
    assert_eq!(profile_description("my own"), "my own");
    assert_eq!(mode_label("fifo"), "FIFO");
}

#[test]
fn a_fallback_is_shown_where_the_state_is_with_the_daemons_words() {
    let reason = "Fell back to profile low-power, the last that ran cleanly: profile fifo failed 5 times within 60 s. Last: EXIT: runnable task stall";
    let mut d = DaemonProperties::from_props(&props("running", reason));
    d.apply(&HashMap::from([(
        "ProfileReason".to_owned(),
        v(Value::from("fallback")),
    )]));
    let view = d.status_view();
    assert_eq!(view.style, "warning");
    assert_eq!(view.action, Some(Action::Stop));
    assert!(view.title.contains("fallback"), "{view:?}");
    assert!(view.description.contains("Low power"), "{view:?}");
    assert_eq!(view.details, reason);
    // A choice afterwards ends it.
    d.apply(&HashMap::from([(
        "ProfileReason".to_owned(),
        v(Value::from("user")),
    )]));
    assert_eq!(d.status_view().style, "success");
}

#[test]
fn the_foreground_app_shows_with_whether_the_profile_favours_it() {
    let mut d = DaemonProperties::from_props(&props("running", ""));
    assert_eq!(d.status_view().foreground, "");
    d.apply(&HashMap::from([
        (
            "ForegroundApp".to_owned(),
            v(Value::from("app-gnome-org.gnome.Calculator-1234.scope")),
        ),
        ("ForegroundBoost".to_owned(), v(Value::from(true))),
    ]));
    assert_eq!(
        d.status_view().foreground,
        "Foreground app: app-gnome-org.gnome.Calculator-1234.scope (favoured by this profile)"
    );
    d.apply(&HashMap::from([(
        "ForegroundBoost".to_owned(),
        v(Value::from(false)),
    )]));
    assert!(d
        .status_view()
        .foreground
        .ends_with("(not favoured by this profile)"));
}
