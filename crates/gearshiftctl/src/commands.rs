//! Each command as calls on `io.github.gearshift.Scheduler1`, answering with a view.

use std::future::Future;
use std::process::ExitCode;

use gearshift_dbus::{model::stats_from_dict, Error as DbusError, ProfileInfo, Scheduler1Proxy};
use gearshift_i18n::{fill_named, gettext};
use zbus::proxy::CacheProperties;
use zbus::Connection;

use crate::error::CliError;
use crate::output::{
    emit, Focus, ProfileEntry, ProfilesView, SettingsView, StateView, StatsView, StatusView,
};
use crate::{hold, watch, BusKind, Cli, Command};

/// A connection to gearshiftd and the bus it was reached on (for error sentences).
pub struct Ctl {
    pub proxy: Scheduler1Proxy<'static>,
    pub bus: BusKind,
}

impl Ctl {
    pub async fn connect(bus: BusKind) -> Result<Self, CliError> {
        let conn = match bus {
            BusKind::System => Connection::system().await,
            BusKind::Session => Connection::session().await,
        }
        .map_err(|source| CliError::Connect { bus, source })?;
        // Every read goes to the daemon: a one-shot client has no use for a property cache.
        let proxy = Scheduler1Proxy::builder(&conn)
            .cache_properties(CacheProperties::No)
            .build()
            .await
            .map_err(|e| CliError::daemon(e, bus))?;
        Ok(Self { proxy, bus })
    }

    /// Turns a call's error into the CLI's.
    pub fn check<T, E: Into<DbusError>>(&self, result: Result<T, E>) -> Result<T, CliError> {
        result.map_err(|e| CliError::daemon(e, self.bus))
    }

    async fn status(&self) -> Result<StatusView, CliError> {
        let p = &self.proxy;
        let (state, state_reason, profile, mode, preemption) = self.check(tokio::try_join!(
            p.state(),
            p.state_reason(),
            p.profile(),
            p.mode(),
            p.preemption()
        ))?;
        let (profile_reason, auto_power_source, follow_power_profile, sched_ext_supported, version) =
            self.check(tokio::try_join!(
                p.profile_reason(),
                p.auto_power_source(),
                p.follow_power_profile(),
                p.sched_ext_supported(),
                p.version()
            ))?;
        Ok(StatusView {
            state,
            state_reason,
            profile,
            profile_reason,
            mode,
            preemption,
            auto_power_source,
            follow_power_profile,
            sched_ext_supported,
            version,
        })
    }

    async fn settings(&self, focus: Focus) -> Result<SettingsView, CliError> {
        let p = &self.proxy;
        let (profile, mode, preemption) =
            self.check(tokio::try_join!(p.profile(), p.mode(), p.preemption()))?;
        Ok(SettingsView {
            profile,
            mode,
            preemption,
            focus,
        })
    }

    /// `profile`, `mode`, `preempt`: makes the change if one was asked, then prints the
    /// settings (the value asked about alone, or all of them after a change).
    async fn show_or_set<E: Into<DbusError>>(
        &self,
        set: Option<impl Future<Output = Result<(), E>>>,
        shown: Focus,
        json: bool,
    ) -> Result<(), CliError> {
        let focus = match set {
            Some(call) => {
                self.check(call.await)?;
                Focus::Changed
            }
            None => shown,
        };
        emit(&self.settings(focus).await?, json)?;
        Ok(())
    }

    async fn state(&self) -> Result<StateView, CliError> {
        let p = &self.proxy;
        let (state, state_reason) = self.check(tokio::try_join!(p.state(), p.state_reason()))?;
        Ok(StateView {
            state,
            state_reason,
        })
    }

    /// After start/restart: prints the state, and fails (exit 5) unless the scheduler runs.
    async fn expect_running(&self, json: bool) -> Result<(), CliError> {
        let view = self.state().await?;
        emit(&view, json)?;
        match view.state.as_str() {
            "running" | "starting" => Ok(()),
            state => Err(CliError::daemon(
                DbusError::NotRunning(fill_named(
                    &gettext("the scheduler is not running (state: {state})"),
                    &[("state", state)],
                )),
                self.bus,
            )),
        }
    }

    async fn profiles(&self) -> Result<ProfilesView, CliError> {
        let p = &self.proxy;
        let (active, dicts) = self.check(tokio::try_join!(p.profile(), p.profiles()))?;
        let profiles = dicts
            .iter()
            .enumerate()
            .map(|(i, dict)| {
                let info = ProfileInfo::from_dict(dict).ok_or_else(|| {
                    CliError::Protocol(fill_named(
                        &gettext("entry {index} of Profiles lacks a key or a type"),
                        &[("index", &i.to_string())],
                    ))
                })?;
                Ok(ProfileEntry {
                    active: info.name == active,
                    name: info.name,
                    description: info.description,
                    mode: info.mode,
                    preemption: info.preemption,
                })
            })
            .collect::<Result<_, CliError>>()?;
        Ok(ProfilesView { active, profiles })
    }

    async fn stats(&self) -> Result<StatsView, CliError> {
        let dict = self.check(self.proxy.get_stats().await)?;
        Ok(StatsView {
            stats: stats_from_dict(&dict),
            one_line: false,
        })
    }
}

/// Runs the command line's command and prints its result; the exit code is 0 except for `hold`, which passes on its command's.
pub async fn run(cli: &Cli) -> Result<ExitCode, CliError> {
    let ctl = Ctl::connect(cli.bus).await?;
    let p = &ctl.proxy;
    let json = cli.json;
    match &cli.command {
        Command::Status => emit(&ctl.status().await?, json)?,
        Command::Profile { name } => {
            let set = name.as_deref().map(|name| p.set_profile(name));
            ctl.show_or_set(set, Focus::Profile, json).await?;
        }
        Command::Mode { mode } => {
            let set = mode.map(|mode| p.set_mode(mode.as_str()));
            ctl.show_or_set(set, Focus::Mode, json).await?;
        }
        Command::Preempt { setting } => {
            let set = setting.map(|on| p.set_preemption(on));
            ctl.show_or_set(set, Focus::Preemption, json).await?;
        }
        Command::Stats { watch: false, .. } => emit(&ctl.stats().await?, json)?,
        Command::Stats {
            watch: true,
            interval_ms,
        } => watch::run(&ctl, *interval_ms, json).await?,
        Command::Start => {
            ctl.check(p.start().await)?;
            ctl.expect_running(json).await?;
        }
        Command::Stop => {
            ctl.check(p.stop().await)?;
            emit(&ctl.state().await?, json)?;
        }
        Command::Restart => {
            ctl.check(p.restart().await)?;
            ctl.expect_running(json).await?;
        }
        Command::ListProfiles => emit(&ctl.profiles().await?, json)?,
        Command::Hold {
            profile,
            reason,
            app_id,
            command,
        } => return hold::run(&ctl, profile, reason, app_id, command).await,
    }
    Ok(ExitCode::SUCCESS)
}
