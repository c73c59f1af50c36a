//! Each command as calls on `io.github.gearshift.Scheduler1`, answering with a view.

use std::future::Future;
use std::process::ExitCode;

use gearshift_dbus::{settings, Error as DbusError, SchedulerState};
use gearshift_i18n::{fill_named, gettext};

use crate::ctl::Ctl;
use crate::error::CliError;
use crate::output::{emit, Focus, SettingsView, StateView, StatusView};
use crate::{check, hold, watch};
use gearshiftctl::cli::{Cli, Command};

/// `profile`, `mode`, `preempt`: makes the change if one was asked, then prints the settings
/// (the value asked about alone, or all of them after a change).
async fn show_or_set(
    ctl: &Ctl,
    set: Option<impl Future<Output = Result<(), DbusError>>>,
    shown: Focus,
    json: bool,
) -> Result<(), CliError> {
    let focus = match set {
        Some(call) => {
            ctl.check(call.await)?;
            Focus::Changed
        }
        None => shown,
    };
    emit(&SettingsView::of(&ctl.properties().await?, focus), json)?;
    Ok(())
}

/// After start/restart: prints the state, and fails (exit 5) unless the scheduler runs.
async fn expect_running(ctl: &Ctl, json: bool) -> Result<(), CliError> {
    let daemon = ctl.properties().await?;
    emit(&StateView::of(&daemon), json)?;
    match daemon.state {
        SchedulerState::Running | SchedulerState::Starting => Ok(()),
        state => Err(CliError::daemon(
            DbusError::NotRunning(fill_named(
                &gettext("the scheduler is not running (state: {state})"),
                &[("state", state.as_str())],
            )),
            ctl.bus,
        )),
    }
}

/// Runs the command line's command and prints its result; the exit code is 0 except for `hold`, which passes on its command's.
pub async fn run(cli: &Cli) -> Result<ExitCode, CliError> {
    let ctl = Ctl::connect(cli.bus).await?;
    let p = &ctl.proxy;
    let prompt = ctl.prompt;
    let json = cli.json;
    match &cli.command {
        Command::Status => emit(
            &StatusView {
                daemon: ctl.properties().await?,
            },
            json,
        )?,
        Command::Profile { name } => {
            let set = name
                .as_deref()
                .map(|name| settings::set_profile(p, name, prompt));
            show_or_set(&ctl, set, Focus::Profile, json).await?;
        }
        Command::Mode { mode } => {
            let set = mode.map(|mode| settings::set_mode(p, mode.as_str(), prompt));
            show_or_set(&ctl, set, Focus::Mode, json).await?;
        }
        Command::Preempt { setting } => {
            let set = setting.map(|on| settings::set_preemption(p, on, prompt));
            show_or_set(&ctl, set, Focus::Preemption, json).await?;
        }
        Command::Stats { watch: false, .. } => emit(&ctl.stats().await?, json)?,
        Command::Stats {
            watch: true,
            interval_ms,
        } => watch::run(&ctl, *interval_ms, json).await?,
        Command::Start => {
            ctl.check(p.start().await)?;
            expect_running(&ctl, json).await?;
        }
        Command::Stop => {
            ctl.check(p.stop().await)?;
            emit(&StateView::of(&ctl.properties().await?), json)?;
        }
        Command::Restart => {
            ctl.check(p.restart().await)?;
            expect_running(&ctl, json).await?;
        }
        Command::ListProfiles => emit(&ctl.profiles().await?, json)?,
        Command::Check { last: true, .. } => check::show_last(&ctl, json).await?,
        Command::Check {
            profiles,
            seconds,
            allow_battery,
            last: false,
        } => {
            let options = gearshift_dbus::CheckOptions {
                profiles: profiles.clone(),
                seconds: *seconds,
                allow_battery: *allow_battery,
            };
            check::run(&ctl, options, json).await?
        }
        Command::Hold {
            profile,
            reason,
            app_id,
            command,
        } => return hold::run(&ctl, profile, reason, app_id, command).await,
    }
    Ok(ExitCode::SUCCESS)
}
