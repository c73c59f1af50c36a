//! Automatic profiles against doubles of UPower and power-profiles-daemon (python-dbusmock),
//! and per-application holds.

mod common;

use std::time::{Duration, Instant};

use common::*;
use futures_util::StreamExt;
use gearshift_testbus::{PPD, PPD_LEGACY, UPOWER};

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

/// Waits until Profile/ProfileReason are `want`; returns how long it took.
async fn until(proxy: &Scheduler1Proxy<'_>, want: (String, String)) -> Duration {
    let t0 = Instant::now();
    eventually(&format!("{want:?}"), SECS_10, || async {
        now(proxy).await == want
    })
    .await;
    t0.elapsed()
}

fn plug(bus: &TestBus, on_battery: bool) {
    bus.set_property(
        UPOWER,
        "OnBattery",
        "b",
        if on_battery { "true" } else { "false" },
    );
}

async fn with_upower() -> World {
    let mut w = default_world().await;
    w.bus.start_template("upower", UPOWER.0);
    w.proxy.start().await.unwrap();
    w
}

#[tokio::test]
async fn unplug_switches_to_the_battery_profile_and_replug_restores() {
    let w = with_upower().await;
    w.proxy.set_profile("fifo").await.unwrap();
    w.proxy.set_auto_power_source(true).await.unwrap();
    plug(&w.bus, true);
    let took = until(&w.proxy, is("low-power", "battery")).await;
    assert!(took < Duration::from_secs(1), "took {took:?}");
    assert!(w.proxy.on_battery().await.unwrap());
    // The running scheduler got it.
    let requests = w.daemon.double.requests().join("\n");
    assert!(requests.contains(r#""mode": "low-power""#), "{requests}");
    plug(&w.bus, false);
    let took = until(&w.proxy, is("fifo", "user")).await;
    assert!(took < Duration::from_secs(1), "took {took:?}");
}

#[tokio::test]
async fn with_the_rule_off_unplugging_changes_nothing() {
    let w = with_upower().await;
    w.proxy.set_profile("fifo").await.unwrap();
    plug(&w.bus, true);
    eventually("OnBattery", SECS_10, || async {
        w.proxy.on_battery().await.unwrap()
    })
    .await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(now(&w.proxy).await, is("fifo", "user"));
}

#[tokio::test]
async fn turning_the_rule_on_while_on_battery_applies_it() {
    let w = with_upower().await;
    plug(&w.bus, true);
    eventually("OnBattery", SECS_10, || async {
        w.proxy.on_battery().await.unwrap()
    })
    .await;
    w.proxy.set_auto_power_source(true).await.unwrap();
    until(&w.proxy, is("low-power", "battery")).await;
}

#[tokio::test]
async fn legacy_power_profiles_daemon_is_followed() {
    let mut w = default_world().await;
    w.bus.start_template("power_profiles_daemon", PPD_LEGACY.0);
    w.proxy.set_follow_power_profile(true).await.unwrap();
    // The template starts in "balanced": turning the rule on applies it.
    until(&w.proxy, is("interactive", "power-profile")).await;
    assert_eq!(w.proxy.power_profile().await.unwrap(), "balanced");
    w.bus
        .set_property(PPD_LEGACY, "ActiveProfile", "s", "power-saver");
    until(&w.proxy, is("low-power", "power-profile")).await;
    // The user's choice stands until the next change of power mode.
    w.proxy.set_profile("fifo").await.unwrap();
    assert_eq!(now(&w.proxy).await, is("fifo", "user"));
    w.bus
        .set_property(PPD_LEGACY, "ActiveProfile", "s", "performance");
    until(&w.proxy, is("interactive", "power-profile")).await;
}

#[tokio::test]
async fn power_profiles_daemon_starting_later_and_leaving() {
    let mut w = default_world().await;
    w.proxy.set_follow_power_profile(true).await.unwrap();
    assert_eq!(w.proxy.power_profile().await.unwrap(), "");
    // Appears after the daemon, under its current name.
    w.bus.start_mock(PPD.0, PPD.1, PPD.2);
    w.bus
        .mock_add_property(PPD, "ActiveProfile", "s", "power-saver");
    w.bus.set_property(PPD, "ActiveProfile", "s", "power-saver");
    until(&w.proxy, is("low-power", "power-profile")).await;
    // The legacy name too: the current name wins.
    w.bus.start_template("power_profiles_daemon", PPD_LEGACY.0);
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(w.proxy.power_profile().await.unwrap(), "power-saver");
    assert_eq!(now(&w.proxy).await, is("low-power", "power-profile"));
    // Both leave: the profile stays.
    w.bus.stop_double(PPD.0);
    w.bus.stop_double(PPD_LEGACY.0);
    eventually("PowerProfile cleared", SECS_10, || async {
        w.proxy.power_profile().await.unwrap().is_empty()
    })
    .await;
    assert_eq!(now(&w.proxy).await, is("low-power", "power-profile"));
}

#[tokio::test]
async fn with_following_off_power_mode_changes_nothing() {
    let mut w = default_world().await;
    w.bus.start_template("power_profiles_daemon", PPD_LEGACY.0);
    w.bus
        .set_property(PPD_LEGACY, "ActiveProfile", "s", "power-saver");
    eventually("PowerProfile", SECS_10, || async {
        w.proxy.power_profile().await.unwrap() == "power-saver"
    })
    .await;
    assert_eq!(now(&w.proxy).await, is("interactive", "default"));
}

async fn holder(bus: &TestBus) -> (zbus::Connection, Scheduler1Proxy<'static>) {
    let conn = bus.connect().await;
    let proxy = Scheduler1Proxy::builder(&conn)
        .cache_properties(zbus::proxy::CacheProperties::No)
        .build()
        .await
        .unwrap();
    (conn, proxy)
}

#[tokio::test]
async fn holds_stack_and_release_in_any_order() {
    let w = default_world().await;
    w.proxy.start().await.unwrap();
    let mut released = w.proxy.receive_profile_released().await.unwrap();
    let (_a, game) = holder(&w.bus).await;
    let (_b, audio) = holder(&w.bus).await;
    let first = game
        .hold_profile("throughput", "building", "org.example.Builder")
        .await
        .unwrap();
    assert_eq!(now(&w.proxy).await, is("throughput", "hold"));
    let second = audio
        .hold_profile("fifo", "recording", "org.example.Recorder")
        .await
        .unwrap();
    assert_eq!(now(&w.proxy).await, is("fifo", "hold"));
    let holds = w.proxy.active_holds().await.unwrap();
    assert_eq!(holds.len(), 2);
    // Only the holder may release.
    assert!(matches!(
        game.release_profile(second).await,
        Err(Error::InvalidArgs(_))
    ));
    game.release_profile(first).await.unwrap();
    assert_eq!(now(&w.proxy).await, is("fifo", "hold"));
    let signal = tokio::time::timeout(SECS_10, released.next())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(*signal.args().unwrap().cookie(), first);
    audio.release_profile(second).await.unwrap();
    assert_eq!(now(&w.proxy).await, is("interactive", "default"));
    assert!(w.proxy.active_holds().await.unwrap().is_empty());
}

#[tokio::test]
async fn a_holder_that_dies_releases_its_hold() {
    let w = default_world().await;
    let mut released = w.proxy.receive_profile_released().await.unwrap();
    // A separate process holds, then is killed.
    let mut script = std::process::Command::new("/usr/bin/python3");
    script
        .arg("-c")
        .arg(
            "import dbus, sys, time\n\
             p = dbus.SystemBus().get_object('io.github.gearshift.Scheduler1', '/io/github/gearshift/Scheduler1')\n\
             c = p.HoldProfile('low-power', 'test', 'org.example.Game', dbus_interface='io.github.gearshift.Scheduler1')\n\
             print(c, flush=True)\n\
             time.sleep(600)\n",
        )
        .stdout(std::process::Stdio::piped());
    let mut child = w.bus.env(&mut script).spawn().unwrap();
    eventually("the hold", SECS_10, || async {
        w.proxy.profile_reason().await.unwrap() == "hold"
    })
    .await;
    assert_eq!(w.proxy.profile().await.unwrap(), "low-power");
    child.kill().unwrap();
    child.wait().unwrap();
    until(&w.proxy, is("interactive", "default")).await;
    tokio::time::timeout(SECS_10, released.next())
        .await
        .expect("ProfileReleased")
        .unwrap();
}

#[tokio::test]
async fn holds_are_checked() {
    let w = default_world().await;
    let (_c, game) = holder(&w.bus).await;
    match game.hold_profile("turbo", "x", "org.example.Game").await {
        Err(Error::InvalidProfile(msg)) => assert!(msg.contains("turbo"), "{msg}"),
        other => panic!("expected InvalidProfile, got {other:?}"),
    }
    let long = "x".repeat(300);
    assert!(matches!(
        game.hold_profile("fifo", &long, "org.example.Game").await,
        Err(Error::InvalidArgs(_))
    ));
    // Unprivileged callers need switch-profile.
    match w
        .bus
        .call_as(Some(NOBODY), "HoldProfile", "sss", r#"["fifo", "x", "y"]"#)
    {
        Err((name, _)) => assert_eq!(name, "org.freedesktop.DBus.Error.AccessDenied"),
        other => panic!("expected AccessDenied, got {other:?}"),
    }
    assert!(w.proxy.active_holds().await.unwrap().is_empty());
}

#[tokio::test]
async fn precedence_hold_over_battery_and_the_user_over_holds() {
    let w = with_upower().await;
    w.proxy.set_auto_power_source(true).await.unwrap();
    let (_c, game) = holder(&w.bus).await;
    let cookie = game
        .hold_profile("fifo", "game", "org.example.Game")
        .await
        .unwrap();
    // Unplugging under a hold: the hold stays in effect.
    plug(&w.bus, true);
    eventually("OnBattery", SECS_10, || async {
        w.proxy.on_battery().await.unwrap()
    })
    .await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(now(&w.proxy).await, is("fifo", "hold"));
    // Releasing it uncovers the battery rule's choice.
    game.release_profile(cookie).await.unwrap();
    assert_eq!(now(&w.proxy).await, is("low-power", "battery"));
    // A new hold, then the user's explicit choice: the user wins and the hold is released.
    let mut released = w.proxy.receive_profile_released().await.unwrap();
    let cookie = game
        .hold_profile("fifo", "game", "org.example.Game")
        .await
        .unwrap();
    w.proxy.set_profile("throughput").await.unwrap();
    assert_eq!(now(&w.proxy).await, is("throughput", "user"));
    let signal = tokio::time::timeout(SECS_10, released.next())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(*signal.args().unwrap().cookie(), cookie);
    // Replug: the user's choice stands (it came after the unplug).
    plug(&w.bus, false);
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(now(&w.proxy).await, is("throughput", "user"));
}

#[tokio::test]
async fn the_battery_rule_applies_at_start_when_already_unplugged() {
    let mut w = with_upower().await;
    w.proxy.set_auto_power_source(true).await.unwrap();
    plug(&w.bus, true);
    until(&w.proxy, is("low-power", "battery")).await;
    plug(&w.bus, false);
    until(&w.proxy, is("interactive", "default")).await;
    // Restart the daemon while unplugged: the first reading is the event.
    w.daemon.stop();
    plug(&w.bus, true);
    w.daemon.restart();
    until(&w.proxy, is("low-power", "battery")).await;
}
