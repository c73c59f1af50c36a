//! The scheduler process and everything decided around it: the restart policy, the clean runs
//! and fallbacks, the profile rules and what the power services said last. One operation at a
//! time holds it (`DaemonState::supervision`), and the event loop's events are about it.

use tokio::task::JoinHandle;

use crate::battery_level::BatteryLevel;
use crate::child::{ChildEvent, RunningChild};
use crate::config::Config;
use crate::known_good::{FellBack, KnownGood, Target};
use crate::restart::RestartPolicy;
use crate::rules::Rules;

pub(crate) struct Supervision {
    pub(crate) rules: Rules,
    /// What UPower and power-profiles-daemon said last (None: not heard from yet).
    pub(crate) on_battery: Option<bool>,
    pub(crate) power_profile: Option<String>,
    pub(crate) battery_level: BatteryLevel,
    pub(crate) child: Option<RunningChild>,
    pub(crate) policy: RestartPolicy,
    pub(crate) pending_restart: Option<(u64, JoinHandle<()>)>,
    pub(crate) next_generation: u64,
    pub(crate) known_good: KnownGood,
    /// The fallback in effect, if the effective profile is one (its words stay the state
    /// reason while it runs, until the profile changes or someone stops or starts).
    pub(crate) fell_back: Option<FellBack>,
}

impl Supervision {
    /// Nothing runs yet; `rules` and `known_good` are what the daemon starts with.
    pub(crate) fn new(config: &Config, rules: Rules, known_good: Option<Target>) -> Self {
        Self {
            rules,
            on_battery: None,
            power_profile: None,
            battery_level: BatteryLevel::new(config),
            child: None,
            policy: RestartPolicy::new(config.restart.clone()),
            pending_restart: None,
            next_generation: 1,
            known_good: KnownGood::new(config.restart.known_good_after_s, known_good),
            fell_back: None,
        }
    }

    /// A scheduler process is running (changes must reach it).
    pub(crate) fn has_child(&self) -> bool {
        self.child.is_some()
    }

    /// The scheduler process has not ended.
    pub(crate) fn child_alive(&self) -> bool {
        self.child
            .as_ref()
            .is_some_and(|c| c.exit_reason().is_none())
    }

    pub(crate) fn cancel_pending_restart(&mut self) {
        if let Some((_, handle)) = self.pending_restart.take() {
            handle.abort();
        }
    }

    /// The state reason while running: empty, or the fallback in effect.
    pub(crate) fn running_reason(&self, config: &Config) -> String {
        self.fell_back
            .as_ref()
            .map(|f| f.describe(config.restart.window_s, true))
            .unwrap_or_default()
    }
}

pub(crate) enum Event {
    Child {
        generation: u64,
        event: ChildEvent,
    },
    RestartDue {
        token: u64,
    },
    /// A clean run may have lasted long enough to be the last known good one.
    CleanRunDue,
}
