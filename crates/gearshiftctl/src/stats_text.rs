//! The scheduler's counters in words and units (field meanings: gearshift-types' `Stats`).

use gearshift_i18n::{fill_named, gettext, ngettext};
use gearshift_types::{Mode, Stats};

use crate::text::{aligned, on_off};

/// `stats`: the important counters, a line each.
pub fn block(s: &Stats) -> String {
    let mut rows = vec![
        (
            gettext("Mode:"),
            fill_named(
                &gettext("{mode} (preemption {preemption})"),
                &[
                    ("mode", s.mode.as_str()),
                    ("preemption", &on_off(s.preemption)),
                ],
            ),
        ),
        (gettext("Uptime:"), duration(s.uptime_ms)),
        (
            gettext("CPUs:"),
            fill_named(
                &gettext("{online} online, {used} in use"),
                &[
                    ("online", &s.nr_online_cpus.to_string()),
                    ("used", &s.nr_active_cpus.to_string()),
                ],
            ),
        ),
        (gettext("Running now:"), tasks(s.nr_running)),
        (
            gettext("Waiting now:"),
            fill_named(
                &gettext("{policy} in the policy, {shared} in the shared queues"),
                &[
                    ("policy", &tasks(s.nr_user_pending)),
                    ("shared", &tasks(s.nr_shared_waiting)),
                ],
            ),
        ),
        (
            gettext("Queued:"),
            fill_named(
                &gettext("{tasks} handed to the user-space policy"),
                &[("tasks", &tasks(s.nr_queued))],
            ),
        ),
        (
            gettext("Dispatches:"),
            fill_named(
                &gettext("{user} by user space, {kernel} by the kernel (BPF)"),
                &[
                    ("user", &count(s.nr_user_dispatches)),
                    ("kernel", &count(s.nr_kernel_dispatches)),
                ],
            ),
        ),
        (
            gettext("Interactive:"),
            fill_named(
                &gettext("{tasks} in the last second, {wakeups} fast-path wakeups"),
                &[
                    ("tasks", &tasks(s.nr_interactive)),
                    ("wakeups", &count(s.nr_interactive_wakeups)),
                ],
            ),
        ),
        (
            // Translators: wakeups of frames, audio and input (short, timer- or device-woken
            // bursts) that the scheduler ran ahead of everything else; the value is a count.
            gettext("Latency-critical:"),
            fill_named(
                &gettext("{wakeups} wakeups, {slow} started 4 ms late or more, {lost} overran"),
                &[
                    ("wakeups", &count(s.nr_latency_wakeups)),
                    ("slow", &count(s.nr_latency_slow())),
                    ("lost", &count(s.nr_latency_rank_lost)),
                ],
            ),
        ),
        (gettext("Preemptions:"), count(s.nr_preemptions)),
        (gettext("Starvation guard:"), times(s.nr_starvation_guard)),
        (gettext("Congestion:"), times(s.nr_sched_congested)),
    ];
    if s.mode == Mode::Fifo {
        let state = if s.fifo_active {
            gettext("active")
        } else {
            gettext("inactive")
        };
        rows.push((
            "FIFO:".into(),
            fill_named(
                &gettext(
                    "{state}, {time} in FIFO order, {overload} overloaded, {dispatches} dispatches",
                ),
                &[
                    ("state", &state),
                    ("time", &duration(s.fifo_time_ms)),
                    ("overload", &duration(s.fifo_overload_time_ms)),
                    ("dispatches", &count(s.nr_fifo_dispatches)),
                ],
            ),
        ));
    }
    rows.push((
        gettext("Page faults:"),
        fill_named(
            &gettext("{count} (scheduling thread, should stay 0)"),
            &[("count", &count(s.page_faults))],
        ),
    ));
    rows.push((gettext("Arena in use:"), bytes(s.arena_used_bytes)));
    aligned(&rows).join("\n")
}

/// `stats --watch`: one line an update.
pub fn line(s: &Stats) -> String {
    fill_named(
        &gettext(
            // One literal: xgettext reads Rust as C, where a `\` line break keeps the indent.
            "uptime {uptime} | dispatches {user} user / {kernel} kernel | queued {queued} | running {running} | preemptions {preemptions} | page faults {faults}",
        ),
        &[
            ("uptime", &duration(s.uptime_ms)),
            ("user", &count(s.nr_user_dispatches)),
            ("kernel", &count(s.nr_kernel_dispatches)),
            ("queued", &count(s.nr_queued)),
            ("running", &count(s.nr_running)),
            ("preemptions", &count(s.nr_preemptions)),
            ("faults", &count(s.page_faults)),
        ],
    )
}

