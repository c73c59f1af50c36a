//! scx_gearshift's command line, public so that `cargo xtask man` (xtask/src/man.rs) writes
//! scx_gearshift(8) from the same definition.

use std::path::PathBuf;

use clap::Parser;
use gearshift_types::Mode;

use crate::bpf::intf;

/// Gearshift's sched_ext scheduler: BPF dispatch, Rust policy.
#[derive(Parser, Debug)]
#[command(name = "scx_gearshift", version)]
pub struct Cli {
    /// Longest time slice, in nanoseconds (also the slice with few tasks waiting).
    #[arg(long, default_value_t = intf::gs_consts_GS_DFL_SLICE_MAX_NS as u64, value_parser = clap::value_parser!(u64).range(100_000..=1_000_000_000))]
    pub slice_max_ns: u64,
    /// Shortest time slice, in nanoseconds, however many tasks wait.
    #[arg(long, default_value_t = intf::gs_consts_GS_DFL_SLICE_MIN_NS as u64, value_parser = clap::value_parser!(u64).range(10_000..=1_000_000_000))]
    pub slice_min_ns: u64,
    /// Longest the regular tasks wait behind interactive ones while no CPU runs one, in
    /// nanoseconds.
    // 10 ms, not one 5 ms slice: at 5 ms the guard fired every 5-6 ms under CPU hogs at 2
    // vCPUs, each time putting a hog's slice ahead of the interactive tasks waiting; at 10 ms
    // the periodic tasks' wakeup p99 there was 0.5-0.8x the 5 ms value in four VM runs
    // (docs/benchmarks.md, fourteenth and fifteenth passes; hackbench paid 5-30 %), and the
    // foreground boost held as well or better. bpfland and cosmos bound the same lag at
    // 20-40 ms.
    #[arg(long, default_value_t = intf::gs_consts_GS_DFL_STARVATION_NS as u64, value_parser = clap::value_parser!(u64).range(100_000..=10_000_000_000))]
    pub starvation_ns: u64,
    /// Voluntary context switches per second from which a task counts as interactive.
    #[arg(long, default_value_t = 2)]
    pub interactive_nvcsw_per_s: u64,
    /// Highest task weight honoured (100 = nice 0; the kernel's range is 1..10000).
    #[arg(long, default_value_t = intf::gs_consts_GS_DFL_WEIGHT_CAP as u64, value_parser = clap::value_parser!(u64).range(100..=10_000))]
    pub weight_cap: u64,
    /// Let waking interactive tasks preempt non-interactive ones (true/false).
    #[arg(long, default_value_t = true, action = clap::ArgAction::Set)]
    pub preemption: bool,
    /// Mode to start in.
    #[arg(long, default_value_t = Mode::Interactive)]
    pub mode: Mode,
    /// Serve the control protocol (gearshiftd) on this Unix socket.
    #[arg(long)]
    pub control_socket: Option<PathBuf>,
    /// Longest a runnable task may wait before the kernel ejects the scheduler, in
    /// milliseconds (0: the kernel's default, 30 s).
    #[arg(long, default_value_t = 0, value_parser = clap::value_parser!(u32).range(0..=30_000))]
    pub watchdog_timeout_ms: u32,
    /// Print lifecycle events ("gearshift-event: attached|restarting") on stderr, for a
    /// supervisor such as gearshiftd.
    #[arg(long)]
    pub report_events: bool,
    /// Test builds only: stop dispatching after N milliseconds (the watchdog then ejects).
    #[cfg(debug_assertions)]
    #[arg(long, hide = true, value_name = "N")]
    pub debug_stall_after_ms: Option<u64>,
    /// Test builds only: stop dispatching whenever MODE is in effect (the watchdog then
    /// ejects), so that one mode fails on purpose.
    #[cfg(debug_assertions)]
    #[arg(long, hide = true, value_name = "MODE")]
    pub debug_fail_in_mode: Option<Mode>,
    /// Test builds only: wait N milliseconds between reading the CPU topology and loading,
    /// so that a test can hotplug a CPU in between.
    #[cfg(debug_assertions)]
    #[arg(long, hide = true, value_name = "N")]
    pub debug_load_delay_ms: Option<u64>,
    /// Print stats every N seconds.
    #[arg(long, value_name = "N")]
    pub stats: Option<u64>,
    /// Log more (also RUST_LOG).
    #[arg(short, long)]
    pub verbose: bool,
}
