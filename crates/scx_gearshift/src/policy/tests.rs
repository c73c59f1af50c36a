use super::*;

const MS: u64 = 1_000_000;

/// What a nice-0 task's deadline is charged for a burst of `ns` without sleeping while slices
/// are full length (at most one waiter per CPU).
fn burst_charge(ns: u64) -> u64 {
    ns.min(cfg(1).slice_max_ns * BURST_CHARGE_SLICES)
}

fn cfg(nr_cpus: u64) -> PolicyConfig {
    PolicyConfig {
        nr_cpus,
        ..PolicyConfig::default()
    }
}

/// A task as BPF would report it.
fn task(pid: i32, sum_exec_ms: u64, nvcsw: u64, at_ms: u64) -> QueuedTask {
    QueuedTask {
        pid,
        cpu: 0,
        cpumask_gen: 0,
        nr_cpus_allowed: 4,
        enq_seq: 1,
        wakeup: false,
        sum_exec_runtime: sum_exec_ms * MS,
        nvcsw,
        weight: DEFAULT_WEIGHT,
        enq_ns: at_ms * MS,
        interactive_hint: false,
        message_driven: false,
        slept_ns: 0,
    }
}

fn drain(p: &mut Policy) -> Vec<i32> {
    std::iter::from_fn(|| p.next(0)).map(|d| d.pid).collect()
}

#[test]
fn the_task_that_ran_less_goes_first() {
    let mut p = Policy::new(cfg(1), 16);
    p.enqueue(&task(1, 0, 0, 0));
    p.enqueue(&task(2, 0, 0, 0));
    drain(&mut p);
    // 1 ran 30 ms, 2 ran 3 ms since.
    p.enqueue(&task(1, 30, 0, 40));
    p.enqueue(&task(2, 3, 0, 40));
    assert_eq!(drain(&mut p), vec![2, 1]);
}

#[test]
fn equal_deadlines_leave_in_arrival_order() {
    let mut p = Policy::new(cfg(1), 16);
    for pid in [5, 3, 9] {
        p.enqueue(&task(pid, 0, 0, 0));
    }
    assert_eq!(drain(&mut p), vec![5, 3, 9]);
}

#[test]
fn weight_slows_vruntime_but_is_capped() {
    let mut p = Policy::new(cfg(1), 16);
    let heavy = |pid, weight, ms| QueuedTask {
        weight,
        ..task(pid, ms, 0, 10)
    };
    for (pid, w) in [(1, 100), (2, 400), (3, 10_000)] {
        p.enqueue(&heavy(pid, w, 0));
    }
    drain(&mut p);
    // All ran 40 ms; deadlines: 40 ms at weight 100, 10 ms at weight 400, and 4 ms for the
    // 10000-weight task only if uncapped: the cap (1000) gives it 4 ms.
    for (pid, w) in [(1, 100), (2, 400), (3, 10_000)] {
        p.enqueue(&heavy(pid, w, 40));
    }
    let d: Vec<(i32, u64)> = std::iter::from_fn(|| p.next(0))
        .map(|d| (d.pid, d.vtime))
        .collect();
    assert_eq!(d.iter().map(|x| x.0).collect::<Vec<_>>(), vec![3, 2, 1]);
    // The burst is charged too (not a wakeup): vruntime + capped burst, both weight-scaled.
    let charged = 40 * MS + burst_charge(40 * MS);
    assert_eq!(d[0].1, charged * DEFAULT_WEIGHT / 1000);
    assert_eq!(d[1].1, charged * DEFAULT_WEIGHT / 400);
}

#[test]
fn frequent_voluntary_switchers_become_interactive_and_hogs_do_not() {
    let mut p = Policy::new(cfg(2), 16);
    for step in 0..10u64 {
        let t = step * 150;
        // pid 1: 60 switches per 150 ms (400/s); pid 2: none.
        p.enqueue(&task(1, step, step * 60, t));
        p.enqueue(&task(2, step * 150, 0, t));
        drain(&mut p);
    }
    assert!(p.is_interactive(1));
    assert!(!p.is_interactive(2));
    assert_eq!(p.nr_interactive(), 1);
}

#[test]
fn a_first_window_counts_in_full() {
    let mut p = Policy::new(cfg(2), 16);
    // Both seen for the first time at 0, again 1 s later. pid 1 switched 5 times meanwhile:
    // 5/s, over the threshold (2/s); averaged with a starting 0 it read 1/s. pid 2, a hog,
    // switched once.
    for (at_ms, ran_ms, nvcsw) in [(0, 0, [0, 0]), (1000, 10, [5, 1])] {
        p.enqueue(&task(1, ran_ms, nvcsw[0], at_ms));
        p.enqueue(&task(2, ran_ms * 100, nvcsw[1], at_ms));
        drain(&mut p);
    }
    assert!(p.is_interactive(1));
    assert!(!p.is_interactive(2));
}

