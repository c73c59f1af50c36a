//! Choosing the profile: the user's calls, holds, and the automatic rules (power source,
//! power-profiles-daemon; power_follow.rs), all through one transition that puts the effective
//! choice in effect in the running scheduler first and changes nothing if it refuses.

use std::sync::Arc;

use crate::clean_runs;
use crate::config::{Config, ProfileConfig};
use crate::known_good::Target;
use crate::model::Model;
use crate::persist::SavedState;
use crate::rules::{Choice, Hold, Reason, Rules};
use crate::state::DaemonState;
use crate::sysfs::SchedExt;
use gearshift_dbus::{Error, SchedulerState, CUSTOM_PROFILE};
use gearshift_types::{Mode, Settings};

/// Most holds at once; a runaway client cannot grow the daemon.
const MAX_HOLDS: usize = 64;
/// Longest reason or application id kept.
const MAX_TEXT: usize = 256;

pub(crate) fn settings_of(p: &ProfileConfig) -> Settings {
    Settings {
        mode: p.mode,
        preemption: p.preemption,
    }
}

pub(crate) fn target(p: &ProfileConfig) -> (String, Settings) {
    (p.name.clone(), settings_of(p))
}

/// The profile choice: the user's calls and holds, and the one transition every change goes
/// through (the automatic rules' too, power_follow.rs).
#[derive(Clone)]
pub struct Choices {
    state: Arc<DaemonState>,
}

impl Choices {
    pub fn new(state: Arc<DaemonState>) -> Self {
        Self { state }
    }

    /// Applies `change` to the rules and puts the resulting choice in effect.
    pub(crate) async fn transition<T>(
        &self,
        change: impl FnOnce(&mut Rules) -> T,
    ) -> Result<T, Error> {
        let mut sup = self.state.supervision.lock().await;
        let mut rules = sup.rules.clone();
        let out = change(&mut rules);
        let effective = rules.effective();
        let model = self.state.model();
        // While a kernel-requested restart is under way, the change is applied on re-attach.
        if sup.has_child()
            && model.state == SchedulerState::Running
            && effective.settings != model.settings
        {
            if let Err(e) = self.state.control.apply(effective.settings).await {
                let restarting = sup.child_alive() && !self.state.kernel_enabled();
                if !restarting {
                    return Err(Error::Failed(format!(
                        "The scheduler did not take the change: {e}."
                    )));
                }
                tracing::info!("the scheduler is re-attaching; the change follows then");
            }
        }
        sup.rules = rules;
        let holds = sup.rules.holds().to_vec();
        let changed = effective.settings != model.settings || effective.profile != model.profile;
        let note_ended = changed
            && clean_runs::target_changed(
                &self.state,
                &mut sup,
                Target {
                    profile: effective.profile.clone(),
                    settings: effective.settings,
                },
            );
        // Saved under the lock (the base and the known good profile live there); the model
        // is published after it is released, as before.
        self.state.save(&sup);
        drop(sup);
        if changed {
            tracing::info!(
                "profile {} ({}): mode {}, preemption {}",
                effective.profile,
                effective.reason.as_str(),
                effective.settings.mode,
                if effective.settings.preemption {
                    "on"
                } else {
                    "off"
                }
            );
        }
        self.state
            .update(|m| {
                m.show_choice(effective, holds);
                // A fallback's explanation ends with the fallback.
                if note_ended && m.state == SchedulerState::Running {
                    m.reason.clear();
                }
            })
            .await;
        Ok(out)
    }

    fn find_profile(&self, name: &str) -> Result<&ProfileConfig, Error> {
        self.state.config.profile(name).ok_or_else(|| {
            let names: Vec<&str> = self
                .state
                .config
                .profiles
                .iter()
                .map(|p| p.name.as_str())
                .collect();
            Error::InvalidProfile(format!(
                "There is no profile named {name:?}. Profiles: {}.",
                names.join(", ")
            ))
        })
    }

    async fn user_choice(&self, profile: String, settings: Settings) -> Result<(), Error> {
        let released = self
            .transition(|r| r.user_choice(profile, settings))
            .await?;
        self.state.announce_released(&released).await;
        Ok(())
    }

    pub async fn set_profile(&self, name: &str) -> Result<(), Error> {
        let (name, settings) = target(self.find_profile(name)?);
        self.user_choice(name, settings).await
    }

    pub async fn set_mode(&self, mode: &str) -> Result<(), Error> {
        let mode: Mode = mode
            .parse()
            .map_err(|e: gearshift_types::UnknownMode| Error::InvalidMode(format!("{e}.")))?;
        let settings = Settings {
            mode,
            ..self.state.model().settings
        };
        self.user_choice(self.profile_for(settings), settings).await
    }

    pub async fn set_preemption(&self, preemption: bool) -> Result<(), Error> {
        let settings = Settings {
            preemption,
            ..self.state.model().settings
        };
        self.user_choice(self.profile_for(settings), settings).await
    }

