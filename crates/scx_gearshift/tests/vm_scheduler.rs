//! scx_gearshift attached for real, in the sched_ext VM. Ignored by plain `cargo test`;
//! `tools/test.sh` runs them.

mod common;

use common::{field, number, run, sched_ext_log};

#[test]
#[ignore = "boots the sched_ext VM; run by tools/test.sh"]
fn attaches_answers_control_requests_and_detaches_cleanly() {
    let out = run(
        2,
        r#"
start_sched --control-socket /tmp/gs.sock --stats 1
echo "state=$(state)"
echo "ops=$(cat /sys/kernel/sched_ext/root/ops)"
"$STRESS_NG" --cpu 2 -t 3 -q
/usr/bin/python3 - <<'PY'
import json, socket
s = socket.socket(socket.AF_UNIX); s.connect("/tmp/gs.sock"); f = s.makefile("rw")
def ask(line):
    f.write(line + "\n"); f.flush(); return json.loads(f.readline())
r = ask('{"request":"set-settings","settings":{"mode":"interactive","preemption":true}}')
print("ack=" + r["response"] + ":" + r["settings"]["mode"])
r = ask('{"request":"get-stats"}')
print("stats_queued=%d" % r["stats"]["nr_queued"])
print("stats_cpus=%d" % r["stats"]["nr_online_cpus"])
r = ask('{"request":"set-settings","settings":{"mode":"warp","preemption":true}}')
print("bad_mode=" + r["response"])
r = ask('not json')
print("garbage=" + r["response"])
r = ask('{"request":"set-settings","settings":{"mode":"interactive","preemption":false}}')
print("preempt_ack=%s" % r["settings"]["preemption"])
r = ask('{"request":"set-settings","settings":{"mode":"interactive","preemption":"no"}}')
print("bad_bool=" + r["response"])
r = ask('{"request":"get-settings"}')
print("still_mode=" + r["settings"]["mode"])
print("still_preempt=%s" % r["settings"]["preemption"])
PY
stop_sched
echo "state_after=$(state)"
echo "exit_reason=$(grep -c 'EXIT: unregistered from user space' /tmp/gs.log)"
[ -e /tmp/gs.sock ] && echo socket_left=1 || echo socket_left=0
"#,
    );
    assert_eq!(out.status, 0);
    assert_eq!(field(&out, "state"), Some("enabled"));
    assert!(field(&out, "ops").is_some_and(|o| o.starts_with("gearshift")));
    assert_eq!(field(&out, "ack"), Some("settings:interactive"));
    assert!(
        number(&out, "stats_queued") > 0.0,
        "tasks went through user space"
    );
    assert_eq!(number(&out, "stats_cpus"), 2.0);
    assert_eq!(field(&out, "bad_mode"), Some("error"));
    assert_eq!(field(&out, "garbage"), Some("error"));
    assert_eq!(field(&out, "still_mode"), Some("interactive"));
    assert_eq!(field(&out, "preempt_ack"), Some("False"));
    assert_eq!(field(&out, "bad_bool"), Some("error"));
    assert_eq!(
        field(&out, "still_preempt"),
        Some("False"),
        "a bad request changes nothing"
    );
    assert_eq!(field(&out, "sched_exit"), Some("0"));
    assert_eq!(field(&out, "state_after"), Some("disabled"));
    assert_eq!(
        field(&out, "exit_reason"),
        Some("1"),
        "the kernel's reason is printed"
    );
    assert_eq!(field(&out, "socket_left"), Some("0"));
}

#[test]
#[ignore = "boots the sched_ext VM; run by tools/test.sh"]
fn survives_affinity_races_without_page_faults() {
    let out = run(
        2,
        r#"
start_sched --stats 1
"$STRESS_NG" --race-sched 4 -t 60 -q; echo "race_status=$?"
echo "after_race=$(state)"
"$STRESS_NG" --cpu-sched 2 --affinity 2 --affinity-rand -t 20 -q; echo "churn_status=$?"
echo "after_churn=$(state)"
sleep 1.5
echo "page_faults=$(last_stat page_faults)"
echo "bounced=$(last_stat bounce)"
echo "cancelled=$(last_stat cancel)"
stop_sched
"#,
    );
    assert_eq!(out.status, 0);
    assert_eq!(
        field(&out, "after_race"),
        Some("enabled"),
        "{:?}",
        sched_ext_log(&out)
    );
    assert_eq!(
        field(&out, "after_churn"),
        Some("enabled"),
        "{:?}",
        sched_ext_log(&out)
    );
    assert_eq!(field(&out, "race_status"), Some("0"));
    assert_eq!(field(&out, "churn_status"), Some("0"));
    assert_eq!(number(&out, "page_faults"), 0.0);
    assert_eq!(field(&out, "sched_exit"), Some("0"));
}

