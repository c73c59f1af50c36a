//! The responsiveness check (`StartCheck`, `LastCheck`): its options, its report and the
//! verdict every client draws from a report the same way.
//!
//! A check measures a frame-like periodic task under a background load, first under the
//! kernel's default scheduler and then under each chosen profile (gearshift-probe does the
//! measuring, gearshiftd the switching).

use std::collections::HashMap;

use serde::{Deserialize, Serialize};
use zbus::zvariant::{OwnedValue, Value};

use crate::values::{dicts, flag, float, owned, signed64, text, unsigned, unsigned64, Dict};
use crate::Error;

/// The `scheduler` of the row measured under the kernel's default scheduler.
pub const DEFAULT_SCHEDULER: &str = "default";
/// Seconds each scheduler is measured unless the caller says otherwise.
pub const DEFAULT_SECONDS: u32 = 8;
/// The range a caller may ask for, in seconds per scheduler.
pub const SECONDS_RANGE: std::ops::RangeInclusive<u32> = 3..=120;

/// What `StartCheck` was asked to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckOptions {
    /// Profiles to measure after the default scheduler; empty: every profile.
    pub profiles: Vec<String>,
    /// Seconds of measuring per scheduler.
    pub seconds: u32,
    /// Run on battery power too (off: refused on battery, where it would drain it).
    pub allow_battery: bool,
}

impl Default for CheckOptions {
    fn default() -> Self {
        Self {
            profiles: Vec::new(),
            seconds: DEFAULT_SECONDS,
            allow_battery: false,
        }
    }
}

impl CheckOptions {
    pub fn to_dict(&self) -> Dict {
        let mut dict = HashMap::from([
            ("seconds".to_owned(), OwnedValue::from(self.seconds)),
            (
                "allow_battery".to_owned(),
                owned(Value::from(self.allow_battery)),
            ),
        ]);
        if !self.profiles.is_empty() {
            dict.insert(
                "profiles".to_owned(),
                owned(Value::from(self.profiles.clone())),
            );
        }
        dict
    }

    /// Reads the options a caller sent; an unknown key, a value of the wrong type or
    /// seconds out of range is an `InvalidArgs` error naming it.
    pub fn from_dict(dict: &Dict) -> Result<Self, Error> {
        let mut out = Self::default();
        for (key, value) in dict {
            let wrong = |ty: &str| Error::InvalidArgs(format!("option {key:?} must be {ty}"));
            match key.as_str() {
                "profiles" => {
                    let Value::Array(items) = &**value else {
                        return Err(wrong("an array of strings (as)"));
                    };
                    out.profiles = items
                        .iter()
                        .map(|v| text(v).ok_or_else(|| wrong("an array of strings (as)")))
                        .collect::<Result<_, _>>()?;
                }
                "seconds" => out.seconds = unsigned(value).ok_or_else(|| wrong("a u"))?,
                "allow_battery" => out.allow_battery = flag(value).ok_or_else(|| wrong("a b"))?,
                _ => {
                    return Err(Error::InvalidArgs(format!(
                        "unknown option {key:?} (known: profiles, seconds, allow_battery)"
                    )))
                }
            }
        }
        if !SECONDS_RANGE.contains(&out.seconds) {
            return Err(Error::InvalidArgs(format!(
                "seconds must be from {} to {}, not {}",
                SECONDS_RANGE.start(),
                SECONDS_RANGE.end(),
                out.seconds
            )));
        }
        Ok(out)
    }
}

/// One scheduler's measurement.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CheckResult {
    /// [`DEFAULT_SCHEDULER`] or a profile's name.
    pub scheduler: String,
    /// Frames the run should have had, and how many finished before their deadline.
    pub expected: u32,
    pub on_time: u32,
    pub miss_pct: f64,
    pub wakeup_p50_us: u64,
    pub wakeup_p99_us: u64,
    /// Units of work the background load finished per second.
    pub load_per_s: f64,
}

impl CheckResult {
    fn to_dict(&self) -> Dict {
        HashMap::from([
            (
                "scheduler".to_owned(),
                owned(Value::from(self.scheduler.as_str())),
            ),
            ("expected".to_owned(), OwnedValue::from(self.expected)),
            ("on_time".to_owned(), OwnedValue::from(self.on_time)),
            ("miss_pct".to_owned(), OwnedValue::from(self.miss_pct)),
            (
                "wakeup_p50_us".to_owned(),
                OwnedValue::from(self.wakeup_p50_us),
            ),
            (
                "wakeup_p99_us".to_owned(),
                OwnedValue::from(self.wakeup_p99_us),
            ),
            ("load_per_s".to_owned(), OwnedValue::from(self.load_per_s)),
        ])
    }

    fn from_dict(dict: &Dict) -> Option<Self> {
        Some(Self {
            scheduler: text(dict.get("scheduler")?)?,
            expected: unsigned(dict.get("expected")?)?,
            on_time: unsigned(dict.get("on_time")?)?,
            miss_pct: float(dict.get("miss_pct")?)?,
            wakeup_p50_us: unsigned64(dict.get("wakeup_p50_us")?)?,
            wakeup_p99_us: unsigned64(dict.get("wakeup_p99_us")?)?,
            load_per_s: float(dict.get("load_per_s")?)?,
        })
    }
}

