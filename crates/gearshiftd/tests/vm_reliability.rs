//! In a sched_ext VM: CPU hotplug under load leaves the same scheduler attached and running
//! (no restart, nothing for gearshiftd to report); suspend and resume cycles under load leave
//! the same scheduler running and switchable; a scheduler that stops dispatching is ejected by
//! the kernel's watchdog, and gearshiftd reports the kernel's reason, retries with backoff, then
//! stays `failed` — unless a profile ran cleanly before, which it then falls back to.

mod vm_common;

use vm_common::{field, number};

const HOTPLUG: &str = r#"
start_daemon
wait_state running
PID=$(pgrep -P $GSD scx_gearshift)
dbus-monitor --address "$DBUS_SYSTEM_BUS_ADDRESS" "type='signal',member='SchedulerExited'" > /tmp/exits.log 2>&1 &
sleep 1
"$STRESS_NG" --cpu 8 -t 120 -q &
LOAD=$!
# Hogs pinned to CPU 3, which goes offline while they wait for it.
taskset -c 3 "$STRESS_NG" --cpu 2 -t 120 -q &
PINNED=$!
# The kernel's state every 0.1 s; gearshiftd's as often as a D-Bus call gets through the load.
( while :; do cat /sys/kernel/sched_ext/state; sleep 0.1; done ) > /tmp/kernel_states.log 2>&1 &
WATCH=$!
( while :; do prop State; sleep 0.2; done ) > /tmp/states.log 2>&1 &
WATCH_GSD=$!
sleep 3
for c in 3 1; do
    echo 0 > /sys/devices/system/cpu/cpu$c/online
    sleep 4
    echo 1 > /sys/devices/system/cpu/cpu$c/online
    sleep 4
done
kill $WATCH $WATCH_GSD
echo "pinned_alive=$(kill -0 $PINNED 2>/dev/null && echo yes || echo no)"
kill $LOAD $PINNED
sleep 1
echo "kernel_samples=$(wc -l < /tmp/kernel_states.log)"
echo "kernel_not_enabled=$(grep -cvx enabled /tmp/kernel_states.log)"
echo "samples=$(wc -l < /tmp/states.log)"
echo "not_running=$(grep -cvx running /tmp/states.log)"
echo "exits=$(grep -c member=SchedulerExited /tmp/exits.log)"
echo "restarts_reported=$(grep -c "Restarting at the kernel" /tmp/gsd.log)"
echo "same_pid=$([ "$(pgrep -P $GSD scx_gearshift)" = "$PID" ] && echo yes || echo no)"
echo "final_state=$(prop State)"
echo "failed_seen=$(grep -c 'scheduler failed' /tmp/gsd.log)"
echo "online_cpus=$(stat nr_online_cpus)"
echo "hotplug_events=$(stat nr_hotplug_events)"
grep -iE 'restart|hotplug|EXIT' /tmp/gsd.log | tail -8
"#;

#[test]
#[ignore = "boots a sched_ext VM (cargo xtask kernel); run with --ignored"]
fn cpu_hotplug_under_load_keeps_the_same_scheduler_running() {
    let out = vm_common::run(4, "autostart = true", &[], HOTPLUG);
    assert_eq!(field(&out, "final_state"), "running");
    assert_eq!(field(&out, "same_pid"), "yes");
    assert_eq!(number(&out, "failed_seen"), 0.0);
    // Sampled through two offline/online cycles (16 s; under the hogs a sample takes up to a
    // second): the kernel never stopped running it, and gearshiftd never reported anything
    // but running.
    assert!(number(&out, "kernel_samples") >= 8.0, "the watcher sampled");
    assert_eq!(number(&out, "kernel_not_enabled"), 0.0, "{}", out.output);
    assert!(
        number(&out, "samples") >= 3.0,
        "gearshiftd's state was sampled"
    );
    assert_eq!(number(&out, "not_running"), 0.0, "{}", out.output);
    assert_eq!(number(&out, "exits"), 0.0, "no SchedulerExited");
    assert_eq!(number(&out, "restarts_reported"), 0.0);
    assert_eq!(field(&out, "pinned_alive"), "yes");
    // One attach saw all four events (a restart would have started the count over).
    assert_eq!(number(&out, "hotplug_events"), 4.0);
    assert_eq!(number(&out, "online_cpus"), 4.0);
}

/// Suspend cycles in the suspend test: 4 each way (low-power, then interactive, after each
/// resume). Under the load a cycle takes 30-45 s with another VM beside it (tools/test-vm.sh);
/// 20 took 14.5 of the VM's 15 minutes without testing anything 8 do not.
const SUSPEND_CYCLES: u32 = 8;