#[test]
fn message_driven_tasks_are_never_interactive_whatever_their_switch_rate() {
    let mut p = Policy::new(cfg(2), 16);
    let storm = |pid, step: u64, driven| QueuedTask {
        wakeup: true,
        message_driven: driven,
        ..task(pid, step, step * 60, step * 150)
    };
    for step in 0..10u64 {
        // Both switch 400 times a second; BPF saw pid 2 woken mostly by messages.
        p.enqueue(&storm(1, step, false));
        p.enqueue(&storm(2, step, true));
        let decided: Vec<(i32, bool)> = std::iter::from_fn(|| p.next(0))
            .map(|d| (d.pid, d.interactive))
            .collect();
        assert!(decided.contains(&(2, false)), "step {step}: {decided:?}");
    }
    assert!(p.is_interactive(1));
    assert!(!p.is_interactive(2));
    assert_eq!(p.nr_interactive(), 1);
    // Woken by timers again: its switch rate counts from the next measurement on.
    for step in 10..13u64 {
        p.enqueue(&storm(2, step, false));
        drain(&mut p);
    }
    assert!(p.is_interactive(2));
    assert_eq!(p.nr_interactive(), 2);
    // A child of a message-driven task does not start interactive either.
    p.enqueue(&QueuedTask {
        interactive_hint: true,
        message_driven: true,
        ..task(3, 0, 0, 2000)
    });
    assert!(!p.next(0).unwrap().interactive);
    assert_eq!(p.nr_interactive(), 2);
}

#[test]
fn interactive_task_is_not_charged_for_its_burst() {
    let mut p = Policy::new(cfg(2), 16);
    for step in 0..10u64 {
        let t = step * 150;
        p.enqueue(&task(1, step * 10, step * 60, t));
        p.enqueue(&task(2, step * 10, 0, t));
        drain(&mut p);
    }
    // Same CPU use so far; 2 is a hog charged for its burst, 1 is interactive.
    p.enqueue(&task(2, 100, 0, 1500));
    p.enqueue(&task(1, 100, 600, 1500));
    assert_eq!(drain(&mut p), vec![1, 2]);
}

#[test]
fn a_long_sleeper_gets_one_slice_of_credit_not_a_monopoly() {
    let mut p = Policy::new(cfg(1), 16);
    p.enqueue(&task(1, 0, 0, 0));
    p.enqueue(&task(2, 0, 0, 0));
    drain(&mut p);
    // 2 keeps running for a second while 1 sleeps.
    for ms in (100..=1000).step_by(100) {
        p.enqueue(&task(2, ms, 0, ms));
        drain(&mut p);
    }
    let woke = QueuedTask {
        wakeup: true,
        ..task(1, 0, 1, 1001)
    };
    p.enqueue(&woke);
    let d = p.next(0).unwrap();
    assert_eq!(d.pid, 1);
    let floor = d.vtime;
    assert!(
        floor > 500 * MS,
        "credit limited to a slice, got vtime {floor}"
    );
}

#[test]
fn a_message_driven_wakeup_in_a_crowd_gets_no_more_credit_than_it_slept() {
    let mut p = Policy::new(cfg(1), 16);
    for pid in 1..=4 {
        p.enqueue(&task(pid, 0, 0, 0));
    }
    drain(&mut p);
    // 9 runs for a second while the others sleep.
    for ms in (100..=900).step_by(100) {
        p.enqueue(&task(9, ms, 0, ms));
        drain(&mut p);
    }
    p.enqueue(&task(9, 1000, 0, 1000));
    let latest = p.next(0).unwrap().vruntime;
    let slice = p.config().slice_max_ns;
    let woken = |pid, message_driven, slept_ms: u64| QueuedTask {
        wakeup: true,
        message_driven,
        slept_ns: slept_ms * MS,
        ..task(pid, 0, 1, 1001)
    };
    // One waiter per CPU: a reader keeps its slice of credit, like any sleeper.
    p.enqueue(&woken(1, true, 0));
    assert_eq!(p.next(0).unwrap().vtime, latest - slice);
    // Eight waiters per CPU, slices cut short: a reader that slept 1 ms wakes 1 ms behind the
    // latest vruntime dispatched, while one that slept through a child's whole run (make)
    // and a timer's sleeper keep a slice.
    assert!(p.next(8).is_none());
    p.enqueue(&woken(2, true, 1));
    p.enqueue(&woken(3, true, 900));
    p.enqueue(&woken(4, false, 1));
    let order: Vec<(i32, u64)> = std::iter::from_fn(|| p.next(8))
        .map(|d| (d.pid, d.vtime))
        .collect();
    assert_eq!(
        order,
        vec![(3, latest - slice), (4, latest - slice), (2, latest - MS)]
    );
}

