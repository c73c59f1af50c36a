//! After logind announces a resume, gearshiftd checks the scheduler: one the kernel ended and
//! that does not come back is a failure (restarted, reported); one the kernel runs again within
//! the start timeout (a re-attach after a CPU hotplug around the sleep) is left alone.

mod common;

use std::time::Duration;

use common::*;
use futures_util::StreamExt;

const LOGIND: &str = "org.freedesktop.login1";

async fn running_world_with_logind() -> World {
    let mut w = world(with_restart_config("autostart = true", 3000, "")).await;
    w.bus.start_template("logind", LOGIND);
    wait_state(&w.proxy, "running", SECS_10).await;
    // gearshiftd follows logind once it has seen its name owner: announce until it answers.
    eventually("gearshiftd follows logind", SECS_10, || async {
        announce_sleep(&w, false);
        tokio::time::sleep(Duration::from_millis(200)).await;
        checks(&w, "") > 0
    })
    .await;
    w
}

/// How many resume checks gearshiftd logged with `outcome` after "resumed from sleep".
fn checks(w: &World, outcome: &str) -> usize {
    w.daemon
        .log()
        .matches(&format!("resumed from sleep{outcome}"))
        .count()
}

fn announce_sleep(w: &World, sleeping: bool) {
    let value = if sleeping { "true" } else { "false" };
    let out = w.bus.busctl_call(
        None,
        &[
            LOGIND,
            "/org/freedesktop/login1",
            "org.freedesktop.DBus.Mock",
            "EmitSignal",
            "sssav",
            "org.freedesktop.login1.Manager",
            "PrepareForSleep",
            "b",
            "1",
            "b",
            value,
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Waits until gearshiftd logged one more resume check than `before` found the scheduler running.
async fn wait_healthy_check(w: &World, before: usize) {
    eventually(
        "a resume check that finds the scheduler running",
        SECS_10,
        || async { checks(w, RUNS) > before },
    )
    .await;
}

const RUNS: &str = ": the scheduler runs";

#[tokio::test]
async fn a_scheduler_the_kernel_runs_again_soon_after_resume_is_left_alone() {
    let w = running_world_with_logind().await;
    let pid = w.daemon.double.pid().expect("double pid");
    let mut exits = w.proxy.receive_scheduler_exited().await.unwrap();
    let before = checks(&w, RUNS);
    announce_sleep(&w, true);
    // The kernel ended the scheduler around the sleep; its re-attach lands after the resume.
    w.daemon.set_kernel_state("disabled");
    announce_sleep(&w, false);
    tokio::time::sleep(Duration::from_millis(1000)).await;
    w.daemon.set_kernel_state("enabled");
    wait_healthy_check(&w, before).await;
    assert_eq!(w.daemon.double.pid(), Some(pid), "the same process runs");
    assert_eq!(state(&w.proxy).await, "running");
    let exit = tokio::time::timeout(Duration::from_millis(500), exits.next()).await;
    assert!(exit.is_err(), "no SchedulerExited: {exit:?}");
}

#[tokio::test]
async fn a_scheduler_the_kernel_no_longer_runs_after_resume_is_restarted_and_reported() {
    let w = running_world_with_logind().await;
    let pid = w.daemon.double.pid().expect("double pid");
    let mut exits = w.proxy.receive_scheduler_exited().await.unwrap();
    announce_sleep(&w, true);
    w.daemon.set_kernel_state("disabled");
    announce_sleep(&w, false);
    // Judged after the start timeout (3 s here), not at once.
    let exit = tokio::time::timeout(SECS_10, exits.next())
        .await
        .expect("SchedulerExited")
        .expect("signal stream");
    let args = exit.args().unwrap();
    assert!(
        args.reason()
            .contains("after resume the kernel no longer runs the scheduler"),
        "{}",
        args.reason()
    );
    assert!(*args.will_restart());
    wait_state(&w.proxy, "running", SECS_10).await;
    assert_ne!(w.daemon.double.pid(), Some(pid), "a new process runs");
}

#[tokio::test]
async fn a_resume_with_a_healthy_scheduler_changes_nothing() {
    let w = running_world_with_logind().await;
    let pid = w.daemon.double.pid().expect("double pid");
    let before = checks(&w, RUNS);
    announce_sleep(&w, true);
    announce_sleep(&w, false);
    wait_healthy_check(&w, before).await;
    assert_eq!(w.daemon.double.pid(), Some(pid));
    assert_eq!(state(&w.proxy).await, "running");
}
