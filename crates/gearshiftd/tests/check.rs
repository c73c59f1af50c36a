//! The responsiveness check (StartCheck) with the scheduler double: it measures the default
//! scheduler and each profile, puts back what it found (also when cancelled, when its client
//! leaves and after a crash), refuses bad input and unauthorized callers, and keeps its
//! report across restarts.

mod common;

use std::collections::HashMap;
use std::time::Duration;

use common::*;
use futures_util::StreamExt;
use gearshift_dbus::check::DEFAULT_SCHEDULER;
use gearshift_dbus::{CheckOptions, CheckReport, ACTION_MANAGE};
use gearshift_testbus::UPOWER;
use zbus::zvariant::OwnedValue;

fn options(profiles: &[&str], seconds: u32) -> HashMap<String, OwnedValue> {
    CheckOptions {
        profiles: profiles.iter().map(|p| (*p).to_owned()).collect(),
        seconds,
        allow_battery: false,
    }
    .to_dict()
}

/// A proxy on a new connection (the daemon was restarted) that reads fresh values.
async fn uncached_proxy(bus: &TestBus) -> Scheduler1Proxy<'static> {
    Scheduler1Proxy::builder(&bus.connect().await)
        .cache_properties(zbus::proxy::CacheProperties::No)
        .build()
        .await
        .expect("proxy")
}

async fn last_report(proxy: &Scheduler1Proxy<'_>) -> Option<CheckReport> {
    CheckReport::from_dict(&proxy.last_check().await.expect("LastCheck"))
}

/// Waits for CheckFinished on `finished`; its (completed, message).
async fn finished(
    signals: &mut (impl futures_util::Stream<Item = gearshift_dbus::proxy::CheckFinished> + Unpin),
) -> (bool, String) {
    let signal = tokio::time::timeout(Duration::from_secs(90), signals.next())
        .await
        .expect("CheckFinished in time")
        .expect("signal stream");
    let args = signal.args().expect("args");
    (*args.completed(), args.message().clone())
}

