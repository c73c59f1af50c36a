//! scx_gearshift: attach the Gearshift sched_ext scheduler until interrupted.

use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use clap::Parser;
use scx_gearshift::alloc::GlobalArena;
use scx_gearshift::cli::Cli;
use scx_gearshift::session::{self, Options};

#[global_allocator]
static GLOBAL: GlobalArena = GlobalArena;

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
        #[cfg(debug_assertions)]
        debug_fail_in_mode: cli.debug_fail_in_mode,
        #[cfg(not(debug_assertions))]
        debug_fail_in_mode: None,
        #[cfg(debug_assertions)]
        debug_load_delay: cli.debug_load_delay_ms.map(Duration::from_millis),
        #[cfg(not(debug_assertions))]
        debug_load_delay: None,
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
