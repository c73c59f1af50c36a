//! gearshiftctl against the real gearshiftd on a private system bus (gearshift-testbus: a
//! dbus-daemon with the project's policy, polkit's double, the scheduler double).

use std::io::{BufRead, BufReader};
use std::process::{Command, Output, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use gearshift_testbus::{run_as, DaemonUnderTest, Setup, TestBus, NOBODY};
use serde_json::Value;

struct World {
    bus: TestBus,
    daemon: DaemonUnderTest,
}

fn world(setup: Setup) -> World {
    let mut bus = TestBus::start();
    bus.start_polkit();
    let daemon = DaemonUnderTest::start(&bus, setup);
    World { bus, daemon }
}

fn command(bus: &TestBus, uid: Option<u32>, args: &[&str]) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_gearshiftctl"));
    cmd.args(args);
    bus.env(&mut cmd);
    run_as(&mut cmd, uid);
    cmd
}

fn ctl_as(bus: &TestBus, uid: Option<u32>, args: &[&str]) -> Output {
    command(bus, uid, args).output().expect("run gearshiftctl")
}

fn ctl(bus: &TestBus, args: &[&str]) -> Output {
    ctl_as(bus, None, args)
}

fn code(out: &Output) -> i32 {
    out.status.code().expect("exit code")
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Runs a command that must succeed and print one JSON object.
fn json(bus: &TestBus, args: &[&str]) -> Value {
    let mut all = vec!["--json"];
    all.extend_from_slice(args);
    let out = ctl(bus, &all);
    assert_eq!(code(&out), 0, "gearshiftctl {args:?}: {}", stderr(&out));
    let text = String::from_utf8(out.stdout).expect("utf-8");
    assert_eq!(text.lines().count(), 1, "one line: {text}");
    serde_json::from_str(&text).expect("JSON")
}

#[test]
fn status_profile_mode_preempt_round_trips() {
    let w = world(Setup::default());
    let status = json(&w.bus, &["status"]);
    // Every key is checked by the unit tests; these are the ones scripts branch on.
    for key in [
        "state",
        "state_reason",
        "profile",
        "mode",
        "preemption",
        "version",
        "foreground_app",
        "foreground_boost",
    ] {
        assert!(status.get(key).is_some(), "{key} in {status}");
    }
    // No app in front yet; the default profile favours one once there is.
    assert_eq!(status["foreground_app"], "");
    assert_eq!(status["foreground_boost"], true);
    assert_eq!(status["state"], "stopped");
    assert_eq!(status["sched_ext_supported"], true);

    let out = ctl(&w.bus, &["start"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(json(&w.bus, &["status"])["state"], "running");
    let text = String::from_utf8(ctl(&w.bus, &["status"]).stdout).expect("utf-8");
    assert!(text.starts_with("State:       running\n"), "{text}");

    let out = ctl(&w.bus, &["profile", "low-power"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let settings = json(&w.bus, &["profile"]);
    assert_eq!(settings["profile"], "low-power");
    assert_eq!(settings["mode"], "low-power");

    assert_eq!(code(&ctl(&w.bus, &["mode", "fifo"])), 0);
    let settings = json(&w.bus, &["mode"]);
    assert_eq!(settings["mode"], "fifo");
    let out = ctl(&w.bus, &["mode"]);
    assert_eq!(String::from_utf8_lossy(&out.stdout), "fifo\n");

    let settings = json(&w.bus, &["preempt", "on"]);
    assert_eq!(settings["preemption"], true);
    assert_eq!(json(&w.bus, &["preempt", "off"])["preemption"], false);
    let out = ctl(&w.bus, &["preempt"]);
    assert_eq!(String::from_utf8_lossy(&out.stdout), "off\n");

    let requests = w.daemon.double.requests().join("\n");
    assert!(
        requests.contains(r#""mode": "fifo", "preemption": true"#),
        "the scheduler got the changes: {requests}"
    );
}

#[test]
fn list_profiles_and_stats() {
    let w = world(Setup::default());
    let listed = json(&w.bus, &["list-profiles"]);
    let profiles = listed["profiles"].as_array().expect("profiles array");
    assert!(!profiles.is_empty());
    let active: Vec<_> = profiles.iter().filter(|p| p["active"] == true).collect();
    assert_eq!(active.len(), 1, "{listed}");
    assert_eq!(active[0]["name"], listed["active"]);
    for p in profiles {
        for key in ["name", "description", "mode", "preemption"] {
            assert!(p.get(key).is_some(), "{key} in {p}");
        }
    }

    // Stats need a running scheduler.
    let out = ctl(&w.bus, &["stats"]);
    assert_eq!(code(&out), 5, "{}", stderr(&out));
    assert_eq!(code(&ctl(&w.bus, &["start"])), 0);
    let stats = json(&w.bus, &["stats"]);
    assert!(
        stats["nr_queued"].is_u64() && stats["page_faults"].is_u64(),
        "{stats}"
    );
    let out = ctl(&w.bus, &["stats"]);
    assert!(String::from_utf8_lossy(&out.stdout).contains("Dispatches:"));
}

/// Starts `--json stats --watch` and waits for `lines` updates, each a JSON object.
fn watch(bus: &TestBus, lines: usize) -> std::process::Child {
    let mut child = command(
        bus,
        None,
        &["--json", "stats", "--watch", "--interval-ms", "250"],
    )
    .stdout(Stdio::piped())
    .stderr(Stdio::piped())
    .spawn()
    .expect("spawn watch");
    let rx = lines_of(child.stdout.take().expect("stdout"));
    for _ in 0..lines {
        let line = rx
            .recv_timeout(Duration::from_secs(20))
            .expect("a Stats update");
        let stats: Value = serde_json::from_str(&line).expect("JSON line");
        assert!(stats["uptime_ms"].is_u64(), "{line}");
    }
    child
}

/// The lines `pipe` gives, as they come, from a thread of their own.
fn lines_of(pipe: impl std::io::Read + Send + 'static) -> mpsc::Receiver<String> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(pipe).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    rx
}

/// Every line still to come from `rx` until its pipe closes (the reader thread ends at EOF), or
/// for at most `limit`: after the process exits, its last lines may still be in flight.
fn rest_of(rx: &mpsc::Receiver<String>, limit: Duration) -> Vec<String> {
    let deadline = std::time::Instant::now() + limit;
    let mut lines = Vec::new();
    while let Some(left) = deadline.checked_duration_since(std::time::Instant::now()) {
        match rx.recv_timeout(left) {
            Ok(line) => lines.push(line),
            Err(_) => break,
        }
    }
    lines
}

fn signal(child: &std::process::Child, name: &str) {
    let pid = child.id().to_string();
    let sent = Command::new("kill")
        .args([name, &pid])
        .status()
        .expect("kill");
    assert!(sent.success());
}

/// gearshiftd logs (at debug level) when it drops the subscriptions of a client that left.
const DROPPED: &str = "stats subscriptions";

#[test]
fn stats_watch_prints_a_line_per_update_until_interrupted() {
    let w = world(Setup::default());
    assert_eq!(code(&ctl(&w.bus, &["start"])), 0);
    let child = watch(&w.bus, 2);
    signal(&child, "-INT");
    let out = child.wait_with_output().expect("wait");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    // It unsubscribed before leaving: the daemon had nothing left to drop.
    std::thread::sleep(Duration::from_millis(500));
    assert!(!w.daemon.log().contains(DROPPED), "{}", w.daemon.log());

    // Control: a watcher killed outright leaves its subscription for the daemon to drop.
    let mut child = watch(&w.bus, 1);
    signal(&child, "-KILL");
    let _ = child.wait();
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while !w.daemon.log().contains(DROPPED) {
        assert!(std::time::Instant::now() < deadline, "{}", w.daemon.log());
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn refusals_have_their_exit_codes() {
    let w = world(Setup::default());
    let before = json(&w.bus, &["profile"]);

    let out = ctl(&w.bus, &["profile", "no-such-profile"]);
    assert_eq!(code(&out), 1, "{}", stderr(&out));
    assert!(stderr(&out).contains("no-such-profile"), "{}", stderr(&out));
    assert_eq!(
        json(&w.bus, &["profile"]),
        before,
        "a failed call changes nothing"
    );

    // Reading is open to everyone; changing needs polkit, which says no to nobody here.
    let out = ctl_as(&w.bus, Some(NOBODY), &["status"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let out = ctl_as(&w.bus, Some(NOBODY), &["profile", "low-power"]);
    assert_eq!(code(&out), 4, "{}", stderr(&out));
    assert!(stderr(&out).contains("run as root or from an active local session"));
    let out = ctl_as(&w.bus, Some(NOBODY), &["preempt", "off"]);
    assert_eq!(code(&out), 4, "{}", stderr(&out));
    assert_eq!(json(&w.bus, &["profile"]), before);

    // Usage errors never reach the daemon.
    let out = ctl(&w.bus, &["mode", "turbo"]);
    assert_eq!(code(&out), 2);
    assert!(stderr(&out).contains("low-power"), "{}", stderr(&out));
}

#[test]
fn unsupported_kernel_exits_5() {
    let w = world(Setup {
        supported: false,
        ..Setup::default()
    });
    assert_eq!(json(&w.bus, &["status"])["state"], "unsupported");
    let out = ctl(&w.bus, &["start"]);
    assert_eq!(code(&out), 5, "{}", stderr(&out));
}

#[test]
fn absent_daemon_exits_3() {
    let bus = TestBus::start();
    let out = ctl(&bus, &["status"]);
    assert_eq!(code(&out), 3, "{}", stderr(&out));
    assert!(
        stderr(&out).contains("gearshiftd is not running (no io.github.gearshift.Scheduler1"),
        "{}",
        stderr(&out)
    );
    let out = Command::new(env!("CARGO_BIN_EXE_gearshiftctl"))
        .arg("status")
        .env("DBUS_SYSTEM_BUS_ADDRESS", "unix:path=/nonexistent/bus")
        .output()
        .expect("run gearshiftctl");
    assert_eq!(code(&out), 3, "{}", stderr(&out));
}

#[test]
fn hold_holds_while_the_command_runs_and_passes_on_its_status() {
    let w = world(Setup::default());
    let seen = w.daemon.dir().join("seen.json");
    let script = format!(
        "{} --json status > {}; exit 7",
        env!("CARGO_BIN_EXE_gearshiftctl"),
        seen.display()
    );
    let out = ctl(
        &w.bus,
        &[
            "hold", "fifo", "--reason", "test", "--", "sh", "-c", &script,
        ],
    );
    assert_eq!(code(&out), 7, "{}", stderr(&out));
    let during: Value =
        serde_json::from_slice(&std::fs::read(&seen).expect("status during the hold"))
            .expect("JSON");
    assert_eq!(during["profile"], "fifo");
    assert_eq!(during["profile_reason"], "hold");
    let after = json(&w.bus, &["status"]);
    assert_eq!(after["profile"], "interactive");
    assert_eq!(after["profile_reason"], "default");
    // A hold of no such profile runs nothing.
    let out = ctl(
        &w.bus,
        &[
            "hold",
            "turbo",
            "--",
            "touch",
            "/nonexistent-should-not-run",
        ],
    );
    assert_eq!(code(&out), 1, "{}", stderr(&out));
    assert!(stderr(&out).contains("turbo"), "{}", stderr(&out));
}

#[test]
fn a_fallback_shows_in_status_and_in_the_watch() {
    let double =
        gearshift_testbus::repo_root().join("crates/gearshift-testbus/scheduler_double.py");
    let w = world(Setup {
        config: Some(format!(
            "autostart = false\n[scheduler]\npath = {:?}\nstart_timeout_ms = 10000\n\
             [restart]\nmax_failures = 2\nwindow_s = 30\ninitial_backoff_ms = 200\n\
             known_good_after_s = 1\n",
            double.display().to_string()
        )),
        ..Setup::default()
    });
    assert_eq!(code(&ctl(&w.bus, &["start"])), 0);
    // interactive runs cleanly past known_good_after_s; then fifo fails whenever it runs.
    std::thread::sleep(Duration::from_millis(1500));
    let child = watch(&w.bus, 1);
    w.daemon.double.fail_in_mode(Some("fifo"));
    assert_eq!(code(&ctl(&w.bus, &["profile", "fifo"])), 0);
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    loop {
        let status = json(&w.bus, &["status"]);
        if status["state"] == "running" && status["profile_reason"] == "fallback" {
            assert_eq!(status["profile"], "interactive");
            break;
        }
        assert!(std::time::Instant::now() < deadline, "{status}");
        std::thread::sleep(Duration::from_millis(100));
    }
    let out = ctl(&w.bus, &["status"]);
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        text.contains("running: Fell back to profile interactive")
            && text.contains("profile fifo failed 2 times")
            && text.contains("after the chosen one kept failing"),
        "{text}"
    );
    signal(&child, "-INT");
    let out = child.wait_with_output().expect("wait");
    let said = stderr(&out);
    assert!(
        said.contains("gearshiftctl: profile fifo failed 2 times; fell back to interactive"),
        "{said}"
    );
}

#[test]
fn check_prints_a_table_with_a_verdict_and_last_shows_it_again() {
    let w = world(Setup::default());
    assert_eq!(code(&ctl(&w.bus, &["start"])), 0);
    let out = ctl(
        &w.bus,
        &["check", "--profile", "interactive", "--seconds", "3"],
    );
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    for part in ["kernel default", "interactive", "late frames", "wakeup p99"] {
        assert!(text.contains(part), "{part} in {text}");
    }
    // The verdict is the last line, a sentence.
    let verdict = text.lines().last().unwrap_or_default();
    assert!(verdict.ends_with('.') && verdict.len() > 40, "{text}");
    // Progress went to stderr, a line per scheduler when it is no terminal.
    let progress = stderr(&out);
    assert!(
        progress.contains("measuring kernel default") && progress.contains("measuring interactive"),
        "{progress}"
    );
    let last = json(&w.bus, &["check", "--last"]);
    assert_eq!(last["results"][0]["scheduler"], "default");
    assert_eq!(last["results"][1]["scheduler"], "interactive");
    assert_eq!(last["seconds"], 3);
    let kinds = ["helps", "default-better", "no-clear-difference"];
    assert!(
        kinds.contains(&last["verdict"].as_str().unwrap_or_default()),
        "{last}"
    );
    assert_eq!(json(&w.bus, &["status"])["state"], "running");
}

#[test]
fn ctrl_c_cancels_a_check_and_what_ran_before_runs_again() {
    let w = world(Setup::default());
    assert_eq!(code(&ctl(&w.bus, &["start"])), 0);
    let mut child = command(
        &w.bus,
        None,
        &["check", "--profile", "interactive", "--seconds", "60"],
    )
    .stdout(Stdio::piped())
    .stderr(Stdio::piped())
    .spawn()
    .expect("spawn check");
    let rx = lines_of(child.stderr.take().expect("stderr"));
    let first = rx.recv_timeout(Duration::from_secs(20)).expect("progress");
    assert!(first.contains("measuring"), "{first}");
    signal(&child, "-INT");
    let status = child.wait().expect("wait");
    let said = rest_of(&rx, Duration::from_secs(10));
    assert_eq!(status.code(), Some(1), "{said:?}");
    assert!(
        said.iter().any(|l| l.contains("check cancelled")),
        "{said:?}"
    );
    assert_eq!(json(&w.bus, &["status"])["state"], "running");
    let none = ctl(&w.bus, &["check", "--last"]);
    assert_eq!(code(&none), 1);
    assert!(
        stderr(&none).contains("no check has been run yet"),
        "{}",
        stderr(&none)
    );
}

#[test]
fn check_refusals_have_their_exit_codes() {
    let w = world(Setup::default());
    assert_eq!(code(&ctl(&w.bus, &["check", "--seconds", "2"])), 2);
    assert_eq!(
        code(&ctl(&w.bus, &["check", "--last", "--seconds", "5"])),
        2
    );
    let unknown = ctl(&w.bus, &["check", "--profile", "nope"]);
    assert_eq!(code(&unknown), 1, "{}", stderr(&unknown));
    assert!(stderr(&unknown).contains("nope"), "{}", stderr(&unknown));
    let denied = ctl_as(&w.bus, Some(NOBODY), &["check", "--seconds", "3"]);
    assert_eq!(code(&denied), 4, "{}", stderr(&denied));
    assert_eq!(json(&w.bus, &["status"])["state"], "stopped");
}