#[test]
#[ignore = "boots the sched_ext VM; run by tools/test.sh"]
fn sigkill_falls_back_to_the_default_scheduler() {
    let out = run(
        2,
        r#"
start_sched
echo "before=$(state)"
kill -9 $SCHED_PID
for _ in $(seq 1 100); do [ "$(state)" = disabled ] && break; sleep 0.1; done
echo "after_kill=$(state)"
"$STRESS_NG" --cpu 2 -t 2 -q && echo "system_alive=1"
"#,
    );
    assert_eq!(out.status, 0);
    assert_eq!(field(&out, "before"), Some("enabled"));
    assert_eq!(field(&out, "after_kill"), Some("disabled"));
    assert_eq!(field(&out, "system_alive"), Some("1"));
}

#[test]
#[ignore = "boots the sched_ext VM; run by tools/test.sh"]
fn keeps_every_cpu_busy_with_as_many_hogs_and_runs_hackbench() {
    let out = run(
        2,
        r#"
start_sched
"$STRESS_NG" --cpu 2 --cpu-method loop -t 20 -q &
HOGS=$!
sleep 4
echo "busy=$(busy_pct 8)"
wait $HOGS
hackbench -g 4 -l 50 > /tmp/hb.log 2>&1; echo "hackbench_status=$?"
echo "still=$(state)"
stop_sched
"#,
    );
    assert_eq!(out.status, 0);
    let busy = number(&out, "busy");
    // A CPU left idle while a hog waits (the failure this guards against) shows as 50-75 %.
    // The 99.5 % target lives in the benchmark: on a host busy with other VMs the emulated
    // CPUs' accounting alone measured 91.9 and 98.5 % with nothing wrong in the scheduler.
    assert!(busy >= 90.0, "CPUs busy {busy}% with 2 hogs on 2 CPUs");
    assert_eq!(field(&out, "hackbench_status"), Some("0"));
    assert_eq!(field(&out, "still"), Some("enabled"));
}

#[test]
#[ignore = "boots the sched_ext VM; run by tools/test.sh"]
fn keeps_scheduling_across_cpu_hotplug_without_a_restart() {
    let out = run(
        2,
        r#"
# A short watchdog: a task left waiting for the CPU that went away would get the scheduler
# ejected while the CPU stays offline (twice the timeout).
start_sched --stats 1 --watchdog-timeout-ms 5000
# Hogs pinned to CPU 1 wait in its queue when it goes; unpinned ones keep both CPUs busy.
taskset -c 1 "$STRESS_NG" --cpu 3 -t 90 -q &
PINNED=$!
"$STRESS_NG" --cpu 2 -t 90 -q &
HOGS=$!
# stress-ng forks its workers seconds after it starts on a busy host: the CPU goes only once
# all three pinned workers run.
for _ in $(seq 1 120); do [ "$(pgrep -P $PINNED | wc -l)" -ge 3 ] && break; sleep 0.25; done
sleep 1
# CPU time (ticks) of each of the pinned hogs' workers.
cpu_ticks() { for w in $(pgrep -P $PINNED); do awk '{ print $14 + $15 }' /proc/$w/stat; done; }
echo 0 > /sys/devices/system/cpu/cpu1/online
sleep 1
cpu_ticks > /tmp/ticks0
sleep 10
cpu_ticks > /tmp/ticks1
echo "after_offline=$(state)"
kill -0 $SCHED_PID && echo "alive_offline=1"
echo "pinned_workers=$(wc -l < /tmp/ticks0)"
# Every pinned worker ran while its CPU was gone (the kernel moved it, breaking its affinity).
echo "pinned_stuck=$(paste /tmp/ticks0 /tmp/ticks1 | awk '$2 <= $1' | wc -l)"
echo "cpus_offline=$(last_stat cpus)"
# Work still gets done on the CPU left.
timeout 20 sh -c 'echo done' > /tmp/work 2>&1; echo "work_offline=$(cat /tmp/work)"
echo 1 > /sys/devices/system/cpu/cpu1/online
sleep 4
echo "after_online=$(state)"
echo "cpus_online=$(last_stat cpus)"
# The CPU that came back runs tasks again.
timeout 20 taskset -c 1 sh -c 'echo back' > /tmp/back 2>&1; echo "cpu1_runs=$(cat /tmp/back)"
echo "hotplug_events=$(last_stat hotplug)"
echo "restarts=$(grep -c -e 'asked for a restart' -e restarting /tmp/gs.log)"
echo "exits=$(grep -c 'EXIT' /tmp/gs.log)"
echo "hotplug_requeued=$(last_stat hotplug_requeued)"
dmesg | grep -iE 'affine|vacated|sched_ext' | tail -5
kill $PINNED $HOGS 2>/dev/null
stop_sched
"#,
    );
    assert_eq!(out.status, 0, "{}", out.output);
    assert_eq!(field(&out, "after_offline"), Some("enabled"));
    assert_eq!(field(&out, "alive_offline"), Some("1"));
    assert_eq!(number(&out, "pinned_workers"), 3.0, "{}", out.output);
    assert_eq!(number(&out, "pinned_stuck"), 0.0, "{}", out.output);
    assert_eq!(number(&out, "cpus_offline"), 1.0);
    assert_eq!(field(&out, "work_offline"), Some("done"));
    assert_eq!(field(&out, "after_online"), Some("enabled"));
    assert_eq!(number(&out, "cpus_online"), 2.0);
    assert_eq!(field(&out, "cpu1_runs"), Some("back"));
    assert_eq!(number(&out, "hotplug_events"), 2.0);
    assert_eq!(number(&out, "restarts"), 0.0, "{}", out.output);
    assert_eq!(number(&out, "exits"), 0.0, "{}", out.output);
    assert_eq!(field(&out, "sched_exit"), Some("0"));
}

