//! The last known good profile: the last one the scheduler ran with cleanly for
//! `[restart] known_good_after_s`, and the one to fall back to when the restart policy gives up
//! on another. Falling back keeps the machine on Gearshift (with settings that worked) instead
//! of leaving it `failed` because one mode misbehaves on this hardware or kernel.
//!
//! [`KnownGood`] is bookkeeping with the time passed in (unit-tested below); the daemon holds
//! one in its supervision state, arms a timer when a clean run starts, and asks
//! [`KnownGood::fallback_for`] when the restart policy gives up (daemon.rs); how it times the
//! runs and falls back is clean_runs.rs.

use std::time::{Duration, Instant};

use gearshift_types::Settings;

/// A profile name ("custom" included) and the settings the scheduler runs with for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    pub profile: String,
    pub settings: Settings,
}

/// What the daemon remembers about clean runs.
#[derive(Debug)]
pub struct KnownGood {
    /// How long a run must last without a failure or a change; None: falling back is off.
    after: Option<Duration>,
    known: Option<Target>,
    /// The run being timed and when it began.
    run: Option<(Target, Instant)>,
}

impl KnownGood {
    /// `after_s` = 0 turns falling back off; `known` is what an earlier daemon remembered.
    pub fn new(after_s: u64, known: Option<Target>) -> Self {
        Self {
            after: (after_s > 0).then(|| Duration::from_secs(after_s)),
            known,
            run: None,
        }
    }

    /// The last known good target, if any.
    pub fn known(&self) -> Option<&Target> {
        self.known.as_ref()
    }

    /// A clean run of `target` begins at `now` (the kernel enabled the scheduler, or its
    /// settings changed while it ran). Returns how long until [`Self::check`] can promote it.
    pub fn run_started(&mut self, target: Target, now: Instant) -> Option<Duration> {
        let after = self.after?;
        self.run = Some((target, now));
        Some(after)
    }

    /// The run failed or was stopped: it no longer counts.
    pub fn run_ended(&mut self) {
        self.run = None;
    }

    /// The current run has lasted long enough and is not known good yet.
    pub fn is_due(&self, now: Instant) -> bool {
        match (self.after, &self.run) {
            (Some(after), Some((target, since))) => {
                now.saturating_duration_since(*since) >= after
                    && self.known.as_ref() != Some(target)
            }
            _ => false,
        }
    }

    /// Promotes the current run if it has lasted long enough; returns the target when it is
    /// newly known good (to be saved).
    pub fn check(&mut self, now: Instant) -> Option<Target> {
        if !self.is_due(now) {
            return None;
        }
        self.known = self.run.as_ref().map(|(target, _)| target.clone());
        self.known.clone()
    }

    /// The restart policy gave up on `failing`: the target to fall back to, if there is one
    /// that differs in its settings (the same settings under another name would fail the
    /// same way).
    pub fn fallback_for(&self, failing: &Target) -> Option<Target> {
        self.after?;
        self.known
            .as_ref()
            .filter(|k| k.settings != failing.settings)
            .cloned()
    }
}

/// A fallback that happened: what the `FellBack` signal carries and the state reason says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FellBack {
    pub failed_profile: String,
    pub fallback_profile: String,
    /// Failures of the failed profile within the restart window.
    pub failures: u32,
    /// The last failure's reason (the kernel's exit report or the signal).
    pub reason: String,
}

impl FellBack {
    /// The state reason: while the fallback starts, and while it runs.
    pub fn describe(&self, window_s: u64, running: bool) -> String {
        let lead = if running {
            "Fell back to"
        } else {
            "Falling back to"
        };
        format!(
            "{lead} profile {}, the last that ran cleanly: profile {} failed {} times within {} s. Last: {}",
            self.fallback_profile, self.failed_profile, self.failures, window_s, self.reason
        )
    }
}

#[cfg(test)]
mod tests {
    use gearshift_types::Mode;

    use super::*;

    fn target(profile: &str, mode: Mode) -> Target {
        Target {
            profile: profile.into(),
            settings: Settings {
                mode,
                preemption: true,
            },
        }
    }

    #[test]
    fn a_run_becomes_known_good_once_it_lasted_long_enough() {
        let mut k = KnownGood::new(60, None);
        let t = Instant::now();
        let a = target("interactive", Mode::Interactive);
        assert_eq!(
            k.run_started(a.clone(), t),
            Some(Duration::from_secs(60)),
            "the timer to arm"
        );
        assert_eq!(k.check(t + Duration::from_secs(59)), None);
        assert!(k.is_due(t + Duration::from_secs(60)));
        assert_eq!(k.check(t + Duration::from_secs(60)), Some(a.clone()));
        assert!(!k.is_due(t + Duration::from_secs(61)), "known good already");
        assert_eq!(k.known(), Some(&a));
        // Promoted once: checking again saves nothing new.
        assert_eq!(k.check(t + Duration::from_secs(120)), None);
    }

    #[test]
    fn a_failure_or_a_change_restarts_the_clock() {
        let mut k = KnownGood::new(60, None);
        let t = Instant::now();
        k.run_started(target("interactive", Mode::Interactive), t);
        k.run_ended();
        assert_eq!(k.check(t + Duration::from_secs(61)), None, "the run failed");
        let fifo = target("fifo", Mode::Fifo);
        k.run_started(target("interactive", Mode::Interactive), t);
        k.run_started(fifo.clone(), t + Duration::from_secs(30));
        assert_eq!(
            k.check(t + Duration::from_secs(61)),
            None,
            "fifo ran 31 s, interactive's clock ended with the switch"
        );
        assert_eq!(k.check(t + Duration::from_secs(90)), Some(fifo));
    }

    #[test]
    fn falls_back_only_to_known_good_settings_other_than_the_failing_ones() {
        let a = target("interactive", Mode::Interactive);
        let fifo = target("fifo", Mode::Fifo);
        let none = KnownGood::new(60, None);
        assert_eq!(none.fallback_for(&fifo), None, "nothing ran cleanly yet");
        let k = KnownGood::new(60, Some(a.clone()));
        assert_eq!(k.fallback_for(&fifo), Some(a.clone()));
        assert_eq!(k.fallback_for(&a), None, "the known good one itself fails");
        let custom = Target {
            profile: "custom".into(),
            ..a.clone()
        };
        assert_eq!(k.fallback_for(&custom), None, "same settings, other name");
    }

    #[test]
    fn zero_turns_it_off() {
        let a = target("interactive", Mode::Interactive);
        let mut k = KnownGood::new(0, Some(a.clone()));
        let t = Instant::now();
        assert_eq!(k.run_started(a, t), None, "no timer");
        assert_eq!(k.check(t + Duration::from_secs(3600)), None);
        assert_eq!(k.fallback_for(&target("fifo", Mode::Fifo)), None);
    }

    #[test]
    fn the_reason_names_both_profiles_and_the_count() {
        let f = FellBack {
            failed_profile: "fifo".into(),
            fallback_profile: "interactive".into(),
            failures: 3,
            reason: "EXIT: runtime error".into(),
        };
        let text = f.describe(60, true);
        assert_eq!(
            text,
            "Fell back to profile interactive, the last that ran cleanly: profile fifo failed \
             3 times within 60 s. Last: EXIT: runtime error"
        );
        assert!(f
            .describe(60, false)
            .starts_with("Falling back to profile interactive"));
    }
}