fn tasks(n: u64) -> String {
    let n32 = u32::try_from(n).unwrap_or(u32::MAX);
    fill_named(&ngettext("{n} task", "{n} tasks", n32), &[("n", &count(n))])
}

fn times(n: u64) -> String {
    if n == 1 {
        return gettext("once");
    }
    let n32 = u32::try_from(n).unwrap_or(u32::MAX);
    fill_named(&ngettext("{n} time", "{n} times", n32), &[("n", &count(n))])
}

/// A counter with thousands separated by spaces (locale-neutral).
fn count(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(' ');
        }
        out.push(c);
    }
    out
}

/// Milliseconds as "850 ms", "12.3 s", "4 min 05 s" or "2 h 03 min".
fn duration(ms: u64) -> String {
    let secs = ms / 1000;
    if ms < 1000 {
        format!("{ms} ms")
    } else if secs < 60 {
        format!("{}.{} s", secs, (ms % 1000) / 100)
    } else if secs < 3600 {
        format!("{} min {:02} s", secs / 60, secs % 60)
    } else {
        format!("{} h {:02} min", secs / 3600, (secs % 3600) / 60)
    }
}

/// Bytes in binary units.
fn bytes(n: u64) -> String {
    const UNITS: [&str; 4] = ["KiB", "MiB", "GiB", "TiB"];
    if n < 1024 {
        return format!("{n} B");
    }
    let mut value = n as f64 / 1024.0;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    format!("{value:.1} {}", UNITS[unit])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units() {
        assert_eq!(count(0), "0");
        assert_eq!(count(999), "999");
        assert_eq!(count(1000), "1 000");
        assert_eq!(count(1234567), "1 234 567");
        assert_eq!(duration(850), "850 ms");
        assert_eq!(duration(12_345), "12.3 s");
        assert_eq!(duration(245_000), "4 min 05 s");
        assert_eq!(duration(7_380_000), "2 h 03 min");
        assert_eq!(bytes(512), "512 B");
        assert_eq!(bytes(3 * 1024 * 1024 / 2), "1.5 MiB");
        assert_eq!(tasks(1), "1 task");
        assert_eq!(times(2), "2 times");
    }

    fn sample() -> Stats {
        Stats {
            mode: Mode::Fifo,
            preemption: true,
            fifo_active: true,
            uptime_ms: 61_000,
            nr_online_cpus: 4,
            nr_active_cpus: 4,
            nr_running: 3,
            nr_queued: 1500,
            nr_user_dispatches: 1200,
            nr_kernel_dispatches: 300,
            nr_preemptions: 7,
            nr_latency_wakeups: 40,
            nr_latency_slow_idle: 2,
            nr_latency_slow_waited: 1,
            nr_latency_rank_lost: 5,
            page_faults: 0,
            arena_used_bytes: 2048,
            ..Stats::default()
        }
    }

    #[test]
    fn block_names_the_important_counters() {
        let text = block(&sample());
        for want in [
            "Mode:              fifo (preemption on)",
            "Uptime:            1 min 01 s",
            "Running now:       3 tasks",
            "Queued:            1 500 tasks handed",
            "Dispatches:        1 200 by user space, 300 by the kernel (BPF)",
            "Latency-critical:  40 wakeups, 3 started 4 ms late or more, 5 overran",
            "Preemptions:       7",
            "FIFO:              active",
            "Page faults:       0 (",
            "Arena in use:      2.0 KiB",
        ] {
            assert!(text.contains(want), "missing {want:?} in\n{text}");
        }
        let interactive = Stats {
            mode: Mode::Interactive,
            ..sample()
        };
        assert!(!block(&interactive).contains("FIFO"));
    }

    #[test]
    fn line_is_one_line() {
        let text = line(&sample());
        assert!(!text.contains('\n'));
        assert!(text.starts_with("uptime 1 min 01 s | dispatches 1 200 user / 300 kernel"));
        assert!(text.ends_with("preemptions 7 | page faults 0"), "{text}");
    }
}
