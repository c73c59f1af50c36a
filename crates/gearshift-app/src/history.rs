//! The samples the graphs draw: rates from the scheduler's counters and its gauges, over the
//! last [`SPAN_US`] microseconds.

use std::collections::VecDeque;

use gearshift_types::Stats;

/// How much time a graph shows.
pub const SPAN_US: i64 = 30_000_000;

/// One point in time, each series' value.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Sample {
    /// glib monotonic time (µs) the stats arrived.
    pub time_us: i64,
    pub user_dispatches: f64,
    pub kernel_dispatches: f64,
    pub queued: f64,
    pub running: f64,
    pub waiting: f64,
}

/// What a graph shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Series {
    /// Dispatches per second: user space's and BPF's own.
    #[default]
    Dispatches,
    /// Tasks queued to the user-space policy per second.
    Queued,
    /// Tasks running and waiting now.
    Tasks,
}

impl Series {
    /// The lines of this graph, from a sample.
    pub fn values(self, s: &Sample) -> [f64; 2] {
        match self {
            Series::Dispatches => [s.user_dispatches, s.kernel_dispatches],
            Series::Queued => [s.queued, 0.0],
            Series::Tasks => [s.running, s.waiting],
        }
    }

    /// How many lines it has.
    pub fn lines(self) -> usize {
        match self {
            Series::Queued => 1,
            _ => 2,
        }
    }
}

#[derive(Debug, Default)]
pub struct History {
    samples: VecDeque<Sample>,
    last: Option<(i64, Stats)>,
}

impl History {
    /// Adds the stats that arrived at `time_us`. Rates need two snapshots: the first one (and
    /// the first after the scheduler restarted) only sets the counters' base.
    pub fn push(&mut self, time_us: i64, stats: &Stats) {
        let prev = self.last.replace((time_us, stats.clone()));
        let Some((prev_time, prev)) = prev else {
            return;
        };
        let restarted = stats.uptime_ms < prev.uptime_ms;
        let secs = if stats.uptime_ms > prev.uptime_ms {
            (stats.uptime_ms - prev.uptime_ms) as f64 / 1000.0
        } else {
            (time_us - prev_time) as f64 / 1e6
        };
        if restarted || secs <= 0.0 {
            return;
        }
        let rate = |now: u64, before: u64| now.saturating_sub(before) as f64 / secs;
        self.samples.push_back(Sample {
            time_us,
            user_dispatches: rate(stats.nr_user_dispatches, prev.nr_user_dispatches),
            kernel_dispatches: rate(stats.nr_kernel_dispatches, prev.nr_kernel_dispatches),
            queued: rate(stats.nr_queued, prev.nr_queued),
            running: stats.nr_running as f64,
            waiting: (stats.nr_user_pending + stats.nr_shared_waiting) as f64,
        });
        // Keep one sample older than the span, so the line enters from the left edge.
        while self.samples.len() > 2 && self.samples[1].time_us < time_us - SPAN_US {
            self.samples.pop_front();
        }
    }

    pub fn samples(&self) -> &VecDeque<Sample> {
        &self.samples
    }

    pub fn latest(&self) -> Option<&Sample> {
        self.samples.back()
    }

    /// The largest value of `series` in the samples.
    pub fn peak(&self, series: Series) -> f64 {
        self.samples
            .iter()
            .flat_map(|s| series.values(s))
            .fold(0.0, f64::max)
    }

    /// Forgets everything (the scheduler stopped, the daemon went away).
    pub fn clear(&mut self) {
        self.samples.clear();
        self.last = None;
    }
}

/// The graph's vertical scale for a peak: 1, 2 or 5 times a power of ten, at least 1.
pub fn nice_ceiling(peak: f64) -> f64 {
    if peak.is_nan() || peak <= 1.0 {
        return 1.0;
    }
    let magnitude = 10f64.powf(peak.log10().floor());
    for step in [1.0, 2.0, 5.0, 10.0] {
        if peak <= step * magnitude {
            return step * magnitude;
        }
    }
    10.0 * magnitude
}

/// A number for a graph's legend: 950, 12.3k, 4.5M.
pub fn compact(value: f64) -> String {
    if value >= 1e6 {
        format!("{:.1}M", value / 1e6)
    } else if value >= 1e4 {
        format!("{:.0}k", value / 1e3)
    } else if value >= 1e3 {
        format!("{:.1}k", value / 1e3)
    } else {
        format!("{value:.0}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stats(uptime_ms: u64, user: u64, kernel: u64) -> Stats {
        Stats {
            uptime_ms,
            nr_user_dispatches: user,
            nr_kernel_dispatches: kernel,
            nr_running: 3,
            nr_user_pending: 1,
            nr_shared_waiting: 2,
            ..Stats::default()
        }
    }

    #[test]
    fn rates_come_from_the_uptime_between_snapshots() {
        let mut h = History::default();
        h.push(0, &stats(1000, 100, 10));
        assert!(h.latest().is_none(), "one snapshot gives no rate");
        h.push(500_000, &stats(1500, 600, 60));
        let s = h.latest().copied().unwrap_or_default();
        assert_eq!(s.user_dispatches, 1000.0);
        assert_eq!(s.kernel_dispatches, 100.0);
        assert_eq!(s.running, 3.0);
        assert_eq!(s.waiting, 3.0);
    }

    #[test]
    fn a_restart_starts_over_and_old_samples_go() {
        let mut h = History::default();
        h.push(0, &stats(1000, 100, 10));
        h.push(1_000_000, &stats(2000, 200, 20));
        h.push(2_000_000, &stats(100, 5, 1));
        assert_eq!(h.samples().len(), 1, "no sample across the restart");
        for i in 1..200 {
            h.push(
                2_000_000 + i * 1_000_000,
                &stats(100 + i as u64 * 1000, 0, 0),
            );
        }
        let oldest = h.samples()[1].time_us;
        assert!(oldest >= 201_000_000 - SPAN_US, "{oldest}");
    }

    #[test]
    fn scales_and_numbers() {
        assert_eq!(nice_ceiling(0.0), 1.0);
        assert_eq!(nice_ceiling(3.0), 5.0);
        assert_eq!(nice_ceiling(10.0), 10.0);
        assert_eq!(nice_ceiling(1234.0), 2000.0);
        assert_eq!(compact(950.0), "950");
        assert_eq!(compact(12_345.0), "12k");
        assert_eq!(compact(1_500.0), "1.5k");
        assert_eq!(compact(4_500_000.0), "4.5M");
    }
}
