//! A check's verdict in the reader's language: one sentence, the same in gearshiftctl and the
//! app.

use gearshift_i18n::{fill_named, gettext};

use crate::check::{CheckReport, Comparison, Verdict, DEFAULT_SCHEDULER};

/// "12.5 %", with one decimal.
pub fn percent(value: f64) -> String {
    format!("{value:.1} %")
}

/// "0.42×", a ratio to the default scheduler.
pub fn ratio(value: f64) -> String {
    format!("{value:.2}×")
}

/// "2.1 ms" from microseconds.
pub fn millis(us: u64) -> String {
    format!("{:.1} ms", us as f64 / 1000.0)
}

/// The row's name for people: the kernel's default scheduler, or the profile's name.
pub fn scheduler_name(scheduler: &str) -> String {
    if scheduler == DEFAULT_SCHEDULER {
        gettext("kernel default")
    } else {
        scheduler.to_owned()
    }
}

fn filled(template: &str, profile: &str, c: &Comparison) -> String {
    fill_named(
        template,
        &[
            ("profile", profile),
            ("misses", &percent(c.miss_pct)),
            ("base_misses", &percent(c.base_miss_pct)),
            ("p99", &ratio(c.p99_ratio)),
            ("load", &ratio(c.load_ratio)),
        ],
    )
}

/// The one-line verdict of `report`.
pub fn verdict_sentence(report: &CheckReport) -> String {
    match report.verdict() {
        Verdict::Helps {
            profile,
            comparison,
        } => filled(
            &gettext(
                "Gearshift helps here: with profile {profile}, {misses} of frames were late against {base_misses} under the kernel's default scheduler (wakeup p99 {p99}, background work {load} of the default's).",
            ),
            &profile,
            &comparison,
        ),
        Verdict::DefaultBetter {
            profile,
            comparison,
        } => filled(
            &gettext(
                "The kernel's default scheduler did better here: even the best profile, {profile}, had {misses} of frames late against {base_misses} (wakeup p99 {p99}).",
            ),
            &profile,
            &comparison,
        ),
        Verdict::NoClearDifference {
            profile,
            comparison,
        } => filled(
            &gettext(
                "No clear difference here: the best profile, {profile}, had {misses} of frames late against {base_misses} under the kernel's default scheduler (wakeup p99 {p99}). A longer check tells them apart better.",
            ),
            &profile,
            &comparison,
        ),
        Verdict::Incomplete => gettext(
            "The check measured the kernel's default scheduler or the profiles, not both: no verdict.",
        ),
    }
}
