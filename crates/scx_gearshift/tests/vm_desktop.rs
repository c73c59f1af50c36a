//! What a desktop user relies on, in the sched_ext VM: the benchmark's periodic tasks run under
//! each background load (a smoke run: short, one repetition, no timing asserted), and an idle
//! scheduler leaves the CPU alone. Ignored by plain `cargo test`; `tools/test.sh` runs them.

mod common;

use std::time::Duration;

use common::{field, number, run, run_within};

const TASKS: [&str; 3] = ["frame60", "frame144", "audio"];
const LOADS: [&str; 4] = ["hogs", "storm", "build", "mixed"];

#[test]
#[ignore = "boots the sched_ext VM; run by tools/test.sh"]
fn periodic_tasks_run_under_every_background_load() {
    let body = format!(
        r#"
N=$(nproc)
{desktop}
cd /tmp
rtapp_calibrate || exit 91
periodic_calibrate || exit 93
# The control socket lets the suite read the scheduler's counters around each load.
start_sched --control-socket /tmp/gs.sock
# A small tree: the suite waits for one build to finish after the short run.
SAMPLES=0 BUILD_FILES=4 desktop_suite gearshift 5 > /tmp/suite.out || {{ cat /tmp/suite.out; exit 92; }}
# key=value lines for the test's parser: result gearshift frame60_hogs_runs 120 -> frame60_hogs_runs=120
awk '$1 == "result" {{ print $3 "=" $4 }}' /tmp/suite.out
echo "state_after=$(state)"
stop_sched
"#,
        desktop = gearshift_testkit::desktop::DESKTOP_GUEST,
    );
    // Four loads, a build waited for, every run traced: the suite took 7 minutes beside
    // vm_reliability (CI runs two VMs at a time, tools/test-vm.sh), and over 10 in a CI run.
    let out = run_within(2, Duration::from_secs(1500), &body);
    assert_eq!(out.status, 0, "the suite ran to the end");
    for load in LOADS {
        // The suite's counters per load (what `cargo xtask bench` reports): the periodic
        // tasks' timer wakeups are latency-critical bursts under every load.
        assert!(
            number(&out, &format!("{load}_nr_latency_wakeups")) > 0.0,
            "latency-critical bursts counted under {load}"
        );
        // What the machine did meanwhile, per second (the bench reports it beside the misses:
        // in an emulated machine, timer interrupts decide how late the other timers fire).
        // Every busy CPU ticks; the other counts are there, whatever their size.
        assert!(
            number(&out, &format!("{load}_timer_irqs_per_s")) > 0.0,
            "timer interrupts counted under {load}"
        );
        for counter in ["wakeup_ipis", "irq_work", "idle_entries"] {
            assert!(
                number(&out, &format!("{load}_{counter}_per_s")) >= 0.0,
                "{counter} counted under {load}"
            );
        }
        for task in TASKS {
            let m = format!("{task}_{load}");
            assert!(
                number(&out, &format!("{m}_runs")) > 0.0,
                "{task} ran periods under {load}"
            );
            let miss = number(&out, &format!("{m}_miss_pct"));
            assert!((0.0..=100.0).contains(&miss), "{m}: miss % is a share");
            assert!(
                number(&out, &format!("{m}_wu_p99_us")) <= number(&out, &format!("{m}_wu_max_us")),
                "{m}: percentiles are ordered"
            );
            let slept = number(&out, &format!("{m}_slept"));
            assert!(
                slept <= number(&out, &format!("{m}_runs")),
                "{m}: periods that began with a sleep are periods run"
            );
            // The wakeup latency's two parts, traced: the task's timers and wakeups were
            // matched to it (the trace parser follows the kernel's event format). A task that
            // overran nearly every period of the short run armed its timer a few times at
            // most (rt-app starts a late period at once): there may be nothing to match. A
            // CI run once had frame60 sleep in one period of 88 under the hogs.
            if slept < 10.0 {
                continue;
            }
            for part in ["timer_late", "sched_delay"] {
                let (p50, p99) = (
                    number(&out, &format!("{m}_{part}_p50_us")),
                    number(&out, &format!("{m}_{part}_p99_us")),
                );
                assert!(
                    0.0 <= p50 && p50 <= p99,
                    "{m}: {part} p50 {p50} ≤ p99 {p99}"
                );
            }
        }
    }
    assert!(
        number(&out, "build_s") > 0.0,
        "the build load completed builds"
    );
    assert_eq!(
        number(&out, "build_failures"),
        0.0,
        "every build of the build load succeeded"
    );
    assert_eq!(field(&out, "state_after"), Some("enabled"), "never ejected");
    assert_eq!(field(&out, "sched_exit"), Some("0"));
}

