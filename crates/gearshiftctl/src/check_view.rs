//! How `check` prints a report: a table with ratios to the kernel's default scheduler and the
//! verdict for people; the report and the verdict's kind for scripts.

use gearshift_dbus::check::Verdict;
use gearshift_dbus::check_text::{millis, percent, ratio, scheduler_name, verdict_sentence};
use gearshift_dbus::CheckReport;
use gearshift_i18n::{fill_named, gettext};
use serde::Serialize;

use crate::output::View;

#[derive(Debug, Clone)]
pub struct CheckView {
    pub report: CheckReport,
}

#[derive(Serialize)]
struct CheckJson<'a> {
    #[serde(flatten)]
    report: &'a CheckReport,
    /// "helps", "default-better", "no-clear-difference" or "incomplete".
    verdict: &'static str,
    /// The profile the verdict is about ("" when incomplete).
    verdict_profile: String,
}

impl Serialize for CheckView {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let (verdict, profile) = match self.report.verdict() {
            Verdict::Helps { profile, .. } => ("helps", profile),
            Verdict::DefaultBetter { profile, .. } => ("default-better", profile),
            Verdict::NoClearDifference { profile, .. } => ("no-clear-difference", profile),
            Verdict::Incomplete => ("incomplete", String::new()),
        };
        CheckJson {
            report: &self.report,
            verdict,
            verdict_profile: profile,
        }
        .serialize(s)
    }
}

/// A value with its ratio to the default's, unless this is the default's row.
fn with_ratio(value: String, ratio_to_base: Option<f64>) -> String {
    match ratio_to_base {
        Some(r) => format!("{value} ({})", ratio(r)),
        None => value,
    }
}

impl View for CheckView {
    fn human(&self) -> String {
        let r = &self.report;
        let base = r.baseline();
        let header = [
            gettext("scheduler"),
            gettext("late frames"),
            gettext("wakeup p50"),
            gettext("wakeup p99"),
            gettext("background work"),
        ];
        let mut rows = vec![header.to_vec()];
        for row in &r.results {
            let is_base = base.is_some_and(|b| std::ptr::eq(b, row));
            let of = |v: f64, b: f64| (!is_base && b > 0.0).then(|| v / b);
            let b = base.unwrap_or(row);
            rows.push(vec![
                scheduler_name(&row.scheduler),
                with_ratio(percent(row.miss_pct), of(row.miss_pct, b.miss_pct)),
                with_ratio(
                    millis(row.wakeup_p50_us),
                    of(row.wakeup_p50_us as f64, b.wakeup_p50_us as f64),
                ),
                with_ratio(
                    millis(row.wakeup_p99_us),
                    of(row.wakeup_p99_us as f64, b.wakeup_p99_us as f64),
                ),
                with_ratio(
                    format!("{:.0}/s", row.load_per_s),
                    of(row.load_per_s, b.load_per_s),
                ),
            ]);
        }
        let widths: Vec<usize> = (0..header.len())
            .map(|c| rows.iter().map(|r| r[c].chars().count()).max().unwrap_or(0))
            .collect();
        let mut out = fill_named(
            &gettext(
                "Responsiveness check, {seconds} s per scheduler: a 60 Hz frame needing 3 ms a frame, under two CPU-bound threads per CPU and a message-passing pair per CPU. Ratios are to the kernel's default scheduler.",
            ),
            &[("seconds", &r.seconds.to_string())],
        );
        out.push_str("\n\n");
        for row in &rows {
            let cells: Vec<String> = row
                .iter()
                .zip(&widths)
                .enumerate()
                .map(|(i, (cell, w))| {
                    let pad = w.saturating_sub(cell.chars().count());
                    if i == 0 {
                        format!("{cell}{}", " ".repeat(pad))
                    } else {
                        format!("{}{cell}", " ".repeat(pad))
                    }
                })
                .collect();
            out.push_str(cells.join("  ").trim_end());
            out.push('\n');
        }
        out.push('\n');
        out.push_str(&verdict_sentence(r));
        out
    }
}
