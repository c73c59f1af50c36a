//! A connection to gearshiftd, and the reads the commands share.

use std::io::IsTerminal;

use gearshift_dbus::{
    model::stats_from_dict, settings::Prompt, DaemonProperties, Error as DbusError, ProfileInfo,
    Scheduler1Proxy,
};
use gearshift_i18n::{fill_named, gettext};
use zbus::proxy::CacheProperties;
use zbus::Connection;

use crate::error::CliError;
use crate::output::{ProfileEntry, ProfilesView, StatsView};
use gearshiftctl::cli::BusKind;

/// A connection to gearshiftd and the bus it was reached on (for error sentences).
pub struct Ctl {
    pub proxy: Scheduler1Proxy<'static>,
    pub bus: BusKind,
    /// polkit may ask for a password only when someone at a terminal can type it.
    pub prompt: Prompt,
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
        let prompt = if std::io::stdin().is_terminal() {
            Prompt::Allowed
        } else {
            Prompt::Never
        };
        Ok(Self { proxy, bus, prompt })
    }

    /// Turns a call's error into the CLI's.
    pub fn check<T, E: Into<DbusError>>(&self, result: Result<T, E>) -> Result<T, CliError> {
        result.map_err(|e| CliError::daemon(e, self.bus))
    }

    /// All of the daemon's properties.
    pub async fn properties(&self) -> Result<DaemonProperties, CliError> {
        self.check(DaemonProperties::read(self.proxy.inner().connection()).await)
    }

    /// The profiles, strictly: an entry that does not parse is the daemon's error.
    pub async fn profiles(&self) -> Result<ProfilesView, CliError> {
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

    pub async fn stats(&self) -> Result<StatsView, CliError> {
        let dict = self.check(self.proxy.get_stats().await)?;
        Ok(StatsView {
            stats: stats_from_dict(&dict),
            one_line: false,
        })
    }
}