#[test]
#[ignore = "boots the sched_ext VM; run by tools/test.sh"]
fn stops_cleanly_right_after_a_cpu_comes_back() {
    let out = run(
        2,
        r#"
# Three times: hogs on both CPUs, CPU 1 out and back, the scheduler stopped at once. A kick or
# a timer queued on CPU 1 while it left or came back once wedged its interrupts: the exit then
# waited for good, and every task on that CPU with it.
for i in 1 2 3; do
    start_sched --stats 1
    taskset -c 1 "$STRESS_NG" --cpu 2 -t 60 -q &
    PINNED=$!
    "$STRESS_NG" --cpu 2 -t 60 -q &
    HOGS=$!
    sleep $((1 + i))
    echo 0 > /sys/devices/system/cpu/cpu1/online
    sleep $i
    echo 1 > /sys/devices/system/cpu/cpu1/online
    kill $PINNED $HOGS
    stop_sched
    wait $PINNED $HOGS 2>/dev/null
    # The kernel's scheduler is back, and CPU 1 runs tasks.
    timeout 20 taskset -c 1 sh -c 'echo back' > /tmp/back 2>&1
    echo "round_$i=$(state) $(cat /tmp/back)"
done
"#,
    );
    assert_eq!(out.status, 0, "{}", out.output);
    assert!(!out.output.contains("sched_stuck"), "{}", out.output);
    assert_eq!(
        out.output.matches("sched_exit=0").count(),
        3,
        "every stop exits 0:\n{}",
        out.output
    );
    for round in ["round_1", "round_2", "round_3"] {
        assert_eq!(field(&out, round), Some("disabled back"), "{}", out.output);
    }
}

#[test]
#[ignore = "boots the sched_ext VM; run by tools/test.sh"]
fn a_cpu_hotplug_while_loading_costs_no_restart() {
    let out = run(
        2,
        r#"
# The scheduler waits 5 s after reading the topology: the hotplug lands before it loads.
"$STRESS_NG" --cpu 4 -t 300 -q &
HOGS=$!
# Starts the scheduler and waits until it has read the topology.
start_loading() {
    "$SCHED" --stats 1 --debug-load-delay-ms 5000 > /tmp/gs.log 2>&1 &
    SCHED_PID=$!
    for _ in $(seq 1 400); do grep -q 'loading for CPUs' /tmp/gs.log && return 0; sleep 0.05; done
    echo "never began loading:"; cat /tmp/gs.log; exit 91
}
settle() {
    for _ in $(seq 1 480); do [ "$(state)" = enabled ] && break; sleep 0.25; done
    sleep 4
}

# A CPU that came back while loading: the tables lack it, yet nothing waits for it.
echo 0 > /sys/devices/system/cpu/cpu1/online
start_loading
echo 1 > /sys/devices/system/cpu/cpu1/online
echo "came_while=$(state)"
settle
echo "came_state=$(state)"
echo "came_restarts=$(grep -c restarting /tmp/gs.log)"
echo "came_cpus=$(last_stat cpus)"
stop_sched

# A CPU that left while loading: its tables name it, yet nothing is queued for it.
start_loading
echo 0 > /sys/devices/system/cpu/cpu1/online
echo "left_while=$(state)"
settle
echo "left_state=$(state)"
echo "left_restarts=$(grep -c -e restarting -e 'asked for a restart' /tmp/gs.log)"
echo "left_cpus=$(last_stat cpus)"
timeout 20 sh -c 'echo done' > /tmp/work 2>&1; echo "left_work=$(cat /tmp/work)"
stop_sched
echo 1 > /sys/devices/system/cpu/cpu1/online
kill $HOGS
"#,
    );
    assert_eq!(out.status, 0, "{}", out.output);
    // Both hotplugs happened between reading the topology and the kernel enabling it.
    assert_eq!(field(&out, "came_while"), Some("disabled"));
    assert_eq!(field(&out, "left_while"), Some("disabled"));
    assert_eq!(field(&out, "came_state"), Some("enabled"));
    assert_eq!(number(&out, "came_restarts"), 0.0, "{}", out.output);
    assert_eq!(number(&out, "came_cpus"), 2.0);
    assert_eq!(field(&out, "left_state"), Some("enabled"));
    assert_eq!(number(&out, "left_restarts"), 0.0, "{}", out.output);
    assert_eq!(number(&out, "left_cpus"), 1.0);
    assert_eq!(field(&out, "left_work"), Some("done"));
    assert_eq!(field(&out, "sched_exit"), Some("0"));
}
