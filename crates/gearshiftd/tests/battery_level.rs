//! The battery level against UPower's double (python-dbusmock): the low-battery profile below
//! `[auto] low_battery_percent` with its hysteresis, the AC profile, the user's choice on low
//! battery, and a config with an out-of-range threshold.

mod common;

use std::time::Duration;

use common::*;
use futures_util::StreamExt;
use gearshift_testbus::{UPOWER, UPOWER_DISPLAY};

/// The scheduler double and quick timings, with `auto` as the [auto] table.
fn with_auto(auto: &str) -> Setup {
    let double =
        gearshift_testbus::repo_root().join("crates/gearshift-testbus/scheduler_double.py");
    Setup {
        config: Some(format!(
            "autostart = false\n[auto]\n{auto}\n[scheduler]\npath = {:?}\nstart_timeout_ms = 10000\n\
             [restart]\nmax_failures = 3\nwindow_s = 30\ninitial_backoff_ms = 200\nmax_backoff_ms = 800\n",
            double.display().to_string()
        )),
        ..Setup::default()
    }
}

/// Profile and ProfileReason, read fresh.
async fn now(proxy: &Scheduler1Proxy<'_>) -> (String, String) {
    (
        proxy.profile().await.unwrap(),
        proxy.profile_reason().await.unwrap(),
    )
}

fn is(profile: &str, reason: &str) -> (String, String) {
    (profile.to_owned(), reason.to_owned())
}

async fn until(proxy: &Scheduler1Proxy<'_>, want: (String, String)) {
    eventually(&format!("{want:?}"), SECS_10, || async {
        now(proxy).await == want
    })
    .await;
}

/// Nothing changes for a while (an event that must not count).
async fn stays(proxy: &Scheduler1Proxy<'_>, want: (String, String)) {
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(now(proxy).await, want);
}

fn plug(bus: &TestBus, on_battery: bool) {
    let value = if on_battery { "true" } else { "false" };
    bus.set_property(UPOWER, "OnBattery", "b", value);
}

fn charge(bus: &TestBus, percent: f64) {
    bus.set_property(UPOWER_DISPLAY, "Percentage", "d", &percent.to_string());
}

/// gearshiftd with `auto`, UPower's double on AC at 50 %, the scheduler running and the
/// battery rule on.
async fn on_ac_at_half(auto: &str) -> World {
    let mut w = world(with_auto(auto)).await;
    w.bus.start_template("upower", UPOWER.0);
    charge(&w.bus, 50.0);
    w.proxy.start().await.unwrap();
    w.proxy.set_auto_power_source(true).await.unwrap();
    w
}

/// The next ProfileReason announced in PropertiesChanged.
async fn next_reason(changes: &mut zbus::fdo::PropertiesChangedStream) -> String {
    loop {
        let signal = tokio::time::timeout(SECS_10, changes.next())
            .await
            .expect("PropertiesChanged")
            .expect("signal stream");
        let args = signal.args().unwrap();
        if let Some(value) = args.changed_properties().get("ProfileReason") {
            return String::try_from(value.try_to_owned().unwrap()).unwrap();
        }
    }
}

