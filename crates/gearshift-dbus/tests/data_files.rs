//! Validates the system integration files under `data/` (and the interface XML) with the real
//! tools: systemd-analyze, xmllint with polkit's DTD, and a private dbus-daemon.
//! The tools come from `tools/bootstrap.sh`; a missing tool fails the test, never skips it.

use std::collections::BTreeSet;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{SystemTime, UNIX_EPOCH};

use gearshift_dbus::{ACTION_MANAGE, ACTION_SET_FOREGROUND, ACTION_SWITCH_PROFILE, BUS_NAME};

const UNIT: &str = "data/systemd/gearshiftd.service";
const BUS_POLICY: &str = "data/dbus-1/system.d/io.github.gearshift.Scheduler1.conf";
const ACTIVATION: &str = "data/dbus-1/system-services/io.github.gearshift.Scheduler1.service";
const POLKIT_POLICY: &str = "data/polkit-1/actions/io.github.gearshift.policy";
const INTERFACE_XML: &str = "dbus/io.github.gearshift.Scheduler1.xml";
const POLKIT_DTD: &str = "/usr/share/polkit-1/policyconfig-1.dtd";
const DAEMON: &str = "/usr/libexec/gearshiftd";
const MAX_EXPOSURE: f64 = 5.0;

fn repo_path(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(rel)
}

fn read(rel: &str) -> String {
    let path = repo_path(rel);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()))
}

/// The tool's path; panics naming the Debian package when it is not installed.
fn tool(name: &str, package: &str) -> PathBuf {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain([PathBuf::from("/usr/sbin"), PathBuf::from("/sbin")])
        .map(|dir| dir.join(name))
        .find(|p| p.is_file())
        .unwrap_or_else(|| {
            panic!("`{name}` not found: install the Debian package {package} (tools/bootstrap.sh)")
        })
}

fn run(cmd: &mut Command) -> Output {
    cmd.output()
        .unwrap_or_else(|e| panic!("running {cmd:?}: {e}"))
}

fn text(out: &[u8]) -> String {
    String::from_utf8_lossy(out).into_owned()
}

/// A fresh directory for one test (the target dir's tmp, so nothing is left in /tmp).
fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("data_files-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// `key=value` lines of one `[section]` of a systemd-style ini file, in order.
fn ini_section(content: &str, section: &str) -> Vec<(String, String)> {
    let mut inside = false;
    let mut entries = Vec::new();
    for line in content.lines().map(str::trim) {
        if line.starts_with('[') {
            inside = line == format!("[{section}]");
        } else if inside && !line.is_empty() && !line.starts_with('#') {
            let (k, v) = line
                .split_once('=')
                .unwrap_or_else(|| panic!("not key=value: {line}"));
            entries.push((k.trim().to_owned(), v.trim().to_owned()));
        }
    }
    entries
}

/// The single value of `key`; panics when it is missing or set more than once.
fn ini_value<'a>(entries: &'a [(String, String)], key: &str) -> &'a str {
    let values: Vec<_> = entries.iter().filter(|(k, _)| k == key).collect();
    assert_eq!(
        values.len(),
        1,
        "{key}= should be set exactly once: {values:?}"
    );
    &values[0].1
}

/// The unit with ExecStart pointing at an existing binary, as `dir/gearshiftd.service`
/// (verify refuses a missing ExecStart binary, and the file name must stay the unit name).
fn unit_with_existing_exec(dir: &Path) -> PathBuf {
    let unit = read(UNIT);
    let wanted = format!("ExecStart={DAEMON}");
    assert_eq!(
        unit.lines().filter(|l| l.starts_with("ExecStart=")).count(),
        1
    );
    assert!(
        unit.lines().any(|l| l == wanted),
        "{UNIT}: expected `{wanted}`"
    );
    let copy = dir.join("gearshiftd.service");
    std::fs::write(&copy, unit.replace(&wanted, "ExecStart=/bin/true")).unwrap();
    copy
}

#[test]
fn unit_passes_systemd_analyze_verify() {
    let analyze = tool("systemd-analyze", "systemd");
    let unit = unit_with_existing_exec(&scratch("verify"));
    let out = run(Command::new(analyze).arg("verify").arg(&unit));
    // Unknown keys and bad values are only warnings (exit 0): any output is a failure.
    let report = format!("{}{}", text(&out.stdout), text(&out.stderr));
    assert!(
        out.status.success() && report.trim().is_empty(),
        "systemd-analyze verify {UNIT}: {}\n{report}",
        out.status
    );
}

#[test]
fn unit_exposure_is_low() {
    let analyze = tool("systemd-analyze", "systemd");
    let out = run(Command::new(analyze)
        .args(["security", "--offline=true"])
        .arg(repo_path(UNIT)));
    let stdout = text(&out.stdout);
    assert!(
        out.status.success(),
        "systemd-analyze security: {}\n{stdout}{}",
        out.status,
        text(&out.stderr)
    );
    let line = stdout
        .lines()
        .find(|l| l.contains("Overall exposure level"))
        .unwrap_or_else(|| panic!("no exposure line in:\n{stdout}"));
    // "→ Overall exposure level for gearshiftd.service: 1.8 OK 🙂"
    let exposure: f64 = line
        .rsplit_once(": ")
        .and_then(|(_, rest)| rest.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("cannot parse exposure from {line:?}"));
    assert!(
        exposure <= MAX_EXPOSURE,
        "exposure {exposure} > {MAX_EXPOSURE}:\n{stdout}"
    );
}