#[test]
fn slice_shrinks_with_waiters_within_bounds() {
    let p = Policy::new(cfg(4), 16);
    let c = *p.config();
    assert_eq!(p.slice_ns(0), c.slice_max_ns);
    assert_eq!(p.slice_ns(4), c.slice_max_ns);
    assert_eq!(p.slice_ns(8), c.slice_max_ns / 2);
    assert_eq!(p.slice_ns(16), c.slice_max_ns / 4);
    assert_eq!(p.slice_ns(10_000), c.slice_min_ns);
}

#[test]
fn next_uses_the_waiting_count_for_the_slice() {
    let mut p = Policy::new(cfg(1), 64);
    for pid in 0..4 {
        p.enqueue(&task(pid, 0, 0, 0));
    }
    // 4 in user space + 4 in BPF queues on 1 CPU.
    assert_eq!(p.next(4).unwrap().slice_ns, p.slice_ns(8));
}

#[test]
fn pinned_tasks_keep_their_cpu_others_go_anywhere() {
    let mut p = Policy::new(cfg(4), 16);
    p.enqueue(&QueuedTask {
        cpu: 3,
        nr_cpus_allowed: 1,
        ..task(1, 0, 0, 0)
    });
    p.enqueue(&QueuedTask {
        cpu: 2,
        ..task(2, 0, 0, 0)
    });
    let d1 = p.next(0).unwrap();
    let d2 = p.next(0).unwrap();
    assert_eq!((d1.pid, d1.cpu), (1, 3));
    assert_eq!((d2.pid, d2.cpu), (2, CPU_ANY));
}

#[test]
fn decisions_echo_the_enqueue_sequence_and_cpumask_generation() {
    let mut p = Policy::new(cfg(4), 16);
    p.enqueue(&QueuedTask {
        enq_seq: 77,
        cpumask_gen: 5,
        ..task(1, 0, 0, 0)
    });
    let d = p.next(0).unwrap();
    assert_eq!((d.enq_seq, d.cpumask_gen), (77, 5));
    assert_eq!(p.nr_scheduled(), 1);
    p.requeue(&d);
    assert_eq!(p.nr_scheduled(), 0);
    assert_eq!(p.next(0), Some(d));
}

#[test]
fn a_recycled_pid_starts_fresh() {
    let mut p = Policy::new(cfg(1), 16);
    p.enqueue(&task(1, 500, 1000, 0));
    drain(&mut p);
    // New process with the same pid: counters restart near zero.
    p.enqueue(&task(1, 1, 0, 200));
    let d = p.next(0).unwrap();
    assert_eq!(
        d.vtime, 0,
        "no leftover vruntime or burst from the old task"
    );
}

#[test]
fn idle_tasks_are_forgotten_with_their_classification() {
    let mut p = Policy::new(cfg(2), 16);
    for step in 0..10u64 {
        p.enqueue(&task(1, step, step * 60, step * 150));
        drain(&mut p);
    }
    p.enqueue(&task(2, 0, 0, 20_000));
    drain(&mut p);
    assert_eq!(p.nr_interactive(), 1);
    p.forget_idle(20_000 * MS);
    assert_eq!(p.tracked_tasks(), 1);
    assert_eq!(p.nr_interactive(), 0);
}

#[test]
fn a_newer_enqueue_supersedes_the_waiting_one() {
    let mut p = Policy::new(cfg(2), 16);
    p.enqueue(&QueuedTask {
        enq_seq: 1,
        ..task(1, 0, 0, 0)
    });
    p.enqueue(&QueuedTask {
        enq_seq: 2,
        ..task(1, 1, 0, 1)
    });
    assert_eq!(p.pending(), 1);
    let d = p.next(0).unwrap();
    assert_eq!((d.pid, d.enq_seq), (1, 2));
    assert_eq!(p.next(0), None, "the stale entry is skipped");
    assert_eq!(p.pending(), 0);
}

#[test]
fn slots_of_forgotten_tasks_are_reused() {
    let mut p = Policy::new(cfg(2), 4);
    for pid in 0..4 {
        p.enqueue(&task(pid, 0, 0, 0));
    }
    drain(&mut p);
    p.forget_idle(60_000 * MS);
    assert_eq!(p.tracked_tasks(), 0);
    for pid in 10..14 {
        p.enqueue(&task(pid, 0, 0, 61_000));
    }
    assert_eq!(drain(&mut p), vec![10, 11, 12, 13]);
}

