//! scx_gearshift: attach the Gearshift sched_ext scheduler until interrupted.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use clap::Parser;
use gearshift_types::Mode;
use scx_gearshift::alloc::GlobalArena;
use scx_gearshift::session::{self, Options};

#[global_allocator]
static GLOBAL: GlobalArena = GlobalArena;

/// Gearshift's sched_ext scheduler: BPF dispatch, Rust policy.
#[derive(Parser, Debug)]
#[command(version, about)]
struct Cli {
    /// Longest time slice, in nanoseconds (also the slice with few tasks waiting).
    #[arg(long, default_value_t = 5_000_000, value_parser = clap::value_parser!(u64).range(100_000..=1_000_000_000))]
    slice_max_ns: u64,
    /// Shortest time slice, in nanoseconds, however many tasks wait.
    #[arg(long, default_value_t = 500_000, value_parser = clap::value_parser!(u64).range(10_000..=1_000_000_000))]
    slice_min_ns: u64,
    /// Longest a regular task waits behind interactive ones, in nanoseconds.
    #[arg(long, default_value_t = 5_000_000, value_parser = clap::value_parser!(u64).range(100_000..=10_000_000_000))]
    starvation_ns: u64,
    /// Voluntary context switches per second from which a task counts as interactive.
    #[arg(long, default_value_t = 2)]
    interactive_nvcsw_per_s: u64,
    /// Highest task weight honoured (100 = nice 0; the kernel's range is 1..10000).
    #[arg(long, default_value_t = 1000, value_parser = clap::value_parser!(u64).range(100..=10_000))]
    weight_cap: u64,
    /// Let waking interactive tasks preempt non-interactive ones (true/false).
    #[arg(long, default_value_t = true, action = clap::ArgAction::Set)]
    preemption: bool,
    /// Mode to start in.
    #[arg(long, default_value_t = Mode::Interactive)]
    mode: Mode,
    /// Serve the control protocol (gearshiftd) on this Unix socket.
    #[arg(long)]
    control_socket: Option<PathBuf>,
    /// Longest a runnable task may wait before the kernel ejects the scheduler, in
    /// milliseconds (0: the kernel's default, 30 s).
    #[arg(long, default_value_t = 0, value_parser = clap::value_parser!(u32).range(0..=30_000))]
    watchdog_timeout_ms: u32,
    /// Print lifecycle events ("gearshift-event: attached|restarting") on stderr, for a
    /// supervisor such as gearshiftd.
    #[arg(long)]
    report_events: bool,
    /// Test builds only: stop dispatching after N milliseconds (the watchdog then ejects).
    #[cfg(debug_assertions)]
    #[arg(long, hide = true, value_name = "N")]
    debug_stall_after_ms: Option<u64>,
    /// Print stats every N seconds.
    #[arg(long, value_name = "N")]
    stats: Option<u64>,
    /// Log more (also RUST_LOG).
    #[arg(short, long)]
    verbose: bool,
}

static SHUTDOWN: AtomicBool = AtomicBool::new(false);

extern "C" fn request_shutdown(_: libc::c_int) {
    SHUTDOWN.store(true, Ordering::Relaxed);
}

fn install_signal_handlers() -> nix::Result<()> {
    use nix::sys::signal::{sigaction, SaFlags, SigAction, SigHandler, SigSet, Signal};
    let action = SigAction::new(
        SigHandler::Handler(request_shutdown),
        SaFlags::SA_RESTART,
        SigSet::empty(),
    );
    for sig in [Signal::SIGINT, Signal::SIGTERM] {
        // SAFETY: the handler only stores to an atomic.
        unsafe { sigaction(sig, &action) }?;
    }
    Ok(())
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let default_level = if cli.verbose { "debug" } else { "info" };
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default_level)),
        )
        .with_writer(std::io::stderr)
        .init();
    if cli.slice_min_ns > cli.slice_max_ns {
        eprintln!("scx_gearshift: --slice-min-ns must not exceed --slice-max-ns");
        return ExitCode::from(2);
    }
    if let Err(e) = install_signal_handlers() {
        eprintln!("scx_gearshift: cannot install signal handlers: {e}");
        return ExitCode::FAILURE;
    }
    let opts = Options {
        slice_max_ns: cli.slice_max_ns,
        slice_min_ns: cli.slice_min_ns,
        starvation_ns: cli.starvation_ns,
        interactive_nvcsw_per_s: cli.interactive_nvcsw_per_s,
        weight_cap: cli.weight_cap,
        mode: cli.mode,
        preemption: cli.preemption,
        control_socket: cli.control_socket,
        stats_interval: cli.stats.map(Duration::from_secs),
        watchdog_timeout_ms: cli.watchdog_timeout_ms,
        report_events: cli.report_events,
        #[cfg(debug_assertions)]
        debug_stall_after: cli.debug_stall_after_ms.map(Duration::from_millis),
        #[cfg(not(debug_assertions))]
        debug_stall_after: None,
    };
    // The kernel's exit reason is printed by the session when the scheduler detaches.
    match session::run(&opts, &SHUTDOWN) {
        Ok(_) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("scx_gearshift: {e:#}");
            ExitCode::FAILURE
        }
    }
}