#[test]
fn unit_serves_the_bus_name_with_only_the_capabilities_bpf_needs() {
    let unit = read(UNIT);
    let service = ini_section(&unit, "Service");
    assert_eq!(ini_value(&service, "Type"), "dbus");
    assert_eq!(ini_value(&service, "BusName"), BUS_NAME);
    assert_eq!(ini_value(&service, "ExecStart"), DAEMON);
    let caps: BTreeSet<_> = ini_value(&service, "CapabilityBoundingSet")
        .split_whitespace()
        .collect();
    let wanted: BTreeSet<_> = [
        "CAP_SYS_ADMIN",
        "CAP_BPF",
        "CAP_PERFMON",
        "CAP_SYS_RESOURCE",
        "CAP_SYS_NICE",
        "CAP_IPC_LOCK",
    ]
    .into();
    assert_eq!(caps, wanted);
    let install = ini_section(&unit, "Install");
    assert_eq!(
        ini_value(&install, "Alias"),
        format!("dbus-{BUS_NAME}.service")
    );
}

#[test]
fn activation_file_starts_the_unit() {
    let activation = read(ACTIVATION);
    let entries = ini_section(&activation, "D-BUS Service");
    assert_eq!(ini_value(&entries, "Name"), BUS_NAME);
    assert_eq!(ini_value(&entries, "Exec"), DAEMON);
    assert_eq!(ini_value(&entries, "User"), "root");
    assert_eq!(ini_value(&entries, "SystemdService"), "gearshiftd.service");
    assert!(ACTIVATION.ends_with(&format!("/{BUS_NAME}.service")));
}

fn xmllint() -> PathBuf {
    tool("xmllint", "libxml2-utils")
}

fn assert_xmllint(args: &[&str], rel: &str) {
    let out = run(Command::new(xmllint())
        .args(["--noout", "--nonet"])
        .args(args)
        .arg(repo_path(rel)));
    assert!(
        out.status.success() && out.stderr.is_empty(),
        "xmllint {args:?} {rel}: {}\n{}",
        out.status,
        text(&out.stderr)
    );
}

#[test]
fn polkit_policy_is_valid_against_polkits_dtd() {
    assert!(
        Path::new(POLKIT_DTD).is_file(),
        "{POLKIT_DTD} missing: install the Debian package polkitd (tools/bootstrap.sh)"
    );
    assert_xmllint(&["--dtdvalid", POLKIT_DTD], POLKIT_POLICY);
}

#[test]
fn bus_policy_and_interface_xml_are_well_formed() {
    assert_xmllint(&[], BUS_POLICY);
    assert_xmllint(&[], INTERFACE_XML);
}

/// The string value of an XPath expression over the polkit policy.
fn policy_xpath(expr: &str) -> String {
    let out = run(Command::new(xmllint())
        .args(["--nonet", "--xpath", expr])
        .arg(repo_path(POLKIT_POLICY)));
    assert!(
        out.status.success(),
        "xmllint --xpath {expr}: {}",
        text(&out.stderr)
    );
    text(&out.stdout).trim().to_owned()
}

#[test]
fn polkit_actions_are_the_crates_with_the_intended_defaults() {
    let count: usize = policy_xpath("count(//action)").parse().unwrap();
    let ids: BTreeSet<_> = (1..=count)
        .map(|i| policy_xpath(&format!("string(//action[{i}]/@id)")))
        .collect();
    let wanted: BTreeSet<_> = [ACTION_SWITCH_PROFILE, ACTION_SET_FOREGROUND, ACTION_MANAGE]
        .map(String::from)
        .into();
    assert_eq!(ids, wanted, "action ids vs gearshift_dbus::ACTION_*");
    assert_eq!(count, ids.len(), "an action id is repeated");

    let expected = [
        (ACTION_SWITCH_PROFILE, ["no", "no", "yes"]),
        // Only the active local session's desktop may say which app is in front.
        (ACTION_SET_FOREGROUND, ["no", "no", "yes"]),
        (ACTION_MANAGE, ["auth_admin_keep"; 3]),
    ];
    for (id, [any, inactive, active]) in expected {
        let action = format!("//action[@id='{id}']");
        for (key, want) in [
            ("allow_any", any),
            ("allow_inactive", inactive),
            ("allow_active", active),
        ] {
            let got = policy_xpath(&format!("string({action}/defaults/{key})"));
            assert_eq!(got, want, "{id} {key}");
        }
        for element in ["description", "message"] {
            let got = policy_xpath(&format!("string({action}/{element})"));
            assert!(!got.is_empty(), "{id} has no {element}");
        }
    }
    assert_eq!(policy_xpath("string(/policyconfig/vendor)"), "Gearshift");
}