#[test]
fn dispatch_all_stops_when_the_ring_is_full_and_keeps_the_rest() {
    let mut p = Policy::new(cfg(1), 16);
    for pid in 1..=5 {
        p.enqueue(&task(pid, 0, 0, 0));
    }
    let mut sent = Vec::new();
    p.dispatch_all(3, |d| {
        if sent.len() == 2 {
            return false;
        }
        sent.push((d.pid, d.slice_ns));
        true
    });
    // One slice for the batch, sized for 5 pending + 3 in BPF on one CPU.
    assert_eq!(sent, vec![(1, p.slice_ns(8)), (2, p.slice_ns(8))]);
    assert_eq!(p.pending(), 3);
    assert_eq!(drain(&mut p), vec![3, 4, 5], "the refused one stays first");
}

#[test]
fn children_of_interactive_tasks_start_interactive_until_measured() {
    let mut p = Policy::new(cfg(2), 16);
    p.enqueue(&QueuedTask {
        interactive_hint: true,
        ..task(1, 0, 0, 0)
    });
    p.enqueue(&task(2, 0, 0, 0));
    let d: Vec<(i32, bool)> = std::iter::from_fn(|| p.next(0))
        .map(|d| (d.pid, d.interactive))
        .collect();
    assert_eq!(d, vec![(1, true), (2, false)]);
    assert_eq!(p.nr_interactive(), 1);
    // Measured as a hog (no voluntary switches over 200 ms): no longer interactive.
    p.enqueue(&task(1, 200, 0, 200));
    assert!(!p.next(0).unwrap().interactive);
    assert_eq!(p.nr_interactive(), 0);
}

#[test]
fn sleepers_credit_is_bounded_against_tasks_bpf_requeues_itself() {
    let mut p = Policy::new(cfg(1), 16);
    p.enqueue(&task(1, 0, 0, 0));
    p.enqueue(&task(2, 0, 0, 0));
    drain(&mut p);
    // 2 runs for a second while 1 sleeps, its slices queued by BPF: the policy only hears of
    // the vruntime BPF carried it to.
    p.note_kernel_vruntime(1000 * MS);
    let woke = QueuedTask {
        wakeup: true,
        ..task(1, 0, 1, 1001)
    };
    p.enqueue(&woke);
    let d = p.next(0).unwrap();
    assert_eq!(d.vtime, 1000 * MS - p.config().slice_max_ns);
    // A lower report never takes the floor back.
    p.note_kernel_vruntime(10 * MS);
    p.enqueue(&task(3, 0, 0, 1002));
    assert_eq!(
        p.next(0).unwrap().vtime,
        1000 * MS - p.config().slice_max_ns
    );
}

#[test]
fn decisions_carry_the_vruntime_their_deadline_is_built_on() {
    let mut p = Policy::new(cfg(1), 16);
    p.enqueue(&task(1, 0, 0, 0));
    drain(&mut p);
    // 20 ms more without sleeping: vruntime 20 ms, deadline 20 ms + the (capped) 20 ms burst.
    p.enqueue(&task(1, 20, 0, 20));
    let d = p.next(0).unwrap();
    assert_eq!(d.vruntime, 20 * MS);
    assert_eq!(d.vtime, 20 * MS + burst_charge(20 * MS));
}

#[test]
fn a_task_that_never_sleeps_is_charged_for_a_capped_burst() {
    // 200 ms without sleeping: its deadline is its vruntime plus the capped burst, not plus
    // the whole of its run since it last slept.
    let mut p = Policy::new(cfg(1), 16);
    p.enqueue(&task(1, 0, 0, 0));
    drain(&mut p);
    p.enqueue(&task(1, 200, 0, 200));
    let hog = p.next(0).unwrap();
    assert_eq!(hog.vtime - hog.vruntime, burst_charge(200 * MS));
    assert!(hog.vtime - hog.vruntime < 200 * MS, "the charge is capped");
}

#[test]
fn a_crowded_queue_charges_a_burst_in_its_shorter_slices() {
    // Under many waiters slices shrink, and the cap on a burst's charge with them: a hog then
    // waits a few short rounds behind fresh tasks, not ten full slices.
    let mut p = Policy::new(cfg(1), 16);
    p.enqueue(&task(1, 0, 0, 0));
    drain(&mut p);
    p.enqueue(&task(1, 200, 0, 200));
    let uncrowded = p.next(0).unwrap();
    p.enqueue(&task(2, 0, 0, 200));
    let short_slice = p.next(100).unwrap().slice_ns;
    assert!(short_slice < p.config().slice_max_ns);
    p.enqueue(&task(1, 400, 0, 400));
    let crowded = p.next(0).unwrap();
    assert_eq!(
        crowded.vtime - crowded.vruntime,
        BURST_CHARGE_SLICES * short_slice
    );
    assert!(crowded.vtime - crowded.vruntime < uncrowded.vtime - uncrowded.vruntime);
}
