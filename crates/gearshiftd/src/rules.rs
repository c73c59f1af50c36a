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

use gearshift_types::Settings;

/// Why the effective profile is in effect (the `ProfileReason` property).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reason {
    /// Nobody chose yet: the configured default.
    Default,
    User,
    Hold,
    Battery,
    PowerProfile,
    /// The chosen profile kept failing: the last known good one runs instead.
    Fallback,
}

impl Reason {
    pub fn as_str(self) -> &'static str {
        match self {
            Reason::Default => "default",
            Reason::User => "user",
            Reason::Hold => "hold",
            Reason::Battery => "battery",
            Reason::PowerProfile => "power-profile",
            Reason::Fallback => "fallback",
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
    holds: Vec<Hold>,
    next_cookie: u32,
}

impl Rules {
    pub fn new(base: Choice) -> Self {
        Self {
            base,
            before_battery: None,
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
            if self.base.reason != Reason::Battery {
                self.before_battery = Some(self.base.clone());
            }
            self.base = Choice {
                profile: battery.0,
                settings: battery.1,
                reason: Reason::Battery,
            };
        } else if let Some(before) = self.before_battery.take() {
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

#[cfg(test)]
mod tests;
