//! Who may do what: root always, others as polkit (its double) says; denied calls change
//! nothing.

mod common;

use common::*;
use gearshift_dbus::{ACTION_MANAGE, ACTION_SWITCH_PROFILE};

#[tokio::test]
async fn unprivileged_callers_need_polkit() {
    let w = default_world().await;
    w.proxy.start().await.unwrap();
    let nobody = Some(NOBODY);
    // polkit's double allows nothing yet.
    let msg = denied(w.bus.call_as(nobody, "SetProfile", "s", r#"["low-power"]"#));
    assert!(msg.contains(ACTION_SWITCH_PROFILE), "{msg}");
    denied(w.bus.call_as(nobody, "SetMode", "s", r#"["fifo"]"#));
    denied(w.bus.set_property_as(nobody, "Preemption", "false"));
    denied(w.bus.set_property_as(nobody, "Profile", r#""fifo""#));
    for method in ["Start", "Stop", "Restart"] {
        let msg = denied(w.bus.call_as(nobody, method, "", "[]"));
        assert!(msg.contains(ACTION_MANAGE), "{msg}");
    }
    denied(w.bus.set_property_as(nobody, "AutoPowerSource", "true"));
    denied(w.bus.set_property_as(nobody, "FollowPowerProfile", "true"));
    // Nothing changed.
    assert_eq!(state(&w.proxy).await, "running");
    assert_eq!(w.proxy.profile().await.unwrap(), "interactive");
    assert!(w.proxy.preemption().await.unwrap());
    assert!(!w.proxy.auto_power_source().await.unwrap());

    // Reading needs no authorization.
    w.bus
        .call_as(nobody, "GetStats", "", "[]")
        .expect("GetStats as nobody");
    let cookie = w
        .bus
        .call_as(nobody, "SubscribeStats", "u", "[1000]")
        .expect("SubscribeStats as nobody");
    assert!(cookie.parse::<u32>().is_ok_and(|c| c > 0), "{cookie}");

    // The active session's switch-profile grant (what polkit gives by default) suffices for
    // profiles, not for managing the service.
    w.bus.polkit_allow(&[ACTION_SWITCH_PROFILE]);
    w.bus
        .call_as(nobody, "SetProfile", "s", r#"["low-power"]"#)
        .expect("SetProfile with switch-profile granted");
    assert_eq!(w.proxy.profile().await.unwrap(), "low-power");
    w.bus
        .set_property_as(nobody, "Preemption", "true")
        .expect("Preemption with switch-profile granted");
    denied(w.bus.call_as(nobody, "Stop", "", "[]"));
    assert_eq!(state(&w.proxy).await, "running");

    w.bus.polkit_allow(&[ACTION_MANAGE]);
    w.bus
        .call_as(nobody, "Stop", "", "[]")
        .expect("Stop with manage granted");
    assert_eq!(state(&w.proxy).await, "stopped");
}

#[tokio::test]
async fn root_needs_no_polkit() {
    // No polkit on this bus at all: root is still allowed, others are refused.
    let bus = TestBus::start();
    let _daemon = DaemonUnderTest::start(&bus, Setup::default());
    bus.call_as(None, "Start", "", "[]")
        .expect("root may Start");
    bus.call_as(None, "SetProfile", "s", r#"["fifo"]"#)
        .expect("root may SetProfile");
    let msg = denied(bus.call_as(Some(NOBODY), "SetProfile", "s", r#"["interactive"]"#));
    assert!(msg.contains("polkit"), "{msg}");
}

#[tokio::test]
async fn unknown_profile_from_an_authorized_caller_is_invalid_not_denied() {
    let w = default_world().await;
    w.bus.polkit_allow(&[ACTION_SWITCH_PROFILE]);
    match w
        .bus
        .call_as(Some(NOBODY), "SetProfile", "s", r#"["turbo"]"#)
    {
        Err((name, _)) => assert_eq!(name, "io.github.gearshift.Error.InvalidProfile"),
        other => panic!("expected InvalidProfile, got {other:?}"),
    }
    match w.bus.set_property_as(Some(NOBODY), "Profile", r#""turbo""#) {
        Err((name, _)) => assert_eq!(name, "org.freedesktop.DBus.Error.InvalidArgs"),
        other => panic!("expected InvalidArgs, got {other:?}"),
    }
}