#[tokio::test]
async fn a_check_measures_the_default_then_each_profile_and_puts_back_what_ran() {
    let mut w = default_world().await;
    w.proxy.start().await.unwrap();
    w.proxy.set_profile("fifo").await.unwrap();
    let mut progress = w.proxy.receive_check_progress().await.unwrap();
    let mut ends = w.proxy.receive_check_finished().await.unwrap();

    w.proxy
        .start_check(options(&["low-power", "interactive"], 3))
        .await
        .expect("StartCheck");
    assert!(w.proxy.check_running().await.unwrap());
    // Nobody else switches the scheduler under its feet, and there is one check at a time.
    match w.proxy.stop().await {
        Err(Error::Failed(m)) => assert!(m.contains("responsiveness check"), "{m}"),
        other => panic!("Stop during a check: {other:?}"),
    }
    assert!(matches!(
        w.proxy.start_check(options(&[], 3)).await,
        Err(Error::LimitExceeded(_))
    ));

    let (completed, message) = finished(&mut ends).await;
    assert!(completed, "{message}");
    let report = last_report(&w.proxy).await.expect("LastCheck");
    let names: Vec<&str> = report
        .results
        .iter()
        .map(|r| r.scheduler.as_str())
        .collect();
    assert_eq!(names, [DEFAULT_SCHEDULER, "low-power", "interactive"]);
    assert_eq!(report.seconds, 3);
    for r in &report.results {
        assert_eq!(r.expected, 179, "3 s of 16.667 ms periods: {r:?}");
        assert!(
            r.on_time <= r.expected && r.wakeup_p50_us <= r.wakeup_p99_us,
            "{r:?}"
        );
        assert!(r.load_per_s > 0.0, "{r:?}");
    }
    // The profiles ran in the scheduler, through holds that are gone now: the first started
    // it (after the default scheduler's turn), the second switched it live.
    let args = w.daemon.double.args();
    assert!(
        args.windows(2).any(|a| a == ["--mode", "low-power"]),
        "{args:?}"
    );
    let requests = w.daemon.double.requests().join("\n");
    assert!(requests.contains(r#""mode": "interactive""#), "{requests}");
    // What ran before runs again: the scheduler, with the user's profile.
    assert_eq!(state(&w.proxy).await, "running");
    assert_eq!(w.proxy.profile().await.unwrap(), "fifo");
    assert!(w.proxy.active_holds().await.unwrap().is_empty());
    assert!(!w.proxy.check_running().await.unwrap());

    // Progress covered every scheduler, in order, within 0–1.
    let mut seen = Vec::new();
    while let Ok(Some(p)) = tokio::time::timeout(Duration::from_millis(100), progress.next()).await
    {
        let args = p.args().unwrap();
        assert!((0.0..=1.0).contains(args.fraction()), "{}", args.fraction());
        seen.push((*args.fraction(), args.scheduler().clone()));
    }
    assert!(seen.windows(2).all(|w| w[0].0 <= w[1].0), "{seen:?}");
    for name in [DEFAULT_SCHEDULER, "low-power", "interactive"] {
        assert!(seen.iter().any(|(_, s)| s == name), "{name} in {seen:?}");
    }

    // The report outlives the daemon.
    w.daemon.restart();
    let proxy = uncached_proxy(&w.bus).await;
    eventually("the daemon back", SECS_10, || async {
        proxy.version().await.is_ok()
    })
    .await;
    assert_eq!(last_report(&proxy).await, Some(report));
}

#[tokio::test]
async fn a_client_that_leaves_cancels_its_check_and_the_stopped_scheduler_stays_stopped() {
    let w = default_world().await;
    let mut ends = w.proxy.receive_check_finished().await.unwrap();
    let other = w.bus.connect().await;
    let client = Scheduler1Proxy::new(&other).await.unwrap();
    client
        .start_check(options(&["interactive"], 60))
        .await
        .expect("StartCheck");
    tokio::time::sleep(Duration::from_secs(2)).await;
    drop(client);
    drop(other);
    let (completed, message) = finished(&mut ends).await;
    assert!(!completed);
    assert!(message.contains("cancelled"), "{message}");
    assert_eq!(state(&w.proxy).await, "stopped");
    assert!(w.proxy.active_holds().await.unwrap().is_empty());
    assert_eq!(
        last_report(&w.proxy).await,
        None,
        "a cancelled check reports nothing"
    );
}

#[tokio::test]
async fn cancel_check_ends_it_and_the_running_scheduler_runs_again() {
    let w = default_world().await;
    w.proxy.start().await.unwrap();
    let mut ends = w.proxy.receive_check_finished().await.unwrap();
    w.proxy
        .start_check(options(&["low-power"], 60))
        .await
        .unwrap();
    // Under way: the default scheduler is being measured.
    wait_state(&w.proxy, "stopped", SECS_10).await;
    let reason = w.proxy.state_reason().await.unwrap();
    assert!(reason.contains("Responsiveness check"), "{reason}");
    w.proxy.cancel_check().await.expect("CancelCheck");
    let (completed, _) = finished(&mut ends).await;
    assert!(!completed);
    assert_eq!(state(&w.proxy).await, "running");
    assert_eq!(w.proxy.profile().await.unwrap(), "interactive");
    assert!(
        matches!(w.proxy.cancel_check().await, Err(Error::Failed(_))),
        "nothing left to cancel"
    );
}

#[tokio::test]
async fn a_daemon_killed_mid_check_starts_the_scheduler_that_ran_before() {
    let mut w = default_world().await;
    w.proxy.start().await.unwrap();
    w.proxy
        .start_check(options(&["low-power"], 60))
        .await
        .unwrap();
    wait_state(&w.proxy, "stopped", SECS_10).await;
    w.daemon.crash();
    // autostart is off in this config: only the interrupted check starts it.
    w.daemon.restart();
    let proxy = uncached_proxy(&w.bus).await;
    wait_state(&proxy, "running", SECS_10).await;
    assert!(!proxy.check_running().await.unwrap());
    assert!(!w.daemon.state_dir().join("check-in-progress.json").exists());
}

#[tokio::test]
async fn bad_options_and_unauthorized_callers_change_nothing() {
    let w = default_world().await;
    w.proxy.start().await.unwrap();
    let invalid = |r: Result<(), Error>| match r {
        Err(Error::InvalidArgs(m)) => m,
        other => panic!("expected InvalidArgs, got {other:?}"),
    };
    let m = invalid(w.proxy.start_check(options(&[], 1)).await);
    assert!(m.contains("from 3 to 120"), "{m}");
    let mut odd = options(&[], 5);
    odd.insert("colour".into(), OwnedValue::from(1u32));
    assert!(invalid(w.proxy.start_check(odd).await).contains("unknown option"));
    assert!(matches!(
        w.proxy.start_check(options(&["nope"], 5)).await,
        Err(Error::InvalidProfile(_))
    ));
    let msg = denied(w.bus.call_as(Some(NOBODY), "StartCheck", "a{sv}", "[{}]"));
    assert!(msg.contains(ACTION_MANAGE), "{msg}");
    denied(w.bus.call_as(Some(NOBODY), "CancelCheck", "", "[]"));
    assert!(!w.proxy.check_running().await.unwrap());
    assert_eq!(state(&w.proxy).await, "running");
    assert!(w.proxy.active_holds().await.unwrap().is_empty());
}

#[tokio::test]
async fn on_battery_a_check_needs_to_be_allowed() {
    let mut w = default_world().await;
    w.bus.start_template("upower", UPOWER.0);
    w.bus.set_property(UPOWER, "OnBattery", "b", "true");
    eventually("OnBattery", SECS_10, || async {
        w.proxy.on_battery().await.unwrap()
    })
    .await;
    match w.proxy.start_check(options(&["interactive"], 3)).await {
        Err(Error::Failed(m)) => assert!(m.contains("battery"), "{m}"),
        other => panic!("expected a refusal on battery, got {other:?}"),
    }
    assert!(!w.proxy.check_running().await.unwrap());
    let mut allowed = options(&["interactive"], 30);
    allowed.insert("allow_battery".into(), OwnedValue::from(true));
    let mut ends = w.proxy.receive_check_finished().await.unwrap();
    w.proxy
        .start_check(allowed)
        .await
        .expect("allowed on battery");
    w.proxy.cancel_check().await.unwrap();
    assert!(!finished(&mut ends).await.0);
}
