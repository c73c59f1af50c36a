//! The scheduler process under supervision: crashes, restarts with backoff, falling back to
//! the last known good profile, giving up, unsupported kernels, autostart and shutdown.

mod common;

use std::time::Duration;

use common::*;
use futures_util::StreamExt;

fn with_config(extra: &str) -> Setup {
    with_restart_config(extra, 2000, "")
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

#[tokio::test]
async fn a_profile_chosen_while_the_scheduler_re_attaches_becomes_known_good() {
    let w = world(with_restart_config(
        "autostart = false",
        10_000,
        "known_good_after_s = 1",
    ))
    .await;
    let state_file = w.daemon.state_dir().join("state.json");
    let mut exits = w.proxy.receive_scheduler_exited().await.unwrap();
    w.proxy.start().await.unwrap();
    // The double re-attaches 0.3 s after it reports the kernel's restart: the switch lands
    // in between, while the state is "starting".
    w.daemon.double.set("hotplug");
    tokio::time::timeout(SECS_10, exits.next())
        .await
        .expect("SchedulerExited")
        .unwrap();
    w.proxy.set_profile("fifo").await.unwrap();
    wait_state(&w.proxy, "running", SECS_10).await;
    // fifo runs cleanly from the re-attach on: after 1 s it is the last known good profile.
    let deadline = tokio::time::Instant::now() + SECS_10;
    loop {
        let saved = std::fs::read_to_string(&state_file).unwrap_or_default();
        let known = serde_json::from_str::<serde_json::Value>(&saved)
            .ok()
            .and_then(|v| v["known_good"]["profile"].as_str().map(str::to_owned));
        if known.as_deref() == Some("fifo") {
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "fifo never became known good: {saved}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// A world whose "interactive" profile has run cleanly past known_good_after_s (1 s). Starts
/// may be slow on a busy machine: only the failures the test makes should count.
async fn interactive_known_good() -> World {
    let w = world(with_restart_config(
        "autostart = false",
        10_000,
        "known_good_after_s = 1",
    ))
    .await;
    w.proxy.start().await.unwrap();
    assert_eq!(w.proxy.profile().await.unwrap(), "interactive");
    tokio::time::sleep(Duration::from_millis(1500)).await;
    w
}

#[tokio::test]
async fn a_profile_that_keeps_failing_falls_back_to_the_last_known_good_one() {
    let w = interactive_known_good().await;
    let state_file = w.daemon.state_dir().join("state.json");
    let saved = std::fs::read_to_string(&state_file).unwrap_or_default();
    assert!(saved.contains("known_good"), "saved as known good: {saved}");
    let mut fell_back = w.proxy.receive_fell_back().await.unwrap();
    let mut exits = w.proxy.receive_scheduler_exited().await.unwrap();
    w.daemon.double.fail_in_mode(Some("fifo"));
    w.proxy.set_profile("fifo").await.unwrap();
    let signal = tokio::time::timeout(SECS_10, fell_back.next())
        .await
        .expect("FellBack")
        .unwrap();
    let args = signal.args().unwrap();
    assert_eq!(args.failed_profile(), "fifo");
    assert_eq!(args.fallback_profile(), "interactive");
    assert_eq!(*args.failures(), 3);
    assert!(
        args.reason().contains("fail in fifo mode"),
        "{}",
        args.reason()
    );
    // Every exit said the scheduler comes back, the last one included.
    let mut will_restart = Vec::new();
    for _ in 0..3 {
        let exit = tokio::time::timeout(SECS_10, exits.next()).await.unwrap();
        will_restart.push(*exit.unwrap().args().unwrap().will_restart());
    }
    assert_eq!(will_restart, [true, true, true]);
    wait_state(&w.proxy, "running", SECS_10).await;
    assert_eq!(w.proxy.profile().await.unwrap(), "interactive");
    assert_eq!(w.proxy.profile_reason().await.unwrap(), "fallback");
    let reason = w.proxy.state_reason().await.unwrap();
    assert!(
        reason.starts_with("Fell back to profile interactive")
            && reason.contains("profile fifo failed 3 times")
            && reason.contains("fail in fifo mode"),
        "{reason}"
    );
    let args = w.daemon.double.args();
    assert!(
        args.windows(2).any(|a| a == ["--mode", "interactive"]),
        "{args:?}"
    );
    // The fallback is saved as the choice, so a daemon restart does not loop again.
    let saved = std::fs::read_to_string(&state_file).unwrap();
    assert!(
        saved.contains("\"profile_reason\": \"fallback\""),
        "{saved}"
    );
    // The user's next choice is an ordinary one, and the fallback's words go.
    w.proxy.set_profile("low-power").await.unwrap();
    assert_eq!(w.proxy.profile_reason().await.unwrap(), "user");
    assert_eq!(w.proxy.state_reason().await.unwrap(), "");
    assert_eq!(state(&w.proxy).await, "running");
}

#[tokio::test]
async fn when_the_known_good_profile_fails_too_the_scheduler_ends_failed() {
    let w = interactive_known_good().await;
    let mut fell_back = w.proxy.receive_fell_back().await.unwrap();
    w.daemon.double.fail_in_mode(Some("fifo"));
    w.proxy.set_profile("fifo").await.unwrap();
    tokio::time::timeout(SECS_10, fell_back.next())
        .await
        .expect("FellBack");
    wait_state(&w.proxy, "running", SECS_10).await;
    // Now the fallback fails as well: nothing else to fall back to.
    w.daemon.double.fail_in_mode(Some("interactive"));
    wait_state(&w.proxy, "failed", SECS_10).await;
    let reason = w.proxy.state_reason().await.unwrap();
    assert!(
        reason.contains("3 failures") && reason.contains("fail in interactive mode"),
        "{reason}"
    );
    assert!(
        tokio::time::timeout(Duration::from_millis(500), fell_back.next())
            .await
            .is_err(),
        "no second fallback"
    );
}