// The kernel's suspend test at the freezer level: every task, the scheduler and gearshiftd
// included, is frozen and thawed, as in a real suspend (a real s2idle does not wake in this
// VM). logind's double announces each sleep and resume as logind does.
const SUSPEND: &str = r#"
start_daemon
wait_state running
PID=$(pgrep -P $GSD scx_gearshift)
start_logind_double
"$STRESS_NG" --cpu 4 -t 900 -q &
LOAD=$!
( while :; do hackbench -g 2 -l 200 > /dev/null 2>&1; done ) &
STORM=$!
echo freezer > /sys/power/pm_test
echo 1 > /sys/module/suspend/parameters/pm_test_delay
cycles=0; switched=0; same=0
for i in $(seq 1 @CYCLES@); do
    announce_sleep true
    echo freeze > /sys/power/state && cycles=$((cycles + 1))
    announce_sleep false
    p=$([ $((i % 2)) = 1 ] && echo low-power || echo interactive)
    $B call $DEST SetProfile s $p > /dev/null && [ "$(stat mode)" = "$p" ] && switched=$((switched + 1))
    [ "$(prop State)" = running ] && [ "$(pgrep -P $GSD scx_gearshift)" = "$PID" ] && same=$((same + 1))
done
kill $STORM $LOAD
echo "cycles=$cycles"
echo "switched_after_resume=$switched"
echo "same_scheduler_running=$same"
echo "resume_checks=$(grep -c 'resumed from sleep: the scheduler runs' /tmp/gsd.log)"
echo "kernel_disables=$(dmesg | grep -c 'sched_ext.*disabled')"
echo "final_state=$(prop State)"
dmesg | grep -iE 'PM: suspend|sched_ext' | tail -4
"#;

#[test]
#[ignore = "boots a sched_ext VM (cargo xtask kernel); run with --ignored"]
fn suspend_cycles_under_load_keep_the_same_scheduler_running_and_switchable() {
    let script = SUSPEND.replace("@CYCLES@", &SUSPEND_CYCLES.to_string());
    let out = vm_common::run(2, "autostart = true", &[], &script);
    let all = f64::from(SUSPEND_CYCLES);
    assert_eq!(number(&out, "cycles"), all, "every freeze returned");
    assert_eq!(
        number(&out, "same_scheduler_running"),
        all,
        "after each resume, the same scheduler process runs"
    );
    assert_eq!(
        number(&out, "switched_after_resume"),
        all,
        "a profile switch right after resume takes effect"
    );
    assert_eq!(
        number(&out, "resume_checks"),
        all,
        "gearshiftd checked the scheduler on each resume logind announced"
    );
    assert_eq!(number(&out, "kernel_disables"), 0.0, "never ejected");
    assert_eq!(field(&out, "final_state"), "running");
}

/// gearshiftd's config for the stall tests: autostart, and two failures within the restart
/// window end a profile; `restart` adds [restart] keys.
fn two_strikes(restart: &str) -> String {
    format!("autostart = true\n[restart]\nmax_failures = 2\nwindow_s = 600\ninitial_backoff_ms = 500\n{restart}")
}

/// The scheduler's arguments for the stall tests: a test-build-only option that stalls
/// dispatch, and a watchdog that ejects after 3 s of it.
fn stalling<'a>(option: &'a str, value: &'a str) -> [&'a str; 4] {
    [option, value, "--watchdog-timeout-ms", "3000"]
}

const STALL: &str = r#"
start_daemon
dbus-monitor --address "$DBUS_SYSTEM_BUS_ADDRESS" "type='signal',member='SchedulerExited'" > /tmp/exits.log 2>&1 &
"$STRESS_NG" --cpu 4 -t 400 -q &
LOAD=$!
for _ in $(seq 1 1500); do [ "$(prop State)" = failed ] && break; sleep 0.2; done
kill $LOAD
sleep 1
echo "final_state=$(prop State)"
echo "final_reason=$(prop StateReason)"
echo "exits=$(grep -c member=SchedulerExited /tmp/exits.log)"
grep -A2 member=SchedulerExited /tmp/exits.log | grep -E 'string|boolean' | paste - - | sed 's/^/exit: /'
echo "restart_flags=$(grep -A2 member=SchedulerExited /tmp/exits.log | grep boolean | awk '{print $2}' | tr '\n' ' ')"
echo "kernel=$(dmesg | grep -i 'sched_ext' | grep -ci stall)"
echo "sched_ext_state=$(cat /sys/kernel/sched_ext/state)"
"#;

