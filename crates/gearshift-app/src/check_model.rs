//! What the check page shows, from the daemon's properties and the check's progress. No GTK
//! here: the unit tests cover every state's text.

use gearshift_dbus::check_text::{millis, percent, scheduler_name, verdict_sentence};
use gearshift_dbus::{CheckReport, DaemonProperties, SchedulerState};
use gettextrs::gettext;

use crate::i18n::fill;

/// The progress of a running check, as the last CheckProgress said.
#[derive(Debug, Clone, PartialEq)]
pub struct Progress {
    pub fraction: f64,
    pub scheduler: String,
}

/// The page's contents.
#[derive(Debug, Clone, PartialEq)]
pub struct CheckPageView {
    /// The Run button works (gearshiftd is there, has sched_ext, no check runs).
    pub can_start: bool,
    /// A check runs: the Cancel button and the progress bar show.
    pub running: bool,
    /// The progress bar's fraction and text.
    pub progress: Option<(f64, String)>,
    /// Why the Run button does not work, or a caution about running it; "" for none.
    pub note: String,
    /// The last check's result.
    pub result: Option<ResultView>,
}

/// A check's result: one bar pair per scheduler and the verdict.
#[derive(Debug, Clone, PartialEq)]
pub struct ResultView {
    /// When it finished, Unix seconds (the widget writes it in the reader's format).
    pub finished: i64,
    pub verdict: String,
    pub bars: Vec<Bar>,
    /// The wakeup p99 that fills a bar: the largest, so the bars compare.
    pub p99_full_ms: f64,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Bar {
    pub label: String,
    pub is_default: bool,
    pub miss_pct: f64,
    pub miss_text: String,
    pub p99_ms: f64,
    pub p99_text: String,
}

pub fn result_view(report: &CheckReport) -> ResultView {
    let bars: Vec<Bar> = report
        .results
        .iter()
        .map(|r| Bar {
            label: scheduler_name(&r.scheduler),
            is_default: r.scheduler == gearshift_dbus::check::DEFAULT_SCHEDULER,
            miss_pct: r.miss_pct,
            miss_text: percent(r.miss_pct),
            p99_ms: r.wakeup_p99_us as f64 / 1000.0,
            p99_text: millis(r.wakeup_p99_us),
        })
        .collect();
    let p99_full_ms = bars.iter().map(|b| b.p99_ms).fold(0.0, f64::max).max(1.0);
    ResultView {
        finished: report.finished,
        verdict: verdict_sentence(report),
        bars,
        p99_full_ms,
    }
}

/// The page for `daemon` (None: gearshiftd is absent) with the check's last progress.
pub fn check_page_view(
    daemon: Option<&DaemonProperties>,
    progress: Option<&Progress>,
) -> CheckPageView {
    let Some(d) = daemon else {
        return CheckPageView {
            can_start: false,
            running: false,
            progress: None,
            note: gettext("The Gearshift service is not running."),
            result: None,
        };
    };
    let running = d.check_running;
    let note = if d.state == SchedulerState::Unsupported {
        gettext("This kernel has no sched_ext: there is nothing to compare.")
    } else if d.on_battery == Some(true) && !running {
        gettext("The machine runs on battery: plug it in to run a check.")
    } else {
        String::new()
    };
    let progress = running.then(|| {
        let (fraction, text) = match progress {
            Some(p) => (
                p.fraction.clamp(0.0, 1.0),
                fill(&gettext("Measuring {}…"), &scheduler_name(&p.scheduler)),
            ),
            None => (0.0, gettext("Starting…")),
        };
        (fraction, text)
    });
    CheckPageView {
        can_start: !running && d.state != SchedulerState::Unsupported && d.on_battery != Some(true),
        running,
        progress,
        note,
        result: d.last_check.as_ref().map(result_view),
    }
}

#[cfg(test)]
mod tests {
    use gearshift_dbus::CheckResult;

    use super::*;

    fn report() -> CheckReport {
        let row = |s: &str, miss: f64, p99: u64| CheckResult {
            scheduler: s.into(),
            expected: 479,
            on_time: 400,
            miss_pct: miss,
            wakeup_p50_us: 500,
            wakeup_p99_us: p99,
            load_per_s: 1000.0,
        };
        CheckReport {
            finished: 1_764_000_000,
            seconds: 8,
            results: vec![row("default", 20.0, 16_000), row("interactive", 1.0, 4_000)],
        }
    }

    fn daemon() -> DaemonProperties {
        DaemonProperties {
            state: SchedulerState::Running,
            ..Default::default()
        }
    }

    #[test]
    fn a_running_check_shows_progress_and_cannot_start_again() {
        let mut d = daemon();
        d.check_running = true;
        let p = Progress {
            fraction: 0.5,
            scheduler: "default".into(),
        };
        let v = check_page_view(Some(&d), Some(&p));
        assert!(v.running && !v.can_start);
        let (fraction, text) = v.progress.expect("progress");
        assert_eq!(fraction, 0.5);
        assert!(text.contains("kernel default"), "{text}");
        let v = check_page_view(Some(&d), None);
        assert_eq!(v.progress.map(|p| p.0), Some(0.0));
    }

    #[test]
    fn the_last_result_shows_bars_scaled_to_the_largest_tail_and_a_verdict() {
        let mut d = daemon();
        d.last_check = Some(report());
        let v = check_page_view(Some(&d), None);
        assert!(v.can_start && !v.running && v.note.is_empty());
        let r = v.result.expect("result");
        assert_eq!(r.bars.len(), 2);
        assert!(r.bars[0].is_default && r.bars[0].label == "kernel default");
        assert_eq!(r.p99_full_ms, 16.0);
        assert_eq!(r.bars[1].p99_text, "4.0 ms");
        assert!(r.verdict.contains("interactive"), "{}", r.verdict);
    }

    #[test]
    fn absent_unsupported_and_on_battery_say_why_nothing_runs() {
        let v = check_page_view(None, None);
        assert!(!v.can_start && !v.note.is_empty());
        let mut d = daemon();
        d.state = SchedulerState::Unsupported;
        let v = check_page_view(Some(&d), None);
        assert!(!v.can_start && v.note.contains("sched_ext"));
        let mut d = daemon();
        d.on_battery = Some(true);
        let v = check_page_view(Some(&d), None);
        assert!(!v.can_start && v.note.contains("battery"));
    }
}
