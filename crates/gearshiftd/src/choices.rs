//! Choosing the profile: the user's calls, holds, and the automatic rules (power source,
//! power-profiles-daemon), all through one transition that puts the effective choice in
//! effect in the running scheduler first and changes nothing if it refuses.

use std::sync::Arc;

use gearshift_dbus::{Error, SchedulerState, CUSTOM_PROFILE};
use gearshift_types::{Mode, Settings};
use tokio::sync::mpsc;
use zbus::zvariant::{OwnedValue, Value};
use zbus::Connection;

use crate::config::{Config, ProfileConfig};
use crate::daemon::Daemon;
use crate::known_good::Target;
use crate::model::Model;
use crate::notices::Notice;
use crate::persist::SavedState;
use crate::power::{self, PPD_ACTIVE_PROFILE, PPD_LEGACY_ACTIVE_PROFILE, UPOWER_ON_BATTERY};
use crate::rules::{Choice, Hold, Reason, Rules};
use crate::sysfs::SchedExt;

pub(crate) mod battery;

/// Most holds at once; a runaway client cannot grow the daemon.
const MAX_HOLDS: usize = 64;
/// Longest reason or application id kept.
const MAX_TEXT: usize = 256;

fn settings_of(p: &ProfileConfig) -> Settings {
    Settings {
        mode: p.mode,
        preemption: p.preemption,
    }
}

fn target(p: &ProfileConfig) -> (String, Settings) {
    (p.name.clone(), settings_of(p))
}

