//! The scheduler's counters in words and units (field meanings: gearshift-types' `Stats`).

use gearshift_types::{Mode, Stats};

/// `stats`: the important counters, a line each.
pub fn block(s: &Stats) -> String {
    let preemption = if s.preemption { "on" } else { "off" };
    let mut lines = vec![
        format!("Mode:              {} (preemption {preemption})", s.mode),
        format!("Uptime:            {}", duration(s.uptime_ms)),
        format!(
            "CPUs:              {} online, {} in use",
            s.nr_online_cpus, s.nr_active_cpus
        ),
        format!("Running now:       {}", tasks(s.nr_running)),
        format!(
            "Waiting now:       {} in the policy, {} in the shared queues",
            tasks(s.nr_user_pending),
            tasks(s.nr_shared_waiting)
        ),
        format!(
            "Queued:            {} handed to the user-space policy",
            tasks(s.nr_queued)
        ),
        format!(
            "Dispatches:        {} by user space, {} by the kernel (BPF)",
            count(s.nr_user_dispatches),
            count(s.nr_kernel_dispatches)
        ),
        format!(
            "Interactive:       {} in the last second, {} fast-path wakeups",
            tasks(s.nr_interactive),
            count(s.nr_interactive_wakeups)
        ),
        format!("Preemptions:       {}", count(s.nr_preemptions)),
        format!("Starvation guard:  {}", times(s.nr_starvation_guard)),
        format!("Congestion:        {}", times(s.nr_sched_congested)),
    ];
    if s.mode == Mode::Fifo {
        lines.push(format!(
            "FIFO:              {}, {} in FIFO order, {} overloaded, {}",
            if s.fifo_active { "active" } else { "inactive" },
            duration(s.fifo_time_ms),
            duration(s.fifo_overload_time_ms),
            format_args!("{} dispatches", count(s.nr_fifo_dispatches)),
        ));
    }
    lines.push(format!(
        "Page faults:       {} (scheduling thread, should stay 0)",
        count(s.page_faults)
    ));
    lines.push(format!("Arena in use:      {}", bytes(s.arena_used_bytes)));
    lines.join("\n")
}

/// `stats --watch`: one line an update.
pub fn line(s: &Stats) -> String {
    format!(
        "uptime {} | dispatches {} user / {} kernel | queued {} | running {} | preemptions {} \
         | page faults {}",
        duration(s.uptime_ms),
        count(s.nr_user_dispatches),
        count(s.nr_kernel_dispatches),
        count(s.nr_queued),
        count(s.nr_running),
        count(s.nr_preemptions),
        count(s.page_faults),
    )
}

fn tasks(n: u64) -> String {
    match n {
        1 => "1 task".into(),
        n => format!("{} tasks", count(n)),
    }
}

fn times(n: u64) -> String {
    match n {
        1 => "once".into(),
        n => format!("{} times", count(n)),
    }
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
