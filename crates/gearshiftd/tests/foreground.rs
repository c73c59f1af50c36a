//! The app in front of the user: SetForeground checks the process, the scheduler (double)
//! favours its cgroup while the profile has foreground_boost, and bad input changes nothing.
//! procfs and cgroupfs are fake trees (DaemonUnderTest::fake_process): the CI host's real
//! cgroup layout is not ours to rely on.

mod common;

use common::*;
use futures_util::StreamExt;
use gearshift_dbus::{ACTION_SET_FOREGROUND, INTERFACE};

const CALCULATOR: &str = "app-gnome-org.gnome.Calculator-4242.scope";

fn calculator_path() -> String {
    format!("/user.slice/user-1000.slice/user@1000.service/app.slice/{CALCULATOR}")
}

/// The cgroup ids of the set-foreground requests the double received, in order.
fn favoured(w: &World) -> Vec<u64> {
    w.daemon
        .double
        .requests()
        .iter()
        .filter_map(|line| {
            let request: serde_json::Value = serde_json::from_str(line).ok()?;
            if request["request"] != "set-foreground" {
                return None;
            }
            request["cgroup_id"].as_u64()
        })
        .collect()
}

fn last_favoured(w: &World) -> Option<u64> {
    favoured(w).last().copied()
}

async fn foreground(w: &World) -> (String, bool) {
    (
        w.proxy.foreground_app().await.unwrap(),
        w.proxy.foreground_boost().await.unwrap(),
    )
}

fn invalid_process(result: gearshift_testbus::CallResult) -> String {
    match result {
        Err((name, message)) if name == "io.github.gearshift.Error.InvalidProcess" => message,
        other => panic!("expected InvalidProcess, got {other:?}"),
    }
}

#[tokio::test]
async fn the_foreground_app_is_favoured_and_follows_the_scheduler() {
    let w = default_world().await;
    let id = w.daemon.fake_process(4242, 1000, &calculator_path());
    let props = properties(&w.conn).await;
    let mut changes = props.receive_properties_changed().await.unwrap();

    // Named while stopped: remembered, told to the scheduler when it starts.
    w.proxy.set_foreground(4242).await.expect("SetForeground");
    assert_eq!(foreground(&w).await, (CALCULATOR.to_owned(), true));
    assert_eq!(last_favoured(&w), None, "nothing runs yet");
    tokio::time::timeout(SECS_10, async {
        while let Some(change) = changes.next().await {
            let args = change.args().unwrap();
            if args.interface_name() == INTERFACE
                && args.changed_properties().contains_key("ForegroundApp")
            {
                break;
            }
        }
    })
    .await
    .expect("PropertiesChanged for ForegroundApp");

    w.proxy.start().await.unwrap();
    assert_eq!(last_favoured(&w), Some(id));
    // Every start gets it again.
    w.proxy.restart().await.unwrap();
    assert_eq!(favoured(&w), [id, id]);
    // So does a re-attach the kernel asks for (CPU hotplug).
    let mut exits = w.proxy.receive_scheduler_exited().await.unwrap();
    w.daemon.double.set("hotplug");
    tokio::time::timeout(SECS_10, exits.next())
        .await
        .expect("SchedulerExited");
    wait_state(&w.proxy, "running", SECS_10).await;
    eventually(
        "the foreground again after the re-attach",
        SECS_10,
        || async { favoured(&w) == [id, id, id] },
    )
    .await;

    // A profile without the boost favours no one, and says so; back again, it does.
    w.proxy.set_profile("throughput").await.unwrap();
    assert_eq!(foreground(&w).await, (CALCULATOR.to_owned(), false));
    assert_eq!(last_favoured(&w), Some(0));
    w.proxy.set_profile("interactive").await.unwrap();
    assert_eq!(foreground(&w).await, (CALCULATOR.to_owned(), true));
    assert_eq!(last_favoured(&w), Some(id));

    // pid 0: the desktop has no app in front.
    w.proxy.set_foreground(0).await.expect("SetForeground(0)");
    assert_eq!(foreground(&w).await, (String::new(), true));
    assert_eq!(last_favoured(&w), Some(0));
}

