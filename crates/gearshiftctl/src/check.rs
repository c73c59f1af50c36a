//! `check`: start a responsiveness check in gearshiftd, show its progress, print its report.
//! Ctrl-C (or SIGTERM) cancels it and waits until the daemon has put back what ran before.

use std::io::{IsTerminal, Write};
use std::time::Duration;

use futures_util::StreamExt;
use gearshift_dbus::check_text::scheduler_name;
use gearshift_dbus::{CheckOptions, CheckReport};
use gearshift_i18n::{fill_named, gettext};
use tokio::signal::unix::{signal, SignalKind};

use crate::check_view::CheckView;
use crate::ctl::Ctl;
use crate::error::CliError;
use crate::output::emit;

/// How long the daemon gets to put things back after a cancel before we stop waiting.
const CANCEL_GRACE: Duration = Duration::from_secs(60);

pub async fn show_last(ctl: &Ctl, json: bool) -> Result<(), CliError> {
    let dict = ctl.check(ctl.proxy.last_check().await)?;
    match CheckReport::from_dict(&dict) {
        Some(report) => Ok(emit(&CheckView { report }, json)?),
        None if dict.is_empty() => Err(CliError::Unfinished(gettext(
            "no check has been run yet (run: gearshiftctl check)",
        ))),
        None => Err(CliError::Protocol(gettext(
            "LastCheck lacks a key or a type",
        ))),
    }
}

pub async fn run(ctl: &Ctl, options: CheckOptions, json: bool) -> Result<(), CliError> {
    let p = &ctl.proxy;
    // Listen before starting, so neither the first progress nor a quick end is missed.
    let mut progress = ctl.check(p.receive_check_progress().await)?;
    let mut finished = ctl.check(p.receive_check_finished().await)?;
    let mut owner = ctl.check(p.inner().receive_owner_changed().await)?;
    let mut interrupt = signal(SignalKind::interrupt())?;
    let mut terminate = signal(SignalKind::terminate())?;
    ctl.check(p.start_check(options.to_dict()).await)?;
    let mut bar = Progress::new();
    let mut cancelled = false;
    let (completed, message) = loop {
        tokio::select! {
            _ = interrupt.recv(), if !cancelled => {
                cancelled = true;
                bar.say(&gettext("cancelling; putting back what ran before…"));
                ctl.check(p.cancel_check().await)?;
            }
            _ = terminate.recv(), if !cancelled => {
                cancelled = true;
                ctl.check(p.cancel_check().await)?;
            }
            _ = tokio::time::sleep(CANCEL_GRACE), if cancelled => {
                break (false, gettext("gearshiftd did not confirm the end of the check"));
            }
            update = progress.next() => {
                if let Some(args) = update.as_ref().and_then(|u| u.args().ok()) {
                    bar.show(*args.fraction(), args.scheduler());
                }
            }
            end = finished.next() => {
                let Some(end) = end else { break (false, String::new()) };
                let args = end.args().map_err(|e| CliError::Protocol(format!("CheckFinished: {e}")))?;
                break (*args.completed(), args.message().clone());
            }
            new_owner = owner.next() => {
                if new_owner.flatten().is_none() {
                    bar.clear();
                    return Err(CliError::Gone(ctl.bus));
                }
            }
        }
    };
    bar.clear();
    if completed {
        return show_last(ctl, json).await;
    }
    Err(CliError::Unfinished(if cancelled {
        gettext("check cancelled; what ran before runs again")
    } else {
        fill_named(
            &gettext("the check ended early: {reason}"),
            &[("reason", &message)],
        )
    }))
}

/// The progress line on stderr: redrawn in place on a terminal, a line per scheduler
/// otherwise.
struct Progress {
    tty: bool,
    last_scheduler: String,
    drawn: bool,
}

impl Progress {
    fn new() -> Self {
        Self {
            tty: std::io::stderr().is_terminal(),
            last_scheduler: String::new(),
            drawn: false,
        }
    }

    fn show(&mut self, fraction: f64, scheduler: &str) {
        let what = fill_named(
            &gettext("measuring {scheduler}"),
            &[("scheduler", &scheduler_name(scheduler))],
        );
        let pct = (fraction.clamp(0.0, 1.0) * 100.0).round() as u32;
        let mut err = std::io::stderr().lock();
        if self.tty {
            let filled = (pct / 5) as usize;
            let bar = format!(
                "[{}{}]",
                "#".repeat(filled),
                " ".repeat(20 - filled.min(20))
            );
            let _ = write!(err, "\r\x1b[2K{bar} {pct:3} %  {what}");
            self.drawn = true;
        } else if scheduler != self.last_scheduler {
            let _ = writeln!(err, "{pct:3} %  {what}");
        }
        let _ = err.flush();
        self.last_scheduler = scheduler.to_owned();
    }

    fn say(&mut self, text: &str) {
        self.clear();
        eprintln!("gearshiftctl: {text}");
    }

    fn clear(&mut self) {
        if self.drawn {
            eprint!("\r\x1b[2K");
            self.drawn = false;
        }
    }
}
