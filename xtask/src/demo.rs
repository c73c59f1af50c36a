//! `cargo xtask demo`: in a sched_ext VM, gearshiftd (release build) starts scx_gearshift on a
//! private system bus, and gearshiftctl drives it the way a user would, under load.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};

use gearshift_testkit::bus::{daemon_guest_prelude, write_daemon_run_dir};

/// The guest's narrated session, after the daemon prelude (daemon_guest.sh). Binaries and the
/// run directory come in the environment.
const SCRIPT: &str = r#"
ctl() { echo "\$ gearshiftctl $*"; "$GEARSHIFTCTL" "$@" 2>&1 | sed 's/^/  /'; }

echo "== guest kernel $(uname -r), $(nproc) CPUs; sched_ext: $(cat /sys/kernel/sched_ext/state)"
start_daemon
echo "== gearshiftd started (pid $GSD); it starts scx_gearshift (autostart) and waits for the kernel"
wait_state running
ctl status
echo "   kernel: sched_ext $(cat /sys/kernel/sched_ext/state), ops $(cat /sys/kernel/sched_ext/root/ops)"
ctl list-profiles

echo "== 4 CPU hogs on $(nproc) CPUs, and hackbench, under the interactive profile"
stress-ng --cpu 4 --cpu-method loop -t 60 -q &
LOAD=$!
hackbench -g 4 -l 50 | grep Time
ctl stats

echo "== switching live, under load (each returns once the scheduler has it in effect)"
ctl profile low-power
sleep 2
ctl stats | grep -E 'Mode|CPUs'
ctl mode fifo
ctl preempt off
ctl status
ctl profile interactive

echo "== kill -9 of the scheduler: gearshiftd reports why and restarts it"
kill -9 "$(pgrep -P $GSD scx_gearshift)"
wait_state_leaves running
ctl status
wait_state running
ctl status
kill $LOAD 2>/dev/null

echo "== stop: the kernel's default scheduler takes over"
ctl stop
echo "   kernel: sched_ext $(cat /sys/kernel/sched_ext/state)"
kill -TERM $GSD
sleep 1
echo "== gearshiftd's log (last lines)"
tail -8 /tmp/gsd.log
"#;

/// Where `cargo build --release` puts the binaries.
pub fn release_bin(name: &str) -> Result<PathBuf> {
    let path = crate::bench::target_dir().join("release").join(name);
    if !path.is_file() {
        bail!(
            "{} is missing: cargo build --release --workspace first",
            path.display()
        );
    }
    Ok(path)
}

/// Writes the demo's bus and daemon configs into `run` (shared with the guest); returns the
/// script and the environment it needs.
pub fn prepare(run: &Path) -> Result<(String, Vec<(String, String)>)> {
    let scheduler = release_bin("scx_gearshift")?;
    write_daemon_run_dir(run, "autostart = true", &scheduler, &[])
        .context("writing the demo's bus and daemon configs")?;
    let env = vec![
        ("RUN".to_owned(), run.display().to_string()),
        (
            "GEARSHIFTD".to_owned(),
            release_bin("gearshiftd")?.display().to_string(),
        ),
        (
            "GEARSHIFTCTL".to_owned(),
            release_bin("gearshiftctl")?.display().to_string(),
        ),
    ];
    Ok((format!("{}\n{SCRIPT}", daemon_guest_prelude()), env))
}
