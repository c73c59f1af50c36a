//! Following the power services: UPower's power source and battery charge, and
//! power-profiles-daemon's profile, with the switches that turn those rules on
//! (AutoPowerSource, FollowPowerProfile). The watchers (power.rs) report what they hear; this
//! decides which rule applies and changes the choice through [`Choices`].

use std::sync::Arc;

use crate::battery_level::LevelEvent;
use crate::choices::{target, Choices};
use crate::rules::Rules;
use crate::state::DaemonState;

#[derive(Clone)]
pub struct PowerFollow {
    state: Arc<DaemonState>,
    choices: Choices,
}

impl PowerFollow {
    pub fn new(state: Arc<DaemonState>, choices: Choices) -> Self {
        Self { state, choices }
    }

    /// The low-battery rule is configured: only then does the charge matter.
    pub async fn watches_charge(&self) -> bool {
        self.state
            .supervision
            .lock()
            .await
            .battery_level
            .configured()
    }

    pub async fn set_auto_power_source(&self, on: bool) {
        self.state.update(|m| m.auto_power_source = on).await;
        let on_battery = self.state.supervision.lock().await.on_battery;
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
        self.state.update(|m| m.follow_power_profile = on).await;
        let ppd = self.state.supervision.lock().await.power_profile.clone();
        if let (true, Some(ppd)) = (on, ppd) {
            self.power_profile_rule(&ppd).await;
        }
        self.save_now().await;
    }

    async fn save_now(&self) {
        self.state.save(&*self.state.supervision.lock().await);
    }

    async fn battery_rule(&self, on_battery: bool) {
        if !on_battery && self.plugged_in_rule().await {
            return;
        }
        let Some(battery) = self.state.config.battery_profile().map(target) else {
            return;
        };
        if let Err(e) = self
            .choices
            .transition(|r| r.power_source(on_battery, battery))
            .await
        {
            tracing::warn!("power source rule: {e}");
        }
    }

    async fn power_profile_rule(&self, ppd: &str) {
        let Some(mapped) = self.state.config.for_power_profile(ppd).map(target) else {
            tracing::warn!("power-profiles-daemon profile {ppd:?} maps to no profile");
            return;
        };
        if let Err(e) = self.choices.transition(|r| r.power_profile(mapped)).await {
            tracing::warn!("power profile rule: {e}");
        }
    }

    /// UPower said `on_battery` (None: UPower left, which is no event).
    pub async fn power_source_seen(&self, on_battery: Option<bool>) {
        let Some(on) = on_battery else { return };
        let (changed, level) = {
            let mut sup = self.state.supervision.lock().await;
            let changed = sup.on_battery != Some(on);
            sup.on_battery = Some(on);
            (changed, sup.battery_level.on_battery(on))
        };
        self.state.update(|m| m.on_battery = on).await;
        if changed && self.state.model().auto_power_source {
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
    pub async fn power_profile_seen(&self, ppd: Option<String>, left: bool) {
        let changed = {
            let mut sup = self.state.supervision.lock().await;
            let changed = !left && ppd.is_some() && sup.power_profile != ppd;
            sup.power_profile.clone_from(&ppd);
            changed
        };
        self.state
            .update(|m| m.power_profile = ppd.clone().unwrap_or_default())
            .await;
        if let (true, Some(ppd)) = (changed && self.state.model().follow_power_profile, ppd) {
            tracing::info!("power-profiles-daemon: {ppd}");
            self.power_profile_rule(&ppd).await;
        }
    }

    /// UPower's display device reports `percent` (None: it left).
    pub async fn battery_percent_seen(&self, percent: Option<f64>) {
        let event = self
            .state
            .supervision
            .lock()
            .await
            .battery_level
            .percent(percent);
        if let Some(event) = event {
            self.battery_level_rule(event).await;
        }
    }

    /// Applies a crossing of the threshold, while the battery rule is on.
    async fn battery_level_rule(&self, event: LevelEvent) {
        if !self.state.model().auto_power_source {
            return;
        }
        let done = match event {
            LevelEvent::Low => {
                let Some((percent, profile)) = self.state.config.low_battery() else {
                    return;
                };
                tracing::info!("battery below {percent} %");
                let low = target(profile);
                self.choices.transition(|r| r.battery_low(low)).await
            }
            LevelEvent::Recovered => {
                tracing::info!("battery charged again");
                self.choices.transition(Rules::battery_recovered).await
            }
        };
        if let Err(e) = done {
            tracing::warn!("low battery rule: {e}");
        }
    }

    /// The battery rule was turned on while on battery: a low battery counts at once too.
    async fn battery_level_now(&self) {
        if self.state.supervision.lock().await.battery_level.is_low() {
            self.battery_level_rule(LevelEvent::Low).await;
        }
    }

    /// Plugged in (or the rule turned on while on AC) with an AC profile configured: selects
    /// it. False when none is configured: replugging then restores what was there before.
    async fn plugged_in_rule(&self) -> bool {
        let Some(ac) = self.state.config.ac_profile().map(target) else {
            return false;
        };
        if let Err(e) = self.choices.transition(|r| r.plugged_in(ac)).await {
            tracing::warn!("AC profile rule: {e}");
        }
        true
    }
}
