# Soak, run in the guest: gearshiftd runs scx_gearshift on a private system bus for $SOAK_S
# seconds under a rotating load, with profile/mode/preemption switches over D-Bus and CPU
# hotplug. Prints progress and, at the end, key=value lines (see xtask/src/soak.rs).
set -u
export DBUS_SYSTEM_BUS_ADDRESS=unix:path=/tmp/gs-bus.sock
DEST="io.github.gearshift.Scheduler1 /io/github/gearshift/Scheduler1 io.github.gearshift.Scheduler1"
B="busctl --timeout=60"
NCPU=$(nproc --all)
prop() { $B get-property $DEST "$1" 2>/dev/null | cut -d' ' -f2- | tr -d '"'; }
sched_pid() { pgrep -P "$GSD" -f scx_gearshift | head -1; }
rss() { awk '/VmRSS/{print $2}' "/proc/$1/status" 2>/dev/null || echo 0; }
stat() { "$GEARSHIFTCTL" --json stats 2>/dev/null | /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)[sys.argv[1]])' "$1" 2>/dev/null; }

BUS_PID=$(dbus-daemon --config-file="$RUN/bus.conf" --fork --nopidfile --print-pid) || exit 90
echo -900 > "/proc/$BUS_PID/oom_score_adj"
"$GEARSHIFTD" --config "$RUN/config.toml" --state-dir /tmp/gs-state --runtime-dir /tmp/gs-run > /tmp/gsd.log 2>&1 &
GSD=$!
# A scheduler is something the machine cannot do without; the soak's memory hog is not.
echo -900 > "/proc/$GSD/oom_score_adj"
for _ in $(seq 1 600); do [ "$(prop State)" = running ] && break; sleep 0.2; done
[ "$(prop State)" = running ] || { echo "never running: $(prop StateReason)"; cat /tmp/gsd.log; exit 91; }
SCHED=$(sched_pid)
echo "rss_daemon_start_kib=$(rss $GSD)"
echo "rss_sched_start_kib=$(rss "$SCHED")"
dbus-monitor --address "$DBUS_SYSTEM_BUS_ADDRESS" "type='signal',member='SchedulerExited'" > /tmp/exits.log 2>&1 &
MON=$!

# Sampler: state, kernel state, scheduler pid and page faults every 5 s.
( while :; do
    echo "$(date +%s) $(prop State) $(cat /sys/kernel/sched_ext/state) pid=$(sched_pid) faults=$(stat page_faults)"
    sleep 5
  done > /tmp/samples.log 2>&1 ) &
SAMPLER=$!

# Interactive probe: a 10 s timer-wakeup measurement each minute (cyclictest, µs).
( while :; do
    cyclictest -q -t1 -p0 -i 10000 -D 10 2>/dev/null \
        | awk '/Avg:/{a = $0; sub(/.*Avg: */, "", a); sub(/ .*/, "", a); m = $0; sub(/.*Max: */, "", m); sub(/ .*/, "", m); print "probe", a, m}'
    sleep 50
  done > /tmp/probe.log 2>&1 ) &
PROBE=$!

# Switches through D-Bus every 3 s.
( PROFILES="interactive throughput low-power fifo"
  i=0
  while :; do
    p=$(echo $PROFILES | cut -d' ' -f$((i % 4 + 1)))
    err=$($B call $DEST SetProfile s "$p" 2>&1 >/dev/null) || echo "switch_failed $p: $err"
    sleep 3
    on=$([ $((i % 2)) = 0 ] && echo false || echo true)
    err=$($B set-property $DEST Preemption b $on 2>&1 >/dev/null) || echo "switch_failed preemption: $err"
    sleep 3
    i=$((i + 1))
  done > /tmp/switch.log 2>&1 ) &
SWITCHER=$!

# CPU hotplug every 40 s: one CPU (not 0) offline for 5 s.
( while :; do
    sleep 35
    c=$(shuf -i 1-$((NCPU - 1)) -n 1)
    echo 0 > /sys/devices/system/cpu/cpu$c/online && echo "offline $c"
    sleep 5
    echo 1 > /sys/devices/system/cpu/cpu$c/online && echo "online $c"
  done > /tmp/hotplug.log 2>&1 ) &
