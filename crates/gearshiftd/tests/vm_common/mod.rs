//! Shared by the daemon's VM tests: runs a guest script after the test kit's daemon prelude (a
//! private system bus and the real gearshiftd; debug builds of gearshiftd, gearshiftctl and
//! scx_gearshift), and reads the `key=value` lines guest scripts print.
#![allow(dead_code)]

use std::time::Duration;

use gearshift_testbus::{repo_root, workspace_bin};
use gearshift_testkit::bus::{daemon_guest_prelude, write_daemon_run_dir};
use gearshift_testkit::{run_in_vm, VmConfig, VmOutput};

/// Boots a VM with `cpus` vCPUs and runs `script` after the prelude (`start_daemon`,
/// `wait_state`, `prop`, `stat`, `now_ms`: crates/gearshift-testkit/src/daemon_guest.sh);
/// gearshiftd's config is `config` (TOML, top-level keys and tables other than [scheduler])
/// plus the scheduler's path and `scheduler_args`.
pub fn run(cpus: u32, config: &str, scheduler_args: &[&str], script: &str) -> VmOutput {
    let run = tempfile::Builder::new()
        .prefix("vm-daemon-")
        .tempdir_in(repo_root().join("target"))
        .expect("run dir under target/ (shared with the guest)");
    let dir = run.path();
    write_daemon_run_dir(dir, config, &workspace_bin("scx_gearshift"), scheduler_args)
        .expect("bus and daemon configs in the run dir");
    let stress_ng =
        gearshift_testkit::tools::stress_ng(&gearshift_testkit::cache::Cache::from_env())
            .expect("stress-ng");
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
    let out = run_in_vm(&cfg, &format!("{}\n{script}", daemon_guest_prelude())).expect("VM run");
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