/// A finished check: the `LastCheck` property, and what the daemon keeps of it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CheckReport {
    /// When it finished, in seconds since the Unix epoch.
    pub finished: i64,
    /// Seconds measured per scheduler.
    pub seconds: u32,
    /// The default scheduler first, then each profile in the order measured.
    pub results: Vec<CheckResult>,
}

impl CheckReport {
    pub fn to_dict(&self) -> Dict {
        let results: Vec<Dict> = self.results.iter().map(CheckResult::to_dict).collect();
        HashMap::from([
            ("finished".to_owned(), OwnedValue::from(self.finished)),
            ("seconds".to_owned(), OwnedValue::from(self.seconds)),
            ("results".to_owned(), owned(Value::from(results))),
        ])
    }

    /// The report in `LastCheck`; None for the empty dictionary (no check yet) or a malformed
    /// one.
    pub fn from_dict(dict: &Dict) -> Option<Self> {
        let results = dicts(dict.get("results")?)
            .iter()
            .map(CheckResult::from_dict)
            .collect::<Option<Vec<_>>>()?;
        Some(Self {
            finished: signed64(dict.get("finished")?)?,
            seconds: unsigned(dict.get("seconds")?)?,
            results,
        })
    }

    /// The row measured under the kernel's default scheduler.
    pub fn baseline(&self) -> Option<&CheckResult> {
        self.results
            .iter()
            .find(|r| r.scheduler == DEFAULT_SCHEDULER)
    }

    /// What the report says, in one line's worth of facts (clients put it in words).
    pub fn verdict(&self) -> Verdict {
        let Some(base) = self.baseline() else {
            return Verdict::Incomplete;
        };
        let best = self
            .results
            .iter()
            .filter(|r| r.scheduler != DEFAULT_SCHEDULER)
            .min_by(|a, b| {
                a.miss_pct
                    .total_cmp(&b.miss_pct)
                    .then(a.wakeup_p99_us.cmp(&b.wakeup_p99_us))
            });
        let Some(best) = best else {
            return Verdict::Incomplete;
        };
        let comparison = Comparison::of(best, base);
        match comparison.smoother() {
            Some(true) => Verdict::Helps {
                profile: best.scheduler.clone(),
                comparison,
            },
            Some(false) => Verdict::DefaultBetter {
                profile: best.scheduler.clone(),
                comparison,
            },
            None => Verdict::NoClearDifference {
                profile: best.scheduler.clone(),
                comparison,
            },
        }
    }
}

/// A profile's row against the default scheduler's.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Comparison {
    pub miss_pct: f64,
    pub base_miss_pct: f64,
    /// Wakeup p99 ÷ the default's (1.0 when the default's is 0).
    pub p99_ratio: f64,
    /// Load throughput ÷ the default's.
    pub load_ratio: f64,
}

/// Deadline misses differ when they are this many points apart and …
const MISS_POINTS: f64 = 1.0;
/// … this much apart relatively; wakeup tails differ by this factor.
const RELATIVE: f64 = 0.8;

impl Comparison {
    pub fn of(row: &CheckResult, base: &CheckResult) -> Self {
        let ratio = |a: f64, b: f64| if b > 0.0 { a / b } else { 1.0 };
        Self {
            miss_pct: row.miss_pct,
            base_miss_pct: base.miss_pct,
            p99_ratio: ratio(row.wakeup_p99_us as f64, base.wakeup_p99_us as f64),
            load_ratio: ratio(row.load_per_s, base.load_per_s),
        }
    }

    /// Some(true): frames are clearly smoother than under the default scheduler; Some(false):
    /// clearly rougher; None: within the noise of a short run. Misses decide when they
    /// differ; when both are (nearly) equal the wakeup tail does.
    pub fn smoother(&self) -> Option<bool> {
        let (a, b) = (self.miss_pct, self.base_miss_pct);
        if a + MISS_POINTS <= b && a <= b * RELATIVE {
            return Some(true);
        }
        if b + MISS_POINTS <= a && b <= a * RELATIVE {
            return Some(false);
        }
        if (a - b).abs() < MISS_POINTS {
            if self.p99_ratio <= RELATIVE {
                return Some(true);
            }
            if self.p99_ratio >= 1.0 / RELATIVE {
                return Some(false);
            }
        }
        None
    }
}

/// What a check found, for the one-line verdict.
#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    /// `profile` keeps frames on time clearly better than the kernel's default scheduler.
    Helps {
        profile: String,
        comparison: Comparison,
    },
    /// Even the best profile, `profile`, does clearly worse than the default scheduler.
    DefaultBetter {
        profile: String,
        comparison: Comparison,
    },
    /// The best profile and the default are within a short run's noise.
    NoClearDifference {
        profile: String,
        comparison: Comparison,
    },
    /// The report lacks the default's row or every profile's (cancelled, or nothing chosen).
    Incomplete,
}

#[cfg(test)]
#[path = "check_tests.rs"]
mod tests;