/// A dbus-daemon that is killed when dropped.
struct Bus {
    child: Child,
    address: String,
}

impl Drop for Bus {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A private bus with the system bus's default policy, our policy file included, and our
/// activation file (Exec swapped for /bin/false, so activating fails in a known way).
fn start_bus(dir: &Path) -> Result<Bus, String> {
    let services = dir.join("services");
    std::fs::create_dir_all(&services).unwrap();
    let activation = read(ACTIVATION);
    let exec = format!("Exec={DAEMON}");
    assert!(activation.lines().any(|l| l == exec));
    std::fs::write(
        services.join(format!("{BUS_NAME}.service")),
        activation.replace(&exec, "Exec=/bin/false"),
    )
    .unwrap();

    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    // Abstract socket: reachable by the unprivileged user below whatever the dir permissions.
    let listen = format!(
        "unix:abstract=gearshift-test-{}-{nanos}",
        std::process::id()
    );
    let config = gearshift_testkit::bus::bus_config(&listen, Some(&services));
    let config_path = dir.join("bus.conf");
    std::fs::write(&config_path, config).unwrap();

    let mut child = Command::new(tool("dbus-daemon", "dbus"))
        .arg(format!("--config-file={}", config_path.display()))
        .args(["--nofork", "--nopidfile", "--print-address=1"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawning dbus-daemon");
    // The address is printed once the bus listens; a refused config ends the process (EOF).
    let mut address = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut address)
        .unwrap();
    if address.trim().is_empty() {
        let out = child.wait_with_output().unwrap();
        return Err(format!("{}: {}", out.status, text(&out.stderr)));
    }
    Ok(Bus {
        child,
        address: address.trim().to_owned(),
    })
}

/// dbus-send to the private bus, optionally as nobody; returns (success, stdout + stderr).
fn dbus_send(
    bus: &Bus,
    as_nobody: bool,
    dest: &str,
    method: &str,
    args: &[&str],
) -> (bool, String) {
    let dbus_send = tool("dbus-send", "dbus-bin");
    let mut cmd = if as_nobody {
        let mut c = Command::new(tool("setpriv", "util-linux"));
        c.args(["--reuid=65534", "--regid=65534", "--clear-groups"])
            .arg(dbus_send);
        c
    } else {
        Command::new(dbus_send)
    };
    let path = if dest == BUS_NAME {
        gearshift_dbus::OBJECT_PATH
    } else {
        "/org/freedesktop/DBus"
    };
    cmd.arg(format!("--bus={}", bus.address))
        .args(["--print-reply", "--reply-timeout=10000"])
        .arg(format!("--dest={dest}"))
        .arg(path)
        .arg(method)
        .args(args);
    let out = run(&mut cmd);
    (
        out.status.success(),
        format!("{}{}", text(&out.stdout), text(&out.stderr)),
    )
}

fn is_root() -> bool {
    let out = run(Command::new("id").arg("-u"));
    text(&out.stdout).trim() == "0"
}

#[test]
fn dbus_daemon_accepts_the_policy_and_enforces_it() {
    let bus = start_bus(&scratch("bus"))
        .unwrap_or_else(|e| panic!("dbus-daemon refused {BUS_POLICY} or {ACTIVATION}: {e}"));
    let request_name = |as_nobody| {
        dbus_send(
            &bus,
            as_nobody,
            "org.freedesktop.DBus",
            "org.freedesktop.DBus.RequestName",
            &[&format!("string:{BUS_NAME}"), "uint32:4"],
        )
    };
    // Only root may own the name.
    let denied = "org.freedesktop.DBus.Error.AccessDenied";
    if is_root() {
        let (ok, out) = request_name(false);
        assert!(
            ok && out.contains("uint32 1"),
            "root could not own {BUS_NAME}: {out}"
        );
        let (ok, out) = request_name(true);
        assert!(
            !ok && out.contains(denied),
            "nobody could own {BUS_NAME}: {out}"
        );
    } else {
        let (ok, out) = request_name(false);
        assert!(
            !ok && out.contains(denied),
            "a user could own {BUS_NAME}: {out}"
        );
    }

    // Anyone may call the listed interfaces: the call passes the policy and reaches
    // activation (which fails: Exec is /bin/false). Other interfaces are denied.
    for iface in [
        gearshift_dbus::INTERFACE,
        "org.freedesktop.DBus.Properties",
        "org.freedesktop.DBus.Introspectable",
        "org.freedesktop.DBus.Peer",
    ] {
        let (ok, out) = dbus_send(&bus, is_root(), BUS_NAME, &format!("{iface}.Ping"), &[]);
        assert!(
            !ok && out.contains("org.freedesktop.DBus.Error.Spawn."),
            "{iface}: expected an activation attempt, got: {out}"
        );
    }
    let (ok, out) = dbus_send(&bus, is_root(), BUS_NAME, "org.example.Other.Ping", &[]);
    assert!(
        !ok && out.contains(denied),
        "org.example.Other was not denied: {out}"
    );
}
