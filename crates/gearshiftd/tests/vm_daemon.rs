//! In a sched_ext VM: the real gearshiftd runs the real scx_gearshift on a private system
//! bus; profiles switch under load, a killed scheduler is reported and restarted. Prints the
//! SetProfile round trip, the daemon's RSS and its wakeups with and without a subscriber.

mod vm_common;

use vm_common::{field, number};

const SCRIPT: &str = r#"
# Context switches per second of the daemon's threads that live through the whole window
# (the blocking-pool threads come and go).
snap() { for t in /proc/$GSD/task/*; do echo "${t##*/} $(awk '/ctxt_switches/{s+=$2} END{print s}' $t/status)"; done; }
wakeups() {
    snap > /tmp/w1; sleep "$1"; snap > /tmp/w2
    awk -v d="$1" 'NR==FNR{a[$1]=$2; next} ($1 in a){s+=$2-a[$1]} END{printf "%.2f\n", s/d}' /tmp/w1 /tmp/w2
}

start_daemon
wait_state running
echo "sched_capeff=$(awk '/CapEff/{print $2}' /proc/$(pgrep -P $GSD scx_gearshift)/status)"
echo "kernel_state=$(cat /sys/kernel/sched_ext/state)"
echo "kernel_ops=$(cat /sys/kernel/sched_ext/root/ops)"
echo "rss_start_kib=$(awk '/VmRSS/{print $2}' /proc/$GSD/status)"

t0=$(now_ms); prop Version > /dev/null; t1=$(now_ms)
echo "idle_get_property_ms=$((t1 - t0))"
for p in low-power interactive; do
    t0=$(now_ms); $B call $DEST SetProfile s $p; t1=$(now_ms)
    echo "idle_roundtrip_ms_$p=$((t1 - t0))"
done
echo "wakeups_idle=$(wakeups 10)"
"$GEARSHIFTCTL" stats --watch --interval-ms 1000 > /tmp/watch.log 2>&1 &
WATCH=$!
sleep 2
echo "wakeups_subscribed=$(wakeups 10)"
kill -INT $WATCH
echo "watch_lines=$(wc -l < /tmp/watch.log)"

"$STRESS_NG" --cpu 4 --timeout 300 > /dev/null 2>&1 &
LOAD=$!
sleep 2
for p in low-power fifo throughput interactive; do
    t0=$(now_ms)
    $B call $DEST SetProfile s $p || echo "setprofile_failed_$p"
    t1=$(now_ms)
    echo "roundtrip_ms_$p=$((t1 - t0))"
    echo "stats_mode_$p=$(stat mode) preemption=$(stat preemption)"
done
$B set-property $DEST Preemption b false
echo "after_preempt_off=$(stat preemption) profile=$(prop Profile)"
$B set-property $DEST Preemption b true

dbus-monitor --address "$DBUS_SYSTEM_BUS_ADDRESS" "type='signal',member='SchedulerExited'" > /tmp/monitor.log 2>&1 &
MON=$!
sleep 1
OLD=$(pgrep -P $GSD scx_gearshift)
echo "old_pid=$OLD"
kill -9 "$OLD"
wait_restart
NEW=$(pgrep -P $GSD scx_gearshift)
echo "new_pid=$NEW"
echo "after_restart_kernel_state=$(cat /sys/kernel/sched_ext/state)"
echo "after_restart_mode=$(stat mode)"
sleep 1
kill $MON
grep -A2 SchedulerExited /tmp/monitor.log | tr '\n' ' ' | sed 's/^/exited_signal=/'; echo
kill $LOAD
echo "rss_end_kib=$(awk '/VmRSS/{print $2}' /proc/$GSD/status)"

$B call $DEST Stop
echo "after_stop=$(prop State) kernel=$(cat /sys/kernel/sched_ext/state)"
kill -TERM $GSD
for _ in $(seq 1 50); do kill -0 $GSD 2>/dev/null || break; sleep 0.2; done
echo "daemon_gone=$(kill -0 $GSD 2>/dev/null && echo no || echo yes)"
echo "--- gearshiftd log ---"; tail -30 /tmp/gsd.log
"#;

#[test]
#[ignore = "boots a sched_ext VM (cargo xtask kernel); run with --ignored"]
fn real_daemon_runs_real_scheduler() {
    let out = vm_common::run(2, "autostart = true", &[], SCRIPT);
    assert_eq!(field(&out, "kernel_state"), "enabled");
    // CAP_IPC_LOCK, CAP_SYS_ADMIN, CAP_SYS_NICE, CAP_SYS_RESOURCE, CAP_PERFMON, CAP_BPF and
    // nothing else.
    assert_eq!(field(&out, "sched_capeff"), "000000c001a04000");
    assert!(field(&out, "kernel_ops").starts_with("gearshift"));
    for (profile, mode, preemption) in [
        ("low-power", "low-power", "false"),
        ("fifo", "fifo", "true"),
        ("throughput", "interactive", "false"),
        ("interactive", "interactive", "true"),
    ] {
        assert_eq!(
            field(&out, &format!("stats_mode_{profile}")),
            format!("{mode} preemption={preemption}"),
            "the scheduler's own stats show the profile"
        );
    }
    assert_eq!(field(&out, "after_preempt_off"), "false profile=throughput");
    assert_ne!(field(&out, "old_pid"), field(&out, "new_pid"));
    assert_eq!(field(&out, "after_restart_kernel_state"), "enabled");
    assert_eq!(field(&out, "after_restart_mode"), "interactive");
    let exited = field(&out, "exited_signal");
    assert!(
        exited.contains("SIGKILL") && exited.contains("boolean true"),
        "SchedulerExited(reason, will_restart=true): {exited}"
    );
    assert_eq!(field(&out, "after_stop"), "stopped kernel=disabled");
    assert_eq!(field(&out, "daemon_gone"), "yes");
    assert!(
        number(&out, "watch_lines") >= 3.0,
        "stats --watch printed updates"
    );
    for p in ["low-power", "fifo", "throughput", "interactive"] {
        eprintln!(
            "SetProfile {p}: {} ms (emulated VM, 2x CPU load)",
            number(&out, &format!("roundtrip_ms_{p}"))
        );
    }
    eprintln!(
        "SetProfile without load: {} ms, {} ms (a property read: {} ms)",
        number(&out, "idle_roundtrip_ms_low-power"),
        number(&out, "idle_roundtrip_ms_interactive"),
        number(&out, "idle_get_property_ms")
    );
    eprintln!(
        "gearshiftd RSS: {} KiB at start, {} KiB at end; wakeups/s: {} idle, {} with a 1 s subscriber",
        number(&out, "rss_start_kib"),
        number(&out, "rss_end_kib"),
        number(&out, "wakeups_idle"),
        number(&out, "wakeups_subscribed")
    );
}
