//! `stats --watch`: subscribe, print each Stats signal, unsubscribe on Ctrl-C.

use futures_util::StreamExt;
use gearshift_dbus::model::stats_from_dict;
use gearshift_i18n::{fill_named, gettext};
use tokio::signal::unix::{signal, SignalKind};

use crate::ctl::Ctl;
use crate::error::CliError;
use crate::output::{emit, StatsView};

/// Prints a line (or JSON object) per Stats signal until Ctrl-C or SIGTERM.
pub async fn run(ctl: &Ctl, interval_ms: u32, json: bool) -> Result<(), CliError> {
    let p = &ctl.proxy;
    // Listen before subscribing, so the first update is not missed.
    let mut updates = ctl.check(p.receive_stats().await)?;
    let mut exits = ctl.check(p.receive_scheduler_exited().await)?;
    let mut fallbacks = ctl.check(p.receive_fell_back().await)?;
    let mut owner = ctl.check(p.inner().receive_owner_changed().await)?;
    let mut interrupt = signal(SignalKind::interrupt())?;
    let mut terminate = signal(SignalKind::terminate())?;
    let cookie = ctl.check(p.subscribe_stats(interval_ms).await)?;

    let ended = loop {
        tokio::select! {
            _ = interrupt.recv() => break Ok(()),
            _ = terminate.recv() => break Ok(()),
            update = updates.next() => {
                let Some(update) = update else { break Err(CliError::Gone(ctl.bus)) };
                let args = match update.args() {
                    Ok(args) => args,
                    Err(e) => break Err(CliError::Protocol(format!("Stats signal: {e}"))),
                };
                let view = StatsView { stats: stats_from_dict(args.stats()), one_line: true };
                if let Err(e) = emit(&view, json) {
                    break Err(e.into());
                }
            }
            exit = exits.next() => {
                if let Some(args) = exit.as_ref().and_then(|signal| signal.args().ok()) {
                    let template = if *args.will_restart() {
                        gettext("the scheduler exited: {reason} (restarting)")
                    } else {
                        gettext("the scheduler exited: {reason} (not restarting)")
                    };
                    let text = fill_named(&template, &[("reason", args.reason())]);
                    eprintln!("gearshiftctl: {text}");
                }
            }
            fallback = fallbacks.next() => {
                if let Some(args) = fallback.as_ref().and_then(|signal| signal.args().ok()) {
                    let text = fill_named(
                        &gettext(
                            "profile {failed} failed {failures} times; fell back to {fallback}, the last that worked: {reason}",
                        ),
                        &[
                            ("failed", args.failed_profile()),
                            ("failures", &args.failures().to_string()),
                            ("fallback", args.fallback_profile()),
                            ("reason", args.reason()),
                        ],
                    );
                    eprintln!("gearshiftctl: {text}");
                }
            }
            new_owner = owner.next() => {
                if new_owner.flatten().is_none() {
                    break Err(CliError::Gone(ctl.bus));
                }
            }
        }
    };
    match ended {
        // The daemon dropped the subscription with our name, or never had it.
        Err(CliError::Gone(bus)) => Err(CliError::Gone(bus)),
        Err(e) => {
            // Unsubscribing is a courtesy here: the first error is the one to report.
            let _ = p.unsubscribe_stats(cookie).await;
            Err(e)
        }
        Ok(()) => ctl.check(p.unsubscribe_stats(cookie).await),
    }
}