impl Daemon {
    /// Applies `change` to the rules and puts the resulting choice in effect.
    async fn transition<T>(&self, change: impl FnOnce(&mut Rules) -> T) -> Result<T, Error> {
        let mut sup = self.supervision.lock().await;
        let mut rules = sup.rules.clone();
        let out = change(&mut rules);
        let effective = rules.effective();
        let model = self.model();
        // While a kernel-requested restart is under way, the change is applied on re-attach.
        if sup.has_child()
            && model.state == SchedulerState::Running
            && effective.settings != model.settings
        {
            if let Err(e) = self.control.apply(effective.settings).await {
                let restarting = sup.child_alive() && !self.kernel_enabled();
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
            && self.target_changed(
                &mut sup,
                Target {
                    profile: effective.profile.clone(),
                    settings: effective.settings,
                },
            );
        // Saved under the lock (the base and the known good profile live there); the model
        // is published after it is released, as before.
        self.save(&sup);
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
        self.update(|m| {
            show_choice(m, effective, holds);
            // A fallback's explanation ends with the fallback.
            if note_ended && m.state == SchedulerState::Running {
                m.reason.clear();
            }
        })
        .await;
        Ok(out)
    }

    fn find_profile(&self, name: &str) -> Result<&ProfileConfig, Error> {
        self.config.profile(name).ok_or_else(|| {
            let names: Vec<&str> = self
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
        self.announce_released(&released).await;
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
            ..self.model().settings
        };
        self.user_choice(self.profile_for(settings), settings).await
    }

    pub async fn set_preemption(&self, preemption: bool) -> Result<(), Error> {
        let settings = Settings {
            preemption,
            ..self.model().settings
        };
        self.user_choice(self.profile_for(settings), settings).await
    }

    /// The current profile if it has these settings, else the first that has, else "custom".
    fn profile_for(&self, settings: Settings) -> String {
        let current = self.model().profile;
        let matches = |p: &&ProfileConfig| settings_of(p) == settings;
        let profiles = &self.config.profiles;
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
        if self.model().holds.len() >= MAX_HOLDS {
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
        self.announce_released(&[cookie]).await;
        Ok(())
    }

    /// A client left the bus: its holds end.
    pub async fn holder_left(&self, owner: &str) {
        if !self.model().holds.iter().any(|h| h.owner == owner) {
            return;
        }
        match self.transition(|r| r.release_owner(owner)).await {
            Ok(released) => self.announce_released(&released).await,
            Err(e) => tracing::warn!("releasing the holds of {owner}: {e}"),
        }
    }

    pub(crate) async fn announce_released(&self, cookies: &[u32]) {
        for cookie in cookies {
            self.notices.emit(Notice::ProfileReleased(*cookie)).await;
        }
    }

    pub async fn set_auto_power_source(&self, on: bool) {
        self.update(|m| m.auto_power_source = on).await;
        let on_battery = self.supervision.lock().await.on_battery;
        // Turning the rule on while on battery is its event (a low battery's too), and on AC
        // with an AC profile configured.
        if on && on_battery == Some(true) {
            self.battery_rule(true).await;
            self.battery_level_now().await;
        } else if on && on_battery == Some(false) {
            self.plugged_in_rule().await;
        }
        self.save_now().await;
    }

    pub async fn set_follow_power_profile(&self, on: bool) {
        self.update(|m| m.follow_power_profile = on).await;
        let ppd = self.supervision.lock().await.power_profile.clone();
        if let (true, Some(ppd)) = (on, ppd) {
            self.power_profile_rule(&ppd).await;
        }
        self.save_now().await;
    }

    async fn save_now(&self) {
        self.save(&*self.supervision.lock().await);
    }

    async fn battery_rule(&self, on_battery: bool) {
        if !on_battery && self.plugged_in_rule().await {
            return;
        }
        let Some(battery) = self.config.battery_profile().map(target) else {
            return;
        };
        if let Err(e) = self
            .transition(|r| r.power_source(on_battery, battery))
            .await
        {
            tracing::warn!("power source rule: {e}");
        }
    }

    async fn power_profile_rule(&self, ppd: &str) {
        let Some(mapped) = self.config.for_power_profile(ppd).map(target) else {
            tracing::warn!("power-profiles-daemon profile {ppd:?} maps to no profile");
            return;
        };
        if let Err(e) = self.transition(|r| r.power_profile(mapped)).await {
            tracing::warn!("power profile rule: {e}");
        }
    }

    /// UPower said `on_battery` (None: UPower left, which is no event).
    async fn power_source_seen(&self, on_battery: Option<bool>) {
        let Some(on) = on_battery else { return };
        let (changed, level) = {
            let mut sup = self.supervision.lock().await;
            let changed = sup.on_battery != Some(on);
            sup.on_battery = Some(on);
            (changed, sup.battery_level.on_battery(on))
        };
        self.update(|m| m.on_battery = on).await;
        if changed && self.model().auto_power_source {
            tracing::info!("power source: {}", if on { "battery" } else { "AC" });
            self.battery_rule(on).await;
        }
        // Unplugged with the battery already low: the low-battery profile follows at once.
        if let Some(event) = level {
            self.battery_level_rule(event).await;
        }
    }

    /// power-profiles-daemon's profile is `ppd` (None: it left; the profile stays). A service
    /// leaving is no event even if the other name's value shows through.
    async fn power_profile_seen(&self, ppd: Option<String>, left: bool) {
        let changed = {
            let mut sup = self.supervision.lock().await;
            let changed = !left && ppd.is_some() && sup.power_profile != ppd;
            sup.power_profile.clone_from(&ppd);
            changed
        };
        self.update(|m| m.power_profile = ppd.clone().unwrap_or_default())
            .await;
        if let (true, Some(ppd)) = (changed && self.model().follow_power_profile, ppd) {
            tracing::info!("power-profiles-daemon: {ppd}");
            self.power_profile_rule(&ppd).await;
        }
    }

    /// Follows UPower and power-profiles-daemon (under either name; the current one wins).
    pub async fn follow_power_services(self: Arc<Self>, conn: Connection) {
        let (tx, mut rx) = mpsc::unbounded_channel();
        // The charge only matters to the low-battery rule.
        let percentage = (self.supervision.lock().await.battery_level.configured())
            .then_some(power::UPOWER_DISPLAY_PERCENTAGE);
        for watched in [
            UPOWER_ON_BATTERY,
            PPD_ACTIVE_PROFILE,
            PPD_LEGACY_ACTIVE_PROFILE,
        ]
        .into_iter()
        .chain(percentage)
        {
            let (conn, tx) = (conn.clone(), tx.clone());
            tokio::spawn(async move {
                if let Err(e) = power::watch(conn, watched, tx).await {
                    tracing::warn!("cannot watch {}: {e}", watched.service);
                }
            });
        }
        drop(tx);
        let (mut current, mut legacy) = (None, None);
        while let Some((watched, value)) = rx.recv().await {
            tracing::debug!("{}.{}: {value:?}", watched.service, watched.property);
            if watched == UPOWER_ON_BATTERY {
                self.power_source_seen(value.as_ref().and_then(as_bool))
                    .await;
                continue;
            }
            if watched == power::UPOWER_DISPLAY_PERCENTAGE {
                self.battery_percent_seen(value.as_ref().and_then(as_f64))
                    .await;
                continue;
            }
            let left = value.is_none();
            let text = value.as_ref().and_then(as_string);
            if watched == PPD_ACTIVE_PROFILE {
                current = text;
            } else {
                legacy = text;
            }
            self.power_profile_seen(current.clone().or_else(|| legacy.clone()), left)
                .await;
        }
    }
}

fn as_bool(v: &OwnedValue) -> Option<bool> {
    match &**v {
        Value::Bool(b) => Some(*b),
        _ => None,
    }
}

fn as_f64(v: &OwnedValue) -> Option<f64> {
    match &**v {
        Value::F64(x) => Some(*x),
        _ => None,
    }
}

fn as_string(v: &OwnedValue) -> Option<String> {
    match &**v {
        Value::Str(s) => Some(s.to_string()),
        _ => None,
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

/// Shows the rules' answer in the model: the effective profile, its settings and reason, and
/// the holds.
pub(crate) fn show_choice(m: &mut Model, effective: Choice, holds: Vec<Hold>) {
    m.settings = effective.settings;
    m.profile = effective.profile;
    m.profile_reason = effective.reason;
    m.holds = holds;
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
        let reason = match s.profile_reason.as_str() {
            "battery" => Reason::Battery,
            "low-battery" => Reason::LowBattery,
            "ac" => Reason::Ac,
            "power-profile" => Reason::PowerProfile,
            "fallback" => Reason::Fallback,
            "default" => Reason::Default,
            _ => Reason::User,
        };
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
    };
    (model, Rules::new(base), known_good)
}