#[test]
#[ignore = "boots a sched_ext VM (cargo xtask kernel); run with --ignored"]
fn a_stalled_scheduler_is_ejected_reported_and_given_up_on() {
    // Test builds only: the scheduler stops dispatching 3 s after attaching; the watchdog
    // gives up after 3 s more. Two failures in the window leave it failed: it never ran
    // cleanly for known_good_after_s (60 s), so there is nothing to fall back to.
    let args = stalling("--debug-stall-after-ms", "3000");
    let out = vm_common::run(2, &two_strikes(""), &args, STALL);
    assert_eq!(field(&out, "final_state"), "failed");
    let reason = field(&out, "final_reason");
    assert!(
        reason.contains("2 failures") && reason.contains("stall"),
        "{reason}"
    );
    assert_eq!(field(&out, "restart_flags"), "true false");
    assert!(number(&out, "kernel") >= 1.0, "the kernel logged the stall");
    assert_eq!(field(&out, "sched_ext_state"), "disabled");
}

const FALLBACK: &str = r#"
start_daemon
wait_state running
dbus-monitor --address "$DBUS_SYSTEM_BUS_ADDRESS" "type='signal',member='FellBack'" > /tmp/fellback.log 2>&1 &
"$STRESS_NG" --cpu 4 -t 400 -q &
LOAD=$!
for _ in $(seq 1 300); do grep -q 'last known good' /tmp/gsd.log && break; sleep 0.2; done
echo "known_good=$(grep -c 'interactive ran cleanly.*last known good' /tmp/gsd.log)"
ENABLES_BEFORE=$(dmesg | grep -c 'BPF scheduler "gearshift[^"]*" enabled')
$B call $DEST SetProfile s fifo > /dev/null && echo "switched_to_fifo=yes"
for _ in $(seq 1 1500); do
    [ "$(prop ProfileReason)" = fallback ] && [ "$(prop State)" = running ] && break
    [ "$(prop State)" = failed ] && break
    sleep 0.2
done
sleep 5
kill $LOAD
sleep 1
echo "final_state=$(prop State)"
echo "final_profile=$(prop Profile)"
echo "profile_reason=$(prop ProfileReason)"
echo "final_reason=$(prop StateReason)"
echo "fell_back=$(grep -A5 member=FellBack /tmp/fellback.log | grep -E '^ *(string|uint32)' | sed 's/^ *//' | tr '\n' ' ')"
echo "stalls=$(dmesg | grep -i sched_ext | grep -ci stall)"
echo "enables_since_switch=$(( $(dmesg | grep -c 'BPF scheduler "gearshift[^"]*" enabled') - ENABLES_BEFORE ))"
echo "sched_ext_state=$(cat /sys/kernel/sched_ext/state)"
echo "kernel_ops=$(cat /sys/kernel/sched_ext/root/ops 2>/dev/null)"
echo "mode=$(stat mode)"
dmesg | grep -i sched_ext | tail -6
grep -iE 'fall|known good|failed|EXIT' /tmp/gsd.log | tail -8
"#;

#[test]
#[ignore = "boots a sched_ext VM (cargo xtask kernel); run with --ignored"]
fn a_failing_profile_falls_back_to_the_last_known_good_one() {
    // Test builds only: fifo stalls dispatch whenever it is in effect; the watchdog ejects
    // after 3 s. interactive runs 5 s cleanly first, so it is the known good profile; two
    // failures of fifo in the window end fifo, and the scheduler comes back in interactive.
    let args = stalling("--debug-fail-in-mode", "fifo");
    let out = vm_common::run(2, &two_strikes("known_good_after_s = 5\n"), &args, FALLBACK);
    assert_eq!(
        number(&out, "known_good"),
        1.0,
        "interactive became known good"
    );
    assert_eq!(field(&out, "switched_to_fifo"), "yes");
    assert_eq!(field(&out, "final_state"), "running");
    assert_eq!(field(&out, "final_profile"), "interactive");
    assert_eq!(field(&out, "profile_reason"), "fallback");
    // The last failure's words are the kernel's stall report, or, on a starved host, a fifo
    // restart that the kernel did not enable in time: either way fifo's.
    let reason = field(&out, "final_reason");
    assert!(
        reason.contains("Fell back to profile interactive")
            && reason.contains("profile fifo failed 2 times"),
        "{reason}"
    );
    let signal = field(&out, "fell_back");
    assert!(
        signal.starts_with(r#"string "fifo" string "interactive" uint32 2 string"#),
        "FellBack(failed, fallback, failures, reason): {signal}"
    );
    assert!(number(&out, "stalls") >= 1.0, "the kernel ejected fifo");
    // After the switch to fifo the kernel ran gearshift again (interactive, at least).
    assert!(number(&out, "enables_since_switch") >= 1.0);
    assert_eq!(field(&out, "sched_ext_state"), "enabled");
    assert!(field(&out, "kernel_ops").starts_with("gearshift"));
    assert_eq!(field(&out, "mode"), "interactive");
}