#[test]
#[ignore = "boots the sched_ext VM; run by tools/test.sh"]
fn an_idle_scheduler_stays_off_the_cpu() {
    let out = run(
        2,
        r#"
start_sched
sleep 3
# utime + stime of the whole scheduler process, in clock ticks (100 per second).
ticks() { awk '{ print $14 + $15 }' /proc/$SCHED_PID/stat; }
a=$(ticks); sleep 10; b=$(ticks)
echo "idle_ticks=$((b - a))"
echo "hz=$(getconf CLK_TCK)"
echo "state_after=$(state)"
stop_sched
"#,
    );
    assert_eq!(out.status, 0);
    let hz = number(&out, "hz");
    // 10 s of one CPU is 10 * hz ticks; the target is under 1 %, this bound is loose (5 %)
    // because the emulated machine is noisy. A scheduling loop spinning while idle used ~80 %.
    let share = number(&out, "idle_ticks") / (10.0 * hz);
    assert!(
        share <= 0.05,
        "the idle scheduler used {:.1} % of a CPU",
        share * 100.0
    );
    assert_eq!(field(&out, "state_after"), Some("enabled"));
}

#[test]
#[ignore = "boots the sched_ext VM; run by tools/test.sh"]
fn a_message_storm_is_not_interactive_and_timers_still_preempt() {
    let out = run(
        2,
        r#"
start_sched --control-socket /tmp/gs.sock
cd /tmp
# A message storm: processes waking each other through sockets and pipes. Their wakers are
# about to wait, so preempting a CPU for them only adds switches.
# The machine's own timer-driven wakeups (kworkers, RCU, the stats requests) are
# latency-critical too: their rate while idle is subtracted from the storm's.
b0=$(stat nr_latency_wakeups); t0=$EPOCHREALTIME
sleep 3
b1=$(stat nr_latency_wakeups); t1=$EPOCHREALTIME
STORM="nr_interactive_wakeups nr_preemptions nr_latency_wakeups"
read -r w0 p0 l0 <<< "$(stats_of $STORM)"
t2=$EPOCHREALTIME; c0=$(awk '$1 == "ctxt" { print $2 }' /proc/stat)
# 300 loops: each of the 320 tasks is classified in its first few wakeups (task.bpf.h,
# note_wakeup_kind()), a fixed cost the storm's length amortizes (see the assertion below).
hackbench -g 4 -l 300 > /dev/null 2>&1
hackbench -p -g 4 -l 300 > /dev/null 2>&1
t3=$EPOCHREALTIME; c1=$(awk '$1 == "ctxt" { print $2 }' /proc/stat)
read -r w1 p1 l1 <<< "$(stats_of $STORM)"
echo "background_latency_wakeups_during_storm=$(echo "$b0 $b1 $t0 $t1 $t2 $t3" |
    awk '{ printf "%d", ($2 - $1) / ($4 - $3) * ($6 - $5) }')"
# Timer-driven periodic tasks among CPU hogs: they do take a CPU, as latency-critical bursts.
"$STRESS_NG" --cpu 2 --cpu-method loop -t 60 -q & HOGS=$!
sleep 1
TIMERS="nr_preemptions nr_latency_wakeups nr_latency_local nr_latency_idle nr_latency_preempt nr_latency_waited"
read -r p2 l2 a1 a2 a3 a4 <<< "$(stats_of $TIMERS)"
cyclictest -t 2 -i 2000 -l 1000 -q > /dev/null
read -r p3 l3 z1 z2 z3 z4 <<< "$(stats_of $TIMERS)"
kill $HOGS; wait $HOGS 2>/dev/null
echo "storm_wakeups=$((w1 - w0))"
echo "storm_preemptions=$((p1 - p0))"
echo "storm_latency_wakeups=$((l1 - l0))"
echo "storm_switches=$((c1 - c0))"
echo "timer_preemptions=$((p3 - p2))"
echo "timer_latency_wakeups=$((l3 - l2))"
echo "paths_sum=$((z1 - a1 + z2 - a2 + z3 - a3 + z4 - a4))"
echo "paths_taken_at_once=$((z1 - a1 + z3 - a3))"
echo "state_after=$(state)"
stop_sched
"#,
    );
    assert_eq!(out.status, 0);
    let wakeups = number(&out, "storm_wakeups");
    let storm = number(&out, "storm_preemptions");
    let switches = number(&out, "storm_switches");
    // The storm's tasks wake each other through sockets and pipes (SCX_WAKE_SYNC), so BPF
    // finds them message-driven after a few wakeups and they are not interactive, however
    // often they switch. Interactive wakeups were most of the storm's switches; since, they
    // are the first wakeups of each of its 320 tasks, before the average turns: a fixed count
    // per task (about 1,100 here; 1,300-2,150 when the average took 11 wakeups to turn),
    // while the switches vary with the machine's speed. With 100 loops a slow run had 8,600
    // switches (25 %, the test failed), others 19,000-25,000; 300 loops keep the fixed part
    // under a tenth (35,000 switches, 3 %). Preempting for them made hackbench 4x slower than
    // under EEVDF; what preempts now is the storm's asynchronous wakeups (hackbench's start
    // and exit), about 8 %.
    assert!(
        switches >= 2_000.0,
        "{switches} context switches in the storm"
    );
    assert!(
        wakeups * 5.0 <= switches,
        "{wakeups} interactive wakeups for {switches} context switches: the storm counted as \
         interactive"
    );
    assert!(
        storm * 5.0 <= switches,
        "{storm} preemptions for {switches} context switches in the storm"
    );
    assert!(
        number(&out, "timer_preemptions") >= 100.0,
        "timer wakeups among CPU hogs still preempt"
    );
    // The storm's tasks wake each other synchronously, so little of it is latency-critical: 8 %
    // of its context switches in runs here (every wakeup is a switch, so switches bound its
    // wakeups from above). Were sync wakeups not told apart, most of them would be.
    // cyclictest's 2 x 1000 timer wakeups are latency-critical.
    let storm_latency = number(&out, "storm_latency_wakeups")
        - number(&out, "background_latency_wakeups_during_storm");
    assert!(
        storm_latency * 5.0 <= switches,
        "{storm_latency} latency-critical wakeups for {switches} context switches in the storm \
         (the idle machine's rate subtracted)"
    );
    assert!(
        number(&out, "timer_latency_wakeups") >= 1000.0,
        "periodic timer wakeups among CPU hogs are latency-critical"
    );
    // Every latency-critical burst is counted under the one path that gave it a CPU (the
    // stats a user reads to see where frames wait); a snapshot may catch a burst between
    // the two counts, hence the slack of a few.
    let (wakeups, paths) = (
        number(&out, "timer_latency_wakeups"),
        number(&out, "paths_sum"),
    );
    assert!(
        (wakeups - paths).abs() <= 4.0,
        "{paths} latency-critical bursts by path, {wakeups} in all"
    );
    // Among as many hogs as CPUs, a timer's burst takes its own CPU or preempts another one;
    // waking an idle CPU or waiting is the exception.
    assert!(
        number(&out, "paths_taken_at_once") * 2.0 >= wakeups,
        "{} of {wakeups} bursts took a CPU from a hog",
        number(&out, "paths_taken_at_once")
    );
    assert_eq!(field(&out, "state_after"), Some("enabled"));
}
