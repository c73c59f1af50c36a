//! Which profile is in effect, and why: the one precedence rule.
//!
//! - A hold beats everything else; with several holds, the newest wins.
//! - Underneath the holds is the *base* choice. The user's explicit choice sets it (and, as
//!   with power-profiles-daemon, releases every hold: the person at the machine decides).
//! - The automatic rules set the base only when their event happens: unplugging (battery
//!   profile; replugging restores what was there before), or power-profiles-daemon changing
//!   its profile. The user's choice stands until the next such event.
//! - Falling back to the last known good profile (known_good.rs) is the daemon's own event:
//!   like the user's choice it sets the base and releases every hold (a hold of the failing
//!   profile would otherwise keep it in effect), and it stands until the next event. Keeping
//!   it this plain means a later hold or rule event may pick the failing profile again; it
//!   then fails and falls back again, which the person at the machine sees and can settle.
//!
//! This module is pure bookkeeping; the daemon applies the result.
//!
//! The battery level adds events of the same kind, all part of the battery rule (its section
//! is at the end): plugging in with an AC profile configured selects that profile, an event
//! like the others, instead of restoring what was there before the unplug; the charge falling
//! below the threshold on battery selects the low-battery profile; the charge climbing back
//! above the threshold plus the hysteresis restores what that replaced, and plugging in ends
//! it as it ends the battery profile.

use gearshift_dbus::ProfileReason;
use gearshift_types::Settings;

/// Why the effective profile is in effect (the `ProfileReason` property).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reason {
    /// Nobody chose yet: the configured default.
    Default,
    User,
    Hold,
    Battery,
    /// On battery with the charge below `[auto] low_battery_percent`.
    LowBattery,
    /// Plugged in, with `[auto] ac_profile` set.
    Ac,
    PowerProfile,
    /// The chosen profile kept failing: the last known good one runs instead.
    Fallback,
}

impl Reason {
    /// The contract's word for it (`ProfileReason`, spelled once in gearshift-dbus).
    pub fn as_str(self) -> &'static str {
        // Every reason of the daemon's is one the contract knows.
        self.in_contract().known_spelling().unwrap_or("user")
    }

    fn in_contract(self) -> ProfileReason {
        match self {
            Reason::Default => ProfileReason::Default,
            Reason::User => ProfileReason::User,
            Reason::Hold => ProfileReason::Hold,
            Reason::Battery => ProfileReason::Battery,
            Reason::LowBattery => ProfileReason::LowBattery,
            Reason::Ac => ProfileReason::Ac,
            Reason::PowerProfile => ProfileReason::PowerProfile,
            Reason::Fallback => ProfileReason::Fallback,
        }
    }

    /// The reason a saved state names. A hold does not outlive the daemon, and a word this
    /// version does not know counts as the user's choice: the profile stays until the next event.
    pub fn restored(word: &str) -> Self {
        match ProfileReason::from(word) {
            ProfileReason::Default => Reason::Default,
            ProfileReason::Battery => Reason::Battery,
            ProfileReason::LowBattery => Reason::LowBattery,
            ProfileReason::Ac => Reason::Ac,
            ProfileReason::PowerProfile => Reason::PowerProfile,
            ProfileReason::Fallback => Reason::Fallback,
            ProfileReason::User | ProfileReason::Hold | ProfileReason::Other(_) => Reason::User,
        }
    }
}

/// A profile (or "custom" settings) and why it was chosen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Choice {
    pub profile: String,
    pub settings: Settings,
    pub reason: Reason,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hold {
    pub cookie: u32,
    pub profile: String,
    pub settings: Settings,
    pub reason: String,
    pub application_id: String,
    /// Unique bus name of the holder; the hold ends when it leaves.
    pub owner: String,
}

#[derive(Debug, Clone)]
pub struct Rules {
    base: Choice,
    /// The base before the battery rule replaced it, restored on replug.
    before_battery: Option<Choice>,
    /// The base before the low-battery rule replaced it; only meaningful while the base is
    /// the low-battery rule's (every use checks), so other events need not clear it.
    before_low: Option<Choice>,
    holds: Vec<Hold>,
    next_cookie: u32,
}

impl Rules {
    pub fn new(base: Choice) -> Self {
        Self {
            base,
            before_battery: None,
            before_low: None,
            holds: Vec::new(),
            next_cookie: 0,
        }
    }

    /// What is in effect.
    pub fn effective(&self) -> Choice {
        match self.holds.last() {
            Some(h) => Choice {
                profile: h.profile.clone(),
                settings: h.settings,
                reason: Reason::Hold,
            },
            None => self.base.clone(),
        }
    }

    /// The choice to keep across restarts (holds end with their holders).
    pub fn base(&self) -> &Choice {
        &self.base
    }

