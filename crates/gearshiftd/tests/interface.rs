//! The interface against its contract and its behaviour with a running scheduler (double).

mod common;

use std::time::Duration;

use common::*;
use futures_util::StreamExt;
use gearshift_dbus::model::stats_from_dict;
use gearshift_dbus::{ProfileInfo, INTERFACE, OBJECT_PATH};
use gearshift_types::Mode;

#[tokio::test]
async fn live_introspection_matches_the_contract() {
    let w = default_world().await;
    let live = introspect(&w.conn, gearshift_dbus::BUS_NAME, OBJECT_PATH)
        .await
        .unwrap();
    let contract = shape(gearshift_dbus::INTROSPECTION_XML, INTERFACE);
    let served = shape(&live, INTERFACE);
    assert!(contract.len() >= 20, "contract parsed to {contract:?}");
    assert_eq!(served, contract);
}

#[tokio::test]
async fn start_switch_stop() {
    let w = default_world().await;
    assert_eq!(state(&w.proxy).await, "stopped");
    assert_eq!(w.proxy.profile().await.unwrap(), "interactive");
    let mut profile_changes = w.proxy.receive_profile_changed().await;

    w.proxy.start().await.expect("Start");
    assert_eq!(state(&w.proxy).await, "running");
    let args = w.daemon.double.args();
    assert!(
        args.windows(2).any(|a| a == ["--mode", "interactive"]),
        "{args:?}"
    );

    w.proxy.set_profile("low-power").await.expect("SetProfile");
    assert_eq!(w.proxy.mode().await.unwrap(), "low-power");
    assert!(!w.proxy.preemption().await.unwrap());
    let requests = w.daemon.double.requests().join("\n");
    assert!(requests.contains(r#""mode": "low-power""#), "{requests}");
    // The change was announced.
    tokio::time::timeout(Duration::from_secs(5), async {
        while let Some(change) = profile_changes.next().await {
            if change.get().await.unwrap() == "low-power" {
                break;
            }
        }
    })
    .await
    .expect("PropertiesChanged for Profile");

    let stats = stats_from_dict(&w.proxy.get_stats().await.expect("GetStats"));
    assert_eq!(stats.mode, Mode::LowPower);

    w.proxy.stop().await.expect("Stop");
    assert_eq!(state(&w.proxy).await, "stopped");
    assert!(matches!(
        w.proxy.get_stats().await,
        Err(Error::NotRunning(_))
    ));
}

#[tokio::test]
async fn mode_and_preemption_pick_the_matching_profile_or_custom() {
    let w = default_world().await;
    w.proxy.start().await.unwrap();
    // interactive + no preemption is the "throughput" profile.
    w.proxy.set_preemption(false).await.unwrap();
    assert_eq!(w.proxy.profile().await.unwrap(), "throughput");
    // low-power without preemption is "low-power".
    w.proxy.set_mode("low-power").await.unwrap();
    assert_eq!(w.proxy.profile().await.unwrap(), "low-power");
    // low-power with preemption is no profile.
    w.proxy.set_preemption(true).await.unwrap();
    assert_eq!(w.proxy.profile().await.unwrap(), "custom");
    assert_eq!(w.proxy.mode().await.unwrap(), "low-power");
    let stats = stats_from_dict(&w.proxy.get_stats().await.unwrap());
    assert_eq!((stats.mode, stats.preemption), (Mode::LowPower, true));
}

#[tokio::test]
async fn profiles_property_lists_the_configured_profiles() {
    let w = default_world().await;
    let profiles: Vec<ProfileInfo> = w
        .proxy
        .profiles()
        .await
        .unwrap()
        .iter()
        .map(|d| ProfileInfo::from_dict(d).expect("well-formed profile"))
        .collect();
    let names: Vec<&str> = profiles.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, ["interactive", "throughput", "low-power", "fifo"]);
    assert!(profiles.iter().all(|p| !p.description.is_empty()));
    assert!(w.proxy.sched_ext_supported().await.unwrap());
    assert_eq!(w.proxy.version().await.unwrap(), env!("CARGO_PKG_VERSION"));
}

#[tokio::test]
async fn bad_values_are_refused_and_change_nothing() {
    let w = default_world().await;
    w.proxy.start().await.unwrap();
    let before = w.daemon.double.requests().len();
    match w.proxy.set_profile("turbo").await {
        Err(Error::InvalidProfile(msg)) => assert!(msg.contains("low-power"), "{msg}"),
        other => panic!("expected InvalidProfile, got {other:?}"),
    }
    match w.proxy.set_mode("turbo").await {
        Err(Error::InvalidMode(msg)) => assert!(msg.contains("interactive"), "{msg}"),
        other => panic!("expected InvalidMode, got {other:?}"),
    }
    assert_eq!(w.proxy.profile().await.unwrap(), "interactive");
    assert_eq!(w.proxy.mode().await.unwrap(), "interactive");
    assert_eq!(
        w.daemon.double.requests().len(),
        before,
        "nothing reached the scheduler"
    );
}

#[tokio::test]
async fn a_change_the_scheduler_refuses_changes_nothing() {
    let w = default_world().await;
    w.proxy.start().await.unwrap();
    w.daemon.double.set("refuse");
    assert!(matches!(
        w.proxy.set_profile("low-power").await,
        Err(Error::Failed(_))
    ));
    assert_eq!(w.proxy.profile().await.unwrap(), "interactive");
    assert_eq!(w.proxy.mode().await.unwrap(), "interactive");
}

#[tokio::test]
async fn a_choice_made_while_stopped_is_used_at_start() {
    let w = default_world().await;
    w.proxy
        .set_profile("fifo")
        .await
        .expect("allowed while stopped");
    assert_eq!(w.proxy.mode().await.unwrap(), "fifo");
    w.proxy.start().await.unwrap();
    let args = w.daemon.double.args();
    assert!(args.windows(2).any(|a| a == ["--mode", "fifo"]), "{args:?}");
}
