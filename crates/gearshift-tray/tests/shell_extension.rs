//! The GNOME Shell extension (data/gnome-shell-extension/): ESLint with GNOME's rules, both
//! builds (GNOME 43-44 and 45+) from tools/build-shell-extension.py, and its D-Bus client run
//! by gjs against the real gearshiftd on a private system bus. It lives here, with the tray,
//! because both are the desktop's small views of gearshiftd.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use gearshift_testbus::{DaemonUnderTest, Setup, TestBus};

fn repo() -> PathBuf {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR")))
        .join("../..")
        .canonicalize()
        .expect("repo root")
}

fn extension_dir() -> PathBuf {
    repo().join("data/gnome-shell-extension")
}

/// Builds both variants into a temporary directory.
fn build(out: &Path) {
    let result = Command::new("python3")
        .arg(repo().join("tools/build-shell-extension.py"))
        .arg(out)
        .output()
        .expect("python3");
    assert!(
        result.status.success(),
        "build-shell-extension.py: {}",
        String::from_utf8_lossy(&result.stderr)
    );
}

fn zip_listing(zip: &Path) -> Vec<String> {
    let script = "import sys, zipfile; print('\\n'.join(zipfile.ZipFile(sys.argv[1]).namelist()))";
    let out = Command::new("python3")
        .args(["-c", script])
        .arg(zip)
        .output()
        .expect("python3");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut names: Vec<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::to_owned)
        .collect();
    names.sort();
    names
}

#[test]
fn eslint_with_gnome_rules() {
    let eslint = extension_dir().join("node_modules/.bin/eslint");
    assert!(
        eslint.exists(),
        "{} missing: tools/bootstrap.sh installs it (npm ci)",
        eslint.display()
    );
    let out = Command::new(&eslint)
        .args(["--max-warnings", "0", "."])
        .current_dir(extension_dir())
        .output()
        .expect("eslint");
    assert!(
        out.status.success(),
        "eslint:\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn builds_and_packs_both_versions() {
    let out = tempfile::tempdir().expect("tempdir");
    build(out.path());
    let uuid = "gearshift@gearshift.github.io";
    for (tag, versions) in [("45", "\"45\""), ("43", "\"43\"")] {
        let zip = out.path().join(format!("{uuid}.shell-{tag}.zip"));
        assert_eq!(
            zip_listing(&zip),
            ["extension.js", "gearshift.js", "metadata.json", "ui.js"],
            "{}",
            zip.display()
        );
        let metadata =
            std::fs::read_to_string(out.path().join(tag).join("metadata.json")).expect("metadata");
        assert!(metadata.contains(versions), "{metadata}");
        assert!(metadata.contains(uuid), "{metadata}");
    }
    // The 43-44 build has no ES module syntax left; the 45+ one is the source as written.
    for name in ["extension.js", "gearshift.js", "ui.js"] {
        let legacy = std::fs::read_to_string(out.path().join("43").join(name)).expect("read");
        assert!(
            legacy
                .lines()
                .all(|l| !l.starts_with("import ") && !l.starts_with("export ")),
            "{name}:\n{legacy}"
        );
    }
    let modern = std::fs::read_to_string(out.path().join("45/extension.js")).expect("read");
    assert!(modern.contains("export default class"), "{modern}");
}

/// `gjs -m tests/<script>` on `bus`; `legacy`: against the 43-44 build's module, built into
/// `out`.
fn gjs_command(script: &str, legacy: bool, bus: &TestBus, out: &Path) -> Command {
    let mut cmd = Command::new("gjs");
    cmd.arg("-m")
        .arg(extension_dir().join("tests").join(script));
    if legacy {
        build(out);
        cmd.arg(out.join("43"));
    }
    bus.env(&mut cmd);
    cmd
}

/// The pid the gjs client test reports as focused.
const FOCUSED_PID: u32 = 424_242;

/// Runs tests/client.test.js with gjs (`legacy`: against the 43-44 build's module), restarts
/// gearshiftd when it asks and makes the scheduler fail in fifo mode when it asks.
fn gjs_client(legacy: bool) {
    let mut bus = TestBus::start();
    bus.start_polkit();
    bus.polkit_allow(&[
        gearshift_dbus::ACTION_SWITCH_PROFILE,
        gearshift_dbus::ACTION_MANAGE,
        gearshift_dbus::ACTION_SET_FOREGROUND,
    ]);
    // A profile counts as known good after 1 s of clean running, so a fallback can be tried.
    let setup = Setup {
        restart_extra: "known_good_after_s = 1".into(),
        ..Setup::default()
    };
    let mut daemon = DaemonUnderTest::start(&bus, setup);
    let out = tempfile::tempdir().expect("tempdir");
    let mut cmd = gjs_command("client.test.js", legacy, &bus, out.path());
    // The focused app the client reports: a process of the test's own user (root) in an app
    // scope, in the daemon's fake procfs and cgroupfs.
    daemon.fake_process(
        FOCUSED_PID,
        0,
        "/user.slice/app-org.example.Focused-1.scope",
    );
    cmd.env("GEARSHIFT_TEST_FOREGROUND_PID", FOCUSED_PID.to_string());
    let mut child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("gjs (apt package gjs)");
    let stdout = BufReader::new(child.stdout.take().expect("stdout"));
    let mut lines = Vec::new();
    for line in stdout.lines() {
        let line = line.expect("gjs output");
        if line == "restart-now" {
            daemon.crash();
            std::thread::sleep(Duration::from_millis(300));
            daemon.restart();
        } else if line == "fail-fifo-now" {
            daemon.double.fail_in_mode(Some("fifo"));
        }
        lines.push(line);
    }
    let result = child.wait_with_output().expect("gjs exit");
    assert!(
        result.status.success() && lines.last().map(String::as_str) == Some("ok"),
        "gjs client test failed ({}):\n{}\n{}",
        result.status,
        lines.join("\n"),
        String::from_utf8_lossy(&result.stderr)
    );
}

#[test]
fn gjs_client_follows_and_drives_gearshiftd() {
    gjs_client(false);
}

#[test]
fn gjs_client_of_the_legacy_build() {
    gjs_client(true);
}

/// Runs tests/foreground.test.js with gjs (`legacy`: against the 43-44 build's module): the
/// client's SetForeground calls against the fake gearshiftd the script serves itself on a
/// private system bus. Runs whether or not gearshiftd has SetForeground yet.
fn gjs_foreground(legacy: bool) {
    let bus = TestBus::start();
    let out = tempfile::tempdir().expect("tempdir");
    let result = gjs_command("foreground.test.js", legacy, &bus, out.path())
        .output()
        .expect("gjs (apt package gjs)");
    let stdout = String::from_utf8_lossy(&result.stdout);
    assert!(
        result.status.success() && stdout.lines().last() == Some("ok"),
        "gjs foreground test failed ({}):\n{stdout}\n{}",
        result.status,
        String::from_utf8_lossy(&result.stderr)
    );
}

#[test]
fn gjs_client_tells_a_fake_gearshiftd_the_focus() {
    gjs_foreground(false);
}

#[test]
fn gjs_client_of_the_legacy_build_tells_a_fake_gearshiftd_the_focus() {
    gjs_foreground(true);
}
