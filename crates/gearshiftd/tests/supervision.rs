//! The scheduler process under supervision: crashes, restarts with backoff, giving up,
//! unsupported kernels, autostart and shutdown.

mod common;

use std::time::Duration;

use common::*;
use futures_util::StreamExt;

fn with_config(extra: &str) -> Setup {
    let double =
        gearshift_testbus::repo_root().join("crates/gearshift-testbus/scheduler_double.py");
    Setup {
        config: Some(format!(
            "{extra}\n[scheduler]\npath = {:?}\nstart_timeout_ms = 2000\n\
             [restart]\nmax_failures = 3\nwindow_s = 30\ninitial_backoff_ms = 200\nmax_backoff_ms = 800\n",
            double.display().to_string()
        )),
        ..Setup::default()
    }
}

#[tokio::test]
async fn a_crash_is_reported_and_the_scheduler_restarted() {
    let w = default_world().await;
    let mut exits = w.proxy.receive_scheduler_exited().await.unwrap();
    w.proxy.start().await.unwrap();
    let first = w.daemon.double.pid().expect("double pid");
    w.daemon.double.set("crash");
    let exit = tokio::time::timeout(SECS_10, exits.next())
        .await
        .expect("SchedulerExited")
        .expect("signal stream");
    let args = exit.args().unwrap();
    assert_eq!(
        args.reason(),
        "EXIT: runtime error (the double was told to crash)"
    );
    assert!(*args.will_restart());
    wait_state(&w.proxy, "running", SECS_10).await;
    assert_ne!(w.daemon.double.pid(), Some(first), "a new process runs");
}

#[tokio::test]
async fn kill_9_is_named_and_restarted() {
    let w = default_world().await;
    let mut exits = w.proxy.receive_scheduler_exited().await.unwrap();
    w.proxy.start().await.unwrap();
    let pid = w.daemon.double.pid().expect("pid");
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(pid),
        nix::sys::signal::Signal::SIGKILL,
    )
    .unwrap();
    let exit = tokio::time::timeout(SECS_10, exits.next())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        exit.args().unwrap().reason(),
        "the scheduler was killed by signal SIGKILL"
    );
    wait_state(&w.proxy, "running", SECS_10).await;
}

#[tokio::test]
async fn repeated_failures_end_in_failed_with_the_reason() {
    let w = default_world().await;
    let mut exits = w.proxy.receive_scheduler_exited().await.unwrap();
    w.daemon.double.set("fail-start");
    match w.proxy.start().await {
        Err(Error::Failed(msg)) => assert!(msg.contains("told to fail"), "{msg}"),
        other => panic!("expected Failed, got {other:?}"),
    }
    // Three failures (config: max_failures = 3): two with a restart, the last without.
    let mut will_restart = Vec::new();
    for _ in 0..3 {
        let exit = tokio::time::timeout(SECS_10, exits.next())
            .await
            .expect("SchedulerExited")
            .unwrap();
        will_restart.push(*exit.args().unwrap().will_restart());
    }
    assert_eq!(will_restart, [true, true, false]);
    wait_state(&w.proxy, "failed", SECS_10).await;
    let reason = w.proxy.state_reason().await.unwrap();
    assert!(
        reason.contains("3 failures") && reason.contains("told to fail"),
        "{reason}"
    );
    // It stays stopped: no more attempts.
    let pid = w.daemon.double.pid();
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert_eq!(w.daemon.double.pid(), pid);
    assert_eq!(state(&w.proxy).await, "failed");
    // An explicit start tries again.
    w.daemon.double.clear("fail-start");
    w.proxy.start().await.expect("Start after failed");
    assert_eq!(state(&w.proxy).await, "running");
}

#[tokio::test]
async fn a_scheduler_the_kernel_never_enables_times_out() {
    let w = world(with_config("autostart = false")).await;
    w.daemon.double.set("hang-start");
    match w.proxy.start().await {
        Err(Error::Failed(msg)) => assert!(msg.contains("did not enable"), "{msg}"),
        other => panic!("expected Failed, got {other:?}"),
    }
    w.proxy.stop().await.unwrap();
    assert_eq!(state(&w.proxy).await, "stopped");
}

