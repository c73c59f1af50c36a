//! The soak: gearshiftd and scx_gearshift under a rotating load for a chosen time in a 4-vCPU
//! VM (see soak_guest.sh), with D-Bus switches, CPU hotplug and a suspend cycle a minute, and
//! the verdict on what happened. `cargo xtask soak` runs it for as long as asked; the 3-minute
//! variant is a test (crates/gearshiftd/tests/vm_soak.rs).

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::bus::{daemon_guest_prelude, write_daemon_run_dir};
use crate::vm::{VmConfig, VmOutput};
use crate::HarnessError;

/// The programs under test.
#[derive(Debug, Clone)]
pub struct Binaries {
    pub scheduler: PathBuf,
    pub daemon: PathBuf,
}

#[derive(Debug, Clone)]
pub struct SoakConfig {
    pub duration: Duration,
    pub cpus: u32,
    pub memory_mib: u32,
}

/// Runs the soak; `run_dir` must be visible to the guest (under the repository, not /tmp).
pub fn run(
    cache: &crate::cache::Cache,
    kernel: &crate::Kernel,
    bins: &Binaries,
    cfg: &SoakConfig,
    run_dir: &Path,
) -> Result<VmOutput, HarnessError> {
    write_daemon_run_dir(run_dir, "autostart = true", &bins.scheduler, &[])?;
    let stress_ng = crate::tools::stress_ng(cache)?;
    let env = [
        ("RUN", run_dir.display().to_string()),
        ("GEARSHIFTD", bins.daemon.display().to_string()),
        ("STRESS_NG", stress_ng.display().to_string()),
        ("SOAK_S", cfg.duration.as_secs().to_string()),
    ];
    let vm = VmConfig {
        cpus: cfg.cpus,
        memory_mib: cfg.memory_mib,
        timeout: cfg.duration + Duration::from_secs(900),
        env: env
            .iter()
            .map(|(k, v)| ((*k).to_owned(), v.clone()))
            .collect(),
        stream: true,
        ..VmConfig::default()
    };
    let script = format!(
        "{}\n{}",
        daemon_guest_prelude(),
        include_str!("soak_guest.sh")
    );
    Ok(crate::vm::run(cache, kernel, &vm, &script)?)
}

/// What a good soak looks like; the problems found, empty when it passed.
pub fn verdict(out: &VmOutput) -> Vec<String> {
    let mut problems = Vec::new();
    let mut want = |ok: bool, what: String| {
        if !ok {
            problems.push(what);
        }
    };
    let num = |k: &str| out.number(k).unwrap_or(f64::NAN);
    want(
        out.field("final_state") == Some("running"),
        format!("final state {:?}", out.field("final_state")),
    );
    want(
        num("sched_ejections") == 0.0,
        format!("{} ejections", num("sched_ejections")),
    );
    want(
        num("sched_pids") == 1.0,
        format!(
            "{} scheduler processes (crashes or ejections restart it)",
            num("sched_pids")
        ),
    );
    want(
        num("page_faults_max") == 0.0,
        format!("{} page faults", num("page_faults_max")),
    );
    want(
        num("switches_failed") == 0.0,
        format!("{} switches failed", num("switches_failed")),
    );
    // The scheduler follows every hotplug itself: no restart, each event counted by the one
    // scheduler process (a restart would start its counter over).
    want(
        num("hotplug_cycles") >= 1.0
            && num("kernel_restarts") == 0.0
            && num("sched_hotplug_events") >= 2.0 * num("hotplug_cycles"),
        format!(
            "{} hotplug cycles, {} restarts, {} hotplug events seen by the scheduler",
            num("hotplug_cycles"),
            num("kernel_restarts"),
            num("sched_hotplug_events")
        ),
    );
    // Every suspend cycle is followed by gearshiftd's check on logind's resume announcement.
    want(
        num("suspend_cycles") >= 1.0 && num("resume_checks") >= num("resumes_announced"),
        format!(
            "{} suspend cycles, {} resumes announced, {} resume checks",
            num("suspend_cycles"),
            num("resumes_announced"),
            num("resume_checks")
        ),
    );
    let growth = |start: &str, end: &str| num(end) - num(start);
    // A few MiB: the allocator's arenas settle; a leak grows with time.
    want(
        growth("rss_daemon_start_kib", "rss_daemon_end_kib") <= 4096.0,
        format!(
            "gearshiftd RSS grew {} KiB",
            growth("rss_daemon_start_kib", "rss_daemon_end_kib")
        ),
    );
    want(
        growth("rss_sched_start_kib", "rss_sched_end_kib") <= 4096.0,
        format!(
            "scx_gearshift RSS grew {} KiB",
            growth("rss_sched_start_kib", "rss_sched_end_kib")
        ),
    );
    problems
}
