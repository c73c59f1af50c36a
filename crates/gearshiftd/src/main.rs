//! gearshiftd: supervises scx_gearshift and serves io.github.gearshift.Scheduler1.
//!
//! The D-Bus layer and the watchers call the core; the core decides, drives the scheduler
//! through its own outlets, and tells clients what happened as notices. It never names the
//! bus nor the services it is told about.
//!
//! | part | files | does |
//! | --- | --- | --- |
//! | D-Bus layer (translates) | iface.rs, scx_loader.rs (+ modes.rs), bus_signals.rs, polkit.rs | authorizes calls and hands them to the core; turns its notices into PropertiesChanged and signals |
//! | watchers (adapters that feed in) | power.rs (UPower, power-profiles-daemon), sleep.rs (logind) | follow other services and report what they say to the core |
//! | core (decides) | daemon.rs (supervision), choices.rs, check.rs (the responsiveness check), foreground.rs, power_follow.rs, clean_runs.rs, stats.rs, all over state.rs; model.rs, notices.rs, supervision.rs; rules.rs, known_good.rs, restart.rs, battery_level.rs | keeps the model, decides what runs with which settings, emits notices |
//! | outlets (adapters the core drives) | child.rs (the scheduler process), control.rs (its control socket), sysfs.rs (the kernel's sched_ext), processes.rs (procfs and cgroupfs) | run and ask the scheduler, and report its events back |
//!
//! Files read from disk (config.rs, persist.rs) and the command line (cli.rs) live in the library
//! part, src/lib.rs.

mod battery_level;
mod bus_signals;
mod check;
mod child;
mod choices;
mod clean_runs;
mod control;
mod daemon;
mod foreground;
mod iface;
mod known_good;
mod model;
mod notices;
mod polkit;
mod power;
mod power_follow;
mod processes;
mod restart;
mod rules;
mod scx_loader;
mod sleep;
mod state;
mod stats;
mod supervision;
mod sysfs;

// Parsed files live in the library part (src/lib.rs) so that they can be fuzzed, the command
// line so that the manual page is written from it.
use gearshiftd::{cli, config, persist};

use std::io::IsTerminal;
use std::process::ExitCode;

use anyhow::Context;
use clap::Parser;
use gearshift_dbus::{BUS_NAME, OBJECT_PATH};
use tokio::signal::unix::{signal, SignalKind};
use tracing_subscriber::prelude::*;

use crate::check::Checks;
use crate::cli::Cli;
use crate::config::Config;
use crate::daemon::{Daemon, Paths};

fn init_logging(verbose: bool) {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| {
        tracing_subscriber::EnvFilter::new(if verbose { "debug" } else { "info" })
    });
    // Under systemd, log straight to the journal (with levels); elsewhere to stderr.
    let journald = std::env::var_os("JOURNAL_STREAM").and_then(|_| tracing_journald::layer().ok());
    let registry = tracing_subscriber::registry().with(filter);
    match journald {
        Some(layer) => registry.with(layer).init(),
        None => registry
            .with(
                tracing_subscriber::fmt::layer()
                    .with_writer(std::io::stderr)
                    .with_ansi(std::io::stderr().is_terminal()),
            )
            .init(),
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    let cli = Cli::parse();
    init_logging(cli.verbose);
    match run(cli).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            tracing::error!("{e:#}");
            ExitCode::FAILURE
        }
    }
}

async fn run(cli: Cli) -> anyhow::Result<()> {
    let mut config = Config::load_or_default(&cli.config);
    if let Some(path) = cli.scheduler {
        config.scheduler.path = path;
    }
    let paths = Paths {
        state_dir: cli.state_dir,
        runtime_dir: cli.runtime_dir,
        sysfs_root: cli.sysfs_root,
        procfs_root: cli.procfs_root,
        cgroupfs_root: cli.cgroupfs_root,
    };
    std::fs::create_dir_all(&paths.runtime_dir)
        .with_context(|| format!("creating {}", paths.runtime_dir.display()))?;
    let autostart = config.autostart;
    let state_dir = paths.state_dir.clone();
    let daemon = Daemon::new(config, &paths);
    let checks = Checks::new(daemon.clone(), state_dir);
    // A check cut short by a crash leaves the scheduler stopped or on a held profile: the
    // scheduler starts again if it ran before the check, autostart or not.
    let autostart = autostart || checks.recover_interrupted() == Some(true);

    let builder = if cli.session {
        zbus::connection::Builder::session()?
    } else {
        zbus::connection::Builder::system()?
    };
    let conn = builder
        .serve_at(
            OBJECT_PATH,
            iface::Scheduler1::new(daemon.clone(), checks.clone()),
        )?
        .build()
        .await
        .context("connecting to the bus")?;
    if let Some(notices) = daemon.listen() {
        tokio::spawn(bus_signals::relay(conn.clone(), notices));
    }
    tokio::spawn(iface::watch_departures(
        conn.clone(),
        daemon.clone(),
        checks.clone(),
    ));
    tokio::spawn(power::follow(conn.clone(), daemon.power.clone()));
    tokio::spawn(sleep::follow(conn.clone(), daemon.clone()));
    // The name last: once it is owned (systemd's readiness for Type=dbus), calls work.
    conn.request_name(BUS_NAME)
        .await
        .with_context(|| format!("owning {BUS_NAME} (is another gearshiftd running?)"))?;
    let _ = sd_notify::notify(false, &[sd_notify::NotifyState::Ready]);
    tracing::info!("serving {BUS_NAME}");
    if daemon.config().compat.scx_loader {
        scx_loader::serve(&conn, daemon.clone()).await;
    } else {
        tracing::info!(
            "not serving {}: [compat] scx_loader = false",
            scx_loader::BUS_NAME
        );
    }

    if !daemon.sched_ext_supported() {
        tracing::warn!("{}", daemon.model().reason);
    } else if autostart {
        let d = daemon.clone();
        tokio::spawn(async move {
            if let Err(e) = d.start().await {
                tracing::error!("autostart: {e}");
            }
        });
    }

    let mut term = signal(SignalKind::terminate())?;
    let mut int = signal(SignalKind::interrupt())?;
    tokio::select! {
        _ = term.recv() => {},
        _ = int.recv() => {},
    }
    tracing::info!("shutting down");
    let _ = sd_notify::notify(false, &[sd_notify::NotifyState::Stopping]);
    daemon.shutdown().await;
    Ok(())
}