#[tokio::test]
async fn discharging_below_the_threshold_switches_and_charging_back_returns() {
    let w = on_ac_at_half(
        "battery_profile = \"throughput\"\nac_profile = \"fifo\"\n\
         low_battery_percent = 20\nlow_battery_profile = \"low-power\"",
    )
    .await;
    // Turning the rule on while on AC with an AC profile is its event.
    until(&w.proxy, is("fifo", "ac")).await;
    let props = properties(&w.conn).await;
    let mut changes = props.receive_properties_changed().await.unwrap();

    plug(&w.bus, true);
    until(&w.proxy, is("throughput", "battery")).await;
    assert_eq!(next_reason(&mut changes).await, "battery");
    charge(&w.bus, 30.0);
    charge(&w.bus, 20.0);
    stays(&w.proxy, is("throughput", "battery")).await;
    // Below the threshold: property and signal.
    charge(&w.bus, 19.0);
    until(&w.proxy, is("low-power", "low-battery")).await;
    assert_eq!(next_reason(&mut changes).await, "low-battery");
    let requests = w.daemon.double.requests().join("\n");
    assert!(requests.contains(r#""mode": "low-power""#), "{requests}");
    // Within the hysteresis (threshold + 5) nothing changes; at it, the battery profile returns.
    charge(&w.bus, 22.0);
    charge(&w.bus, 24.5);
    stays(&w.proxy, is("low-power", "low-battery")).await;
    charge(&w.bus, 25.0);
    until(&w.proxy, is("throughput", "battery")).await;
    assert_eq!(next_reason(&mut changes).await, "battery");
    // Low again, then plugged in: the AC profile.
    charge(&w.bus, 12.0);
    until(&w.proxy, is("low-power", "low-battery")).await;
    plug(&w.bus, false);
    until(&w.proxy, is("fifo", "ac")).await;
    // On AC the charge no longer matters.
    charge(&w.bus, 8.0);
    stays(&w.proxy, is("fifo", "ac")).await;
}

#[tokio::test]
async fn a_user_choice_on_low_battery_stands_until_the_next_event() {
    let w = on_ac_at_half("low_battery_percent = 20").await;
    w.proxy.set_profile("throughput").await.unwrap();
    // Unplugged with the battery already low: straight to the low-battery profile.
    charge(&w.bus, 15.0);
    plug(&w.bus, true);
    until(&w.proxy, is("low-power", "low-battery")).await;
    // The user's choice stands: wobbling, recovering, falling within the hysteresis…
    w.proxy.set_profile("fifo").await.unwrap();
    assert_eq!(now(&w.proxy).await, is("fifo", "user"));
    for percent in [14.0, 18.0, 26.0, 21.0] {
        charge(&w.bus, percent);
    }
    stays(&w.proxy, is("fifo", "user")).await;
    // …until the next event: the charge falling below the threshold again.
    charge(&w.bus, 19.0);
    until(&w.proxy, is("low-power", "low-battery")).await;
    // Chosen again, then replugged without an AC profile: the choice still stands.
    w.proxy.set_profile("fifo").await.unwrap();
    plug(&w.bus, false);
    stays(&w.proxy, is("fifo", "user")).await;
}

#[tokio::test]
async fn replug_restores_what_low_battery_replaced_without_an_ac_profile() {
    let w = on_ac_at_half("low_battery_percent = 20").await;
    w.proxy.set_profile("throughput").await.unwrap();
    plug(&w.bus, true);
    until(&w.proxy, is("low-power", "battery")).await;
    charge(&w.bus, 10.0);
    until(&w.proxy, is("low-power", "low-battery")).await;
    plug(&w.bus, false);
    until(&w.proxy, is("throughput", "user")).await;
}

#[tokio::test]
async fn a_hold_beats_low_battery() {
    let w = on_ac_at_half("low_battery_percent = 20\nlow_battery_profile = \"fifo\"").await;
    let cookie = w
        .proxy
        .hold_profile("throughput", "build", "org.example.Builder")
        .await
        .unwrap();
    plug(&w.bus, true);
    charge(&w.bus, 10.0);
    stays(&w.proxy, is("throughput", "hold")).await;
    w.proxy.release_profile(cookie).await.unwrap();
    assert_eq!(now(&w.proxy).await, is("fifo", "low-battery"));
}

#[tokio::test]
async fn turning_the_rule_on_while_on_low_battery_applies_it() {
    let mut w = world(with_auto("low_battery_percent = 20")).await;
    w.bus.start_template("upower", UPOWER.0);
    charge(&w.bus, 10.0);
    plug(&w.bus, true);
    eventually("OnBattery", SECS_10, || async {
        w.proxy.on_battery().await.unwrap()
    })
    .await;
    stays(&w.proxy, is("interactive", "default")).await;
    w.proxy.set_auto_power_source(true).await.unwrap();
    until(&w.proxy, is("low-power", "low-battery")).await;
}

#[tokio::test]
async fn an_out_of_range_low_battery_percent_is_refused_and_the_defaults_apply() {
    let mut w = world(with_auto(
        "ac_profile = \"fifo\"\nlow_battery_percent = 150",
    ))
    .await;
    let log = w.daemon.log();
    assert!(
        log.contains("line 4")
            && log.contains("auto.low_battery_percent = 150 is out of range")
            && log.contains("1 to 99")
            && log.contains("using the defaults"),
        "{log}"
    );
    // Nothing of the file applies: no AC profile, no low-battery rule.
    w.bus.start_template("upower", UPOWER.0);
    w.proxy.set_auto_power_source(true).await.unwrap();
    charge(&w.bus, 10.0);
    plug(&w.bus, true);
    until(&w.proxy, is("low-power", "battery")).await;
    stays(&w.proxy, is("low-power", "battery")).await;
    plug(&w.bus, false);
    until(&w.proxy, is("interactive", "default")).await;
}