    /// The current profile if it has these settings, else the first that has, else "custom".
    fn profile_for(&self, settings: Settings) -> String {
        let current = self.state.model().profile;
        let matches = |p: &&ProfileConfig| settings_of(p) == settings;
        let profiles = &self.state.config.profiles;
        profiles
            .iter()
            .filter(matches)
            .find(|p| p.name == current)
            .or_else(|| profiles.iter().find(matches))
            .map_or_else(|| CUSTOM_PROFILE.to_owned(), |p| p.name.clone())
    }

    /// Holds `profile` for `owner` until released or until `owner` leaves the bus.
    pub async fn hold_profile(
        &self,
        profile: &str,
        reason: &str,
        application_id: &str,
        owner: &str,
    ) -> Result<u32, Error> {
        let (profile, settings) = target(self.find_profile(profile)?);
        if reason.len() > MAX_TEXT || application_id.len() > MAX_TEXT {
            return Err(Error::InvalidArgs(format!(
                "reason and application_id may have at most {MAX_TEXT} bytes"
            )));
        }
        if self.state.model().holds.len() >= MAX_HOLDS {
            return Err(Error::LimitExceeded(format!(
                "There are already {MAX_HOLDS} holds, the most allowed."
            )));
        }
        let hold = Hold {
            cookie: 0,
            profile,
            settings,
            reason: reason.to_owned(),
            application_id: application_id.to_owned(),
            owner: owner.to_owned(),
        };
        let cookie = self.transition(|r| r.hold(hold)).await?;
        tracing::info!("hold {cookie} of {application_id} ({owner}): {reason}");
        Ok(cookie)
    }

    pub async fn release_profile(&self, cookie: u32, owner: &str) -> Result<(), Error> {
        if !self.transition(|r| r.release(cookie, Some(owner))).await? {
            return Err(Error::InvalidArgs(format!("No hold {cookie} of yours")));
        }
        self.state.announce_released(&[cookie]).await;
        Ok(())
    }

    /// A client left the bus: its holds end.
    pub async fn holder_left(&self, owner: &str) {
        if !self.state.model().holds.iter().any(|h| h.owner == owner) {
            return;
        }
        match self.transition(|r| r.release_owner(owner)).await {
            Ok(released) => self.state.announce_released(&released).await,
            Err(e) => tracing::warn!("releasing the holds of {owner}: {e}"),
        }
    }
}

/// A saved profile as it is today: a named one with the config's settings, "custom" with the
/// saved ones; None (with a warning) when the named profile no longer exists.
fn restore(config: &Config, profile: &str, mode: Mode, preemption: bool) -> Option<Target> {
    if profile == CUSTOM_PROFILE {
        return Some(Target {
            profile: profile.to_owned(),
            settings: Settings { mode, preemption },
        });
    }
    match config.profile(profile) {
        Some(p) => Some(Target {
            profile: p.name.clone(),
            settings: settings_of(p),
        }),
        None => {
            tracing::warn!("saved profile {profile:?} no longer exists");
            None
        }
    }
}

/// The model, rules and last known good profile at start: the saved choice if it is still
/// valid, else the default.
pub fn initial_model(
    config: &Config,
    saved: Option<SavedState>,
    sched_ext: &SchedExt,
) -> (Model, Rules, Option<Target>) {
    let default = config
        .profile(&config.default_profile)
        .or_else(|| config.profiles.first());
    let fallback = Choice {
        profile: default.map_or_else(|| CUSTOM_PROFILE.to_owned(), |p| p.name.clone()),
        settings: default.map_or_else(Settings::default, settings_of),
        reason: Reason::Default,
    };
    let restored = saved.as_ref().and_then(|s| {
        let reason = Reason::restored(&s.profile_reason);
        let t = restore(config, &s.profile, s.mode, s.preemption)?;
        Some(Choice {
            profile: t.profile,
            settings: t.settings,
            reason,
        })
    });
    let known_good = saved
        .as_ref()
        .and_then(|s| s.known_good.as_ref())
        .and_then(|k| restore(config, &k.profile, k.mode, k.preemption));
    let base = restored.unwrap_or(fallback);
    let (state, reason) = if sched_ext.supported() {
        (SchedulerState::Stopped, "Not started yet".to_owned())
    } else {
        (SchedulerState::Unsupported, sched_ext.unsupported_reason())
    };
    let model = Model {
        state,
        reason,
        profile: base.profile.clone(),
        settings: base.settings,
        profile_reason: base.reason,
        auto_power_source: saved
            .as_ref()
            .map_or(config.auto_power_source, |s| s.auto_power_source),
        follow_power_profile: saved
            .as_ref()
            .map_or(config.follow_power_profile, |s| s.follow_power_profile),
        on_battery: false,
        power_profile: String::new(),
        holds: Vec::new(),
        foreground: None,
        foreground_boost: config.foreground_boost(&base.profile),
    };
    (model, Rules::new(base), known_good)
}