    pub fn holds(&self) -> &[Hold] {
        &self.holds
    }

    /// The user's explicit choice; returns the cookies of the holds it released.
    pub fn user_choice(&mut self, profile: String, settings: Settings) -> Vec<u32> {
        self.replace_all(profile, settings, Reason::User)
    }

    /// The effective profile kept failing: `profile` (the last known good one) replaces the
    /// base and every hold; returns the cookies of the holds it released.
    pub fn fall_back(&mut self, profile: String, settings: Settings) -> Vec<u32> {
        self.replace_all(profile, settings, Reason::Fallback)
    }

    fn replace_all(&mut self, profile: String, settings: Settings, reason: Reason) -> Vec<u32> {
        self.base = Choice {
            profile,
            settings,
            reason,
        };
        self.before_battery = None;
        self.holds.drain(..).map(|h| h.cookie).collect()
    }

    /// Adds a hold on top; returns its cookie.
    pub fn hold(&mut self, mut hold: Hold) -> u32 {
        self.next_cookie = self.next_cookie.wrapping_add(1).max(1);
        while self.holds.iter().any(|h| h.cookie == self.next_cookie) {
            self.next_cookie = self.next_cookie.wrapping_add(1).max(1);
        }
        hold.cookie = self.next_cookie;
        self.holds.push(hold);
        self.next_cookie
    }

    /// Ends `cookie` if `owner` holds it (any owner when `owner` is None).
    pub fn release(&mut self, cookie: u32, owner: Option<&str>) -> bool {
        let before = self.holds.len();
        self.holds
            .retain(|h| h.cookie != cookie || owner.is_some_and(|o| o != h.owner));
        self.holds.len() != before
    }

    /// Ends every hold of a client that left; returns their cookies.
    pub fn release_owner(&mut self, owner: &str) -> Vec<u32> {
        let (gone, kept) = self.holds.drain(..).partition(|h| h.owner == owner);
        self.holds = kept;
        gone.into_iter().map(|h: Hold| h.cookie).collect()
    }

    /// The power source changed (only called while the battery rule is on).
    pub fn power_source(&mut self, on_battery: bool, battery: (String, Settings)) {
        if on_battery {
            if !is_battery_rule(self.base.reason) {
                self.before_battery = Some(self.base.clone());
            }
            self.base = Choice {
                profile: battery.0,
                settings: battery.1,
                reason: Reason::Battery,
            };
        } else if let Some(before) = self.before_battery.take().or_else(|| self.end_low()) {
            self.base = before;
        }
    }

    /// power-profiles-daemon's profile changed (only called while following it); `mapped`
    /// is the Gearshift profile it maps to.
    pub fn power_profile(&mut self, mapped: (String, Settings)) {
        self.before_battery = None;
        self.base = Choice {
            profile: mapped.0,
            settings: mapped.1,
            reason: Reason::PowerProfile,
        };
    }
}

// ---- the battery level: AC profile and low battery ----

/// The base is the battery rule's own (unplugged, maybe low): a second "on battery" must not
/// remember it as what to restore on replug.
fn is_battery_rule(reason: Reason) -> bool {
    matches!(reason, Reason::Battery | Reason::LowBattery)
}

impl Rules {
    /// Plugged in with an AC profile configured (only called while the battery rule is on):
    /// unlike a plain replug this is an event of its own, so it replaces whatever the base was,
    /// the user's choice on battery included, and nothing is left to restore.
    pub fn plugged_in(&mut self, ac: (String, Settings)) {
        self.before_battery = None;
        self.before_low = None;
        self.base = Choice {
            profile: ac.0,
            settings: ac.1,
            reason: Reason::Ac,
        };
    }

    /// The charge fell below the threshold on battery (only called while the battery rule is
    /// on): the low-battery profile replaces the base, which is kept to restore.
    pub fn battery_low(&mut self, low: (String, Settings)) {
        if self.base.reason != Reason::LowBattery {
            self.before_low = Some(self.base.clone());
        }
        self.base = Choice {
            profile: low.0,
            settings: low.1,
            reason: Reason::LowBattery,
        };
    }

    /// The charge climbed back above the threshold plus the hysteresis, still on battery:
    /// what the low-battery rule replaced comes back, unless another event came since.
    pub fn battery_recovered(&mut self) {
        if let Some(before) = self.end_low() {
            self.base = before;
        }
    }

    /// What the low-battery rule replaced, if the base is still its choice.
    fn end_low(&mut self) -> Option<Choice> {
        if self.base.reason == Reason::LowBattery {
            self.before_low.take()
        } else {
            None
        }
    }
}

#[cfg(test)]
mod tests;
