//! gearshiftd's command line, public so that `cargo xtask man` (xtask/src/man.rs) writes
//! gearshiftd(8) from the same definition.

use std::path::PathBuf;

use clap::Parser;

/// The Gearshift system service: runs the scx_gearshift scheduler and lets users switch its
/// profiles over D-Bus (io.github.gearshift.Scheduler1; also scx_loader's org.scx.Loader, for
/// scxctl, while no scx_loader has that name).
#[derive(Parser, Debug)]
#[command(name = "gearshiftd", version)]
pub struct Cli {
    /// Configuration file.
    #[arg(long, default_value = super::config::DEFAULT_PATH)]
    pub config: PathBuf,
    /// Where the last chosen profile is kept (systemd's StateDirectory).
    #[arg(long, env = "STATE_DIRECTORY", default_value = "/var/lib/gearshift")]
    pub state_dir: PathBuf,
    /// Where the scheduler's control socket lives (systemd's RuntimeDirectory).
    #[arg(long, env = "RUNTIME_DIRECTORY", default_value = "/run/gearshift")]
    pub runtime_dir: PathBuf,
    /// The scheduler binary (overrides the config's scheduler.path).
    #[arg(long)]
    pub scheduler: Option<PathBuf>,
    /// Serve on the session bus instead of the system bus (development).
    #[arg(long)]
    pub session: bool,
    /// Root of sysfs, where /kernel/sched_ext is read (tests point it elsewhere).
    #[arg(long, default_value = "/sys", hide = true)]
    pub sysfs_root: PathBuf,
    /// Root of procfs, where SetForeground's processes are read (tests point it elsewhere).
    #[arg(long, default_value = "/proc", hide = true)]
    pub procfs_root: PathBuf,
    /// Root of the cgroup v2 hierarchy, where their cgroups' ids are read (tests point it
    /// elsewhere).
    #[arg(long, default_value = "/sys/fs/cgroup", hide = true)]
    pub cgroupfs_root: PathBuf,
    /// Log more (also RUST_LOG).
    #[arg(short, long)]
    pub verbose: bool,
}