#[tokio::test]
async fn no_sched_ext_means_unsupported_and_no_attempts() {
    let w = world(Setup {
        supported: false,
        config: Some("autostart = true\n".into()),
        ..Setup::default()
    })
    .await;
    assert_eq!(state(&w.proxy).await, "unsupported");
    assert!(!w.proxy.sched_ext_supported().await.unwrap());
    let reason = w.proxy.state_reason().await.unwrap();
    assert!(reason.contains("CONFIG_SCHED_CLASS_EXT"), "{reason}");
    match w.proxy.start().await {
        Err(Error::Unsupported(msg)) => assert!(msg.contains("sched_ext"), "{msg}"),
        other => panic!("expected Unsupported, got {other:?}"),
    }
    assert_eq!(w.daemon.double.pid(), None, "no scheduler was run");
    // Profiles can still be chosen, for when a kernel with sched_ext boots.
    w.proxy.set_profile("low-power").await.unwrap();
    assert_eq!(state(&w.proxy).await, "unsupported");
}

#[tokio::test]
async fn autostart_runs_the_saved_profile_and_shutdown_stops_it() {
    let mut w = world(with_config("autostart = true")).await;
    wait_state(&w.proxy, "running", SECS_10).await;
    w.proxy.set_profile("fifo").await.unwrap();
    let pid = w.daemon.double.pid().expect("pid");
    // systemd's stop: SIGTERM; the scheduler goes with the daemon.
    let status = w.daemon.stop().expect("daemon exit");
    assert!(status.success(), "{status}");
    assert!(
        nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), None).is_err(),
        "scheduler still alive"
    );
    // Back up: the saved profile is restored and autostarted.
    w.daemon.restart();
    wait_state(&w.proxy, "running", SECS_10).await;
    assert_eq!(w.proxy.profile().await.unwrap(), "fifo");
    let args = w.daemon.double.args();
    assert!(args.windows(2).any(|a| a == ["--mode", "fifo"]), "{args:?}");
}

#[tokio::test]
async fn a_daemon_crash_takes_the_scheduler_along() {
    let mut w = world(with_config("autostart = true")).await;
    wait_state(&w.proxy, "running", SECS_10).await;
    let pid = nix::unistd::Pid::from_raw(w.daemon.double.pid().expect("pid"));
    w.daemon.crash();
    let gone = (0..100).any(|_| {
        std::thread::sleep(Duration::from_millis(50));
        nix::sys::signal::kill(pid, None).is_err()
    });
    assert!(gone, "the scheduler outlived its supervisor");
}

#[tokio::test]
async fn a_restart_the_kernel_asks_for_is_reported_and_is_no_failure() {
    let w = default_world().await;
    let mut exits = w.proxy.receive_scheduler_exited().await.unwrap();
    let props = zbus::fdo::PropertiesProxy::builder(&w.conn)
        .destination(gearshift_dbus::BUS_NAME)
        .unwrap()
        .path(gearshift_dbus::OBJECT_PATH)
        .unwrap()
        .build()
        .await
        .unwrap();
    let mut changes = props.receive_properties_changed().await.unwrap();
    w.proxy.start().await.unwrap();
    let pid = w.daemon.double.pid();
    // More restarts than the failure limit (3 in the test config): none counts.
    for _ in 0..5 {
        w.daemon.double.set("hotplug");
        let exit = tokio::time::timeout(SECS_10, exits.next())
            .await
            .expect("SchedulerExited")
            .unwrap();
        let args = exit.args().unwrap();
        assert!(
            args.reason().contains("cpu 1 going offline"),
            "{}",
            args.reason()
        );
        assert!(*args.will_restart());
        wait_state(&w.proxy, "running", SECS_10).await;
    }
    // The state said why meanwhile.
    let mut seen = Vec::new();
    while let Ok(Some(change)) =
        tokio::time::timeout(Duration::from_millis(200), changes.next()).await
    {
        if let Some(reason) = change
            .args()
            .unwrap()
            .changed_properties()
            .get("StateReason")
        {
            seen.push(String::try_from(reason.try_to_owned().unwrap()).unwrap());
        }
    }
    assert!(
        seen.iter()
            .any(|r| r.starts_with("Restarting at the kernel's request")),
        "{seen:?}"
    );
    assert_eq!(w.daemon.double.pid(), pid, "the same process re-attached");
    assert_eq!(state(&w.proxy).await, "running");
}