HOTPLUG=$!

# The rotating load: 20 s phases.
END=$(( $(date +%s) + SOAK_S ))
phase=0
while [ "$(date +%s)" -lt "$END" ]; do
    case $((phase % 5)) in
        0) name="cpu hogs"; "$STRESS_NG" --cpu $((2 * NCPU)) -t 20 -q ;;
        1) name="fork/exec"; "$STRESS_NG" --fork 4 --exec 4 -t 20 -q ;;
        2) name="affinity churn"
           ( for c in $(shuf -r -i 0-$((NCPU - 1)) -n 200); do taskset -c "$c" true 2>/dev/null; done ) &
           "$STRESS_NG" --race-sched 4 --cpu "$NCPU" -t 20 -q ;;
        3) name="memory pressure"; "$STRESS_NG" --vm 2 --vm-bytes 90% --vm-keep --cpu 1 -t 20 -q ;;
        4) name="io waits"; "$STRESS_NG" --io 2 --hdd 1 --hdd-bytes 32M --temp-path /tmp -t 20 -q ;;
    esac
    echo "phase $phase ($name) done at $(( SOAK_S - (END - $(date +%s)) )) s: $(prop State)"
    phase=$((phase + 1))
done

kill $SWITCHER $HOTPLUG $PROBE 2>/dev/null
for c in $(seq 1 $((NCPU - 1))); do echo 1 > /sys/devices/system/cpu/cpu$c/online 2>/dev/null; done
# Let a last hotplug restart settle before the final readings.
for _ in $(seq 1 150); do [ "$(prop State)" = running ] && break; sleep 0.2; done
sleep 6
kill $SAMPLER $MON 2>/dev/null
SCHED_END=$(sched_pid)

echo "--- samples (time state kernel pid faults) ---"; awk 'NR % 6 == 1' /tmp/samples.log
echo "--- probe per minute (avg max, µs) ---"; cat /tmp/probe.log
echo "--- hotplug ---"; cat /tmp/hotplug.log | tr '\n' ' '; echo
echo "--- SchedulerExited ---"; grep -A2 SchedulerExited /tmp/exits.log | grep -E 'string|boolean' | paste - - | sed 's/^ *//'
echo "--- failed switches ---"; grep switch_failed /tmp/switch.log
echo "--- kernel ---"; dmesg | grep -i 'sched_ext' | tail -20
echo "--- gearshiftd (warnings) ---"; grep -E 'WARN|ERROR' /tmp/gsd.log | tail -20
echo "final_state=$(prop State)"
echo "final_reason=$(prop StateReason)"
echo "phases=$phase"
echo "switches_failed=$(grep -c switch_failed /tmp/switch.log)"
echo "hotplug_cycles=$(grep -c '^offline' /tmp/hotplug.log)"
echo "exited_signals=$(grep -c 'member=SchedulerExited' /tmp/exits.log)"
echo "kernel_restarts=$(grep -c 'Restarting at the kernel' /tmp/gsd.log)"
echo "sched_pids=$(awk '{print $4}' /tmp/samples.log | sort -u | grep -c 'pid=[0-9]')"
echo "sched_ejections=$(dmesg | grep -ciE 'sched_ext:.*(runtime error|stall|error)')"
echo "page_faults_max=$(awk '{sub("faults=","",$5); if ($5+0 > m) m = $5+0} END{print m+0}' /tmp/samples.log)"
echo "rss_daemon_end_kib=$(rss $GSD)"
echo "rss_sched_end_kib=$(rss "$SCHED_END")"
echo "probe_max_us=$(awk '{if ($3+0 > m) m = $3+0} END{print m+0}' /tmp/probe.log)"
echo "probe_avg_us=$(awk '{s += $2; n++} END{if (n) printf "%.0f", s/n; else print 0}' /tmp/probe.log)"
$B call $DEST Stop >/dev/null 2>&1
kill -TERM $GSD
