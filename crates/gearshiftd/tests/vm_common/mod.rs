//! Shared by the daemon's VM tests: a guest prelude that starts a private system bus and the
//! real gearshiftd (debug builds of gearshiftd, gearshiftctl and scx_gearshift), and helpers
//! to read the `key=value` lines guest scripts print.
#![allow(dead_code)]

use std::time::Duration;

use gearshift_testbus::{repo_root, workspace_bin};
use xtask::bus::write_daemon_run_dir;
use xtask::{run_in_vm, VmConfig, VmOutput};

/// Shell functions: `prop NAME`, `stat FIELD`, `now_ms`, `wait_state STATE`, and
/// `start_daemon` (sets GSD to gearshiftd's pid).
const PRELUDE: &str = r#"
set -u
export DBUS_SYSTEM_BUS_ADDRESS=unix:path=/tmp/gs-bus.sock
B="busctl --timeout=120"
DEST="io.github.gearshift.Scheduler1 /io/github/gearshift/Scheduler1 io.github.gearshift.Scheduler1"
prop() { $B get-property $DEST "$1" | cut -d' ' -f2- | tr -d '"'; }
stat() { $B --json=short call $DEST GetStats | /usr/bin/python3 -c 'import json,sys; v = json.load(sys.stdin)["data"][0][sys.argv[1]]["data"]; print(v if isinstance(v, str) else json.dumps(v))' "$1"; }
now_ms() { echo $(( $(date +%s%N) / 1000000 )); }
wait_state() {
    for _ in $(seq 1 600); do [ "$(prop State)" = "$1" ] && return 0; sleep 0.2; done
    echo "state stuck at $(prop State): $(prop StateReason)"; cat /tmp/gsd.log; exit 91
}
start_daemon() {
    dbus-daemon --config-file="$RUN/bus.conf" --fork --nopidfile || exit 92
    "$GEARSHIFTD" --config "$RUN/config.toml" --state-dir /tmp/gs-state --runtime-dir /tmp/gs-run > /tmp/gsd.log 2>&1 &
    GSD=$!
    for _ in $(seq 1 100); do busctl status io.github.gearshift.Scheduler1 >/dev/null 2>&1 && break; sleep 0.2; done
}
"#;

/// Boots a VM with `cpus` vCPUs and runs `script` after the prelude; gearshiftd's config is
/// `config` (TOML, top-level keys and tables other than [scheduler]) plus the scheduler's
/// path and `scheduler_args`.
pub fn run(cpus: u32, config: &str, scheduler_args: &[&str], script: &str) -> VmOutput {
    let run = tempfile::Builder::new()
        .prefix("vm-daemon-")
        .tempdir_in(repo_root().join("target"))
        .expect("run dir under target/ (shared with the guest)");
    let dir = run.path();
    write_daemon_run_dir(dir, config, &workspace_bin("scx_gearshift"), scheduler_args)
        .expect("bus and daemon configs in the run dir");
    let stress_ng = xtask::tools::stress_ng(&xtask::cache::Cache::from_env()).expect("stress-ng");
    let cfg = VmConfig {
        cpus,
        timeout: Duration::from_secs(900),
        env: vec![
            ("RUN".into(), dir.display().to_string()),
            (
                "GEARSHIFTD".into(),
                workspace_bin("gearshiftd").display().to_string(),
            ),
            (
                "GEARSHIFTCTL".into(),
                workspace_bin("gearshiftctl").display().to_string(),
            ),
            ("STRESS_NG".into(), stress_ng.display().to_string()),
        ],
        ..VmConfig::default()
    };
    let out = run_in_vm(&cfg, &format!("{PRELUDE}\n{script}")).expect("VM run");
    eprintln!("--- guest output ---\n{}", out.output);
    out
}

pub fn field<'a>(out: &'a VmOutput, key: &str) -> &'a str {
    out.field(key)
        .unwrap_or_else(|| panic!("no {key}= in the output:\n{}", out.output))
}

pub fn number(out: &VmOutput, key: &str) -> f64 {
    field(out, key)
        .parse()
        .unwrap_or_else(|_| panic!("{key} is not a number:\n{}", out.output))
}