#[tokio::test]
async fn a_profile_configured_without_the_boost_favours_no_one() {
    let w = world(with_restart_config(
        "autostart = false\ndefault_profile = \"calm\"\n\
         [[profile]]\nname = \"calm\"\nmode = \"interactive\"\nforeground_boost = false\n",
        10_000,
        "",
    ))
    .await;
    let id = w.daemon.fake_process(4242, 1000, &calculator_path());
    assert_ne!(id, 0);
    w.proxy.start().await.unwrap();
    w.proxy.set_foreground(4242).await.unwrap();
    assert_eq!(foreground(&w).await, (CALCULATOR.to_owned(), false));
    assert!(
        favoured(&w).iter().all(|&sent| sent == 0),
        "{:?}",
        favoured(&w)
    );
    let profiles = w.proxy.profiles().await.unwrap();
    let calm = gearshift_dbus::ProfileInfo::from_dict(&profiles[0]).expect("profile entry");
    assert!(!calm.foreground_boost);
}

#[tokio::test]
async fn the_foreground_ends_when_its_setter_leaves_the_bus() {
    let w = default_world().await;
    let id = w.daemon.fake_process(4242, 1000, &calculator_path());
    w.proxy.start().await.unwrap();
    let shell = w.bus.connect().await;
    gearshift_dbus::Scheduler1Proxy::new(&shell)
        .await
        .unwrap()
        .set_foreground(4242)
        .await
        .expect("SetForeground from the shell's connection");
    assert_eq!(foreground(&w).await.0, CALCULATOR);
    assert_eq!(last_favoured(&w), Some(id));
    drop(shell);
    eventually("the foreground to end", SECS_10, || async {
        w.proxy.foreground_app().await.unwrap().is_empty()
    })
    .await;
    // The model changes before the scheduler is told: the departure is no call to wait for.
    eventually("the scheduler to favour no one", SECS_10, || async {
        last_favoured(&w) == Some(0)
    })
    .await;
}

#[tokio::test]
async fn bad_foreground_calls_are_refused_and_change_nothing() {
    let w = default_world().await;
    let id = w.daemon.fake_process(4242, 1000, &calculator_path());
    w.daemon.fake_process(1, 0, "/init.scope");
    let own = w
        .daemon
        .fake_process(5000, NOBODY, "/user.slice/app-nobody-5000.scope");
    w.proxy.start().await.unwrap();
    w.proxy.set_foreground(4242).await.unwrap();
    let sent = favoured(&w).len();
    let nobody = Some(NOBODY);
    let unchanged = || async {
        assert_eq!(foreground(&w).await, (CALCULATOR.to_owned(), true));
        assert_eq!(favoured(&w).len(), sent, "nothing reached the scheduler");
    };

    // polkit says no (an inactive or remote session): refused before the pid is looked at.
    let msg = denied(w.bus.call_as(nobody, "SetForeground", "u", "[5000]"));
    assert!(msg.contains(ACTION_SET_FOREGROUND), "{msg}");
    unchanged().await;

    w.bus.polkit_allow(&[ACTION_SET_FOREGROUND]);
    let msg = invalid_process(w.bus.call_as(nobody, "SetForeground", "u", "[999999]"));
    assert!(msg.contains("no process 999999"), "{msg}");
    let msg = invalid_process(w.bus.call_as(nobody, "SetForeground", "u", "[1]"));
    assert!(msg.contains("another user"), "{msg}");
    unchanged().await;
    // Root names an unknown pid: no such process either.
    match w.proxy.set_foreground(999_999).await {
        Err(Error::InvalidProcess(msg)) => assert!(msg.contains("999999"), "{msg}"),
        other => panic!("expected InvalidProcess, got {other:?}"),
    }
    unchanged().await;

    // Its own process is fine; the caller (a short-lived process) then leaves the bus, which
    // ends its foreground.
    w.bus
        .call_as(nobody, "SetForeground", "u", "[5000]")
        .expect("SetForeground of its own process");
    eventually("the foreground to end with its caller", SECS_10, || async {
        w.proxy.foreground_app().await.unwrap().is_empty()
    })
    .await;
    eventually("the scheduler to favour no one", SECS_10, || async {
        favoured(&w)[sent..] == [own, 0]
    })
    .await;
    assert_ne!(own, id);
}
