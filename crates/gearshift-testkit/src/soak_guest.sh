# Soak, run in the guest: gearshiftd runs scx_gearshift on a private system bus for $SOAK_S
# seconds under a rotating load, with profile/mode/preemption switches over D-Bus, CPU hotplug
# and a suspend cycle a minute. Prints progress and, at the end, key=value lines (see soak.rs).
# After the daemon prelude (daemon_guest.sh).
NCPU=$(nproc --all)
sched_pid() { pgrep -P "$GSD" -f scx_gearshift | head -1; }
rss() { awk '/VmRSS/{print $2}' "/proc/$1/status" 2>/dev/null || echo 0; }
# sample_max KEY: the largest KEY=value in the samples.
sample_max() {
    awk -v k="$1=" '{ for (i = 1; i <= NF; i++) if (index($i, k) == 1) { v = substr($i, length(k) + 1) + 0; if (v > m) m = v } } END { print m + 0 }' /tmp/samples.log
}

# A scheduler is something the machine cannot do without; the soak's memory hog is not.
start_daemon -900
wait_state running
SCHED=$(sched_pid)
# Where the scheduling thread (the scheduler's main thread: tid = pid) page-faults, if it does.
TRACE=/sys/kernel/tracing
[ -e $TRACE/events ] || mount -t tracefs tracefs $TRACE 2>/dev/null
echo "common_pid == $SCHED" > $TRACE/events/exceptions/page_fault_user/filter 2>/dev/null \
    && echo 1 > $TRACE/events/exceptions/page_fault_user/enable
echo "rss_daemon_start_kib=$(rss $GSD)"
echo "rss_sched_start_kib=$(rss "$SCHED")"
dbus-monitor --address "$DBUS_SYSTEM_BUS_ADDRESS" "type='signal',member='SchedulerExited'" > /tmp/exits.log 2>&1 &
MON=$!

# What happened when (epoch seconds): load phases, hotplug, suspend; the backstop's kicks are
# reported against it at the end.
ev() { echo "$(date +%s) $*" >> /tmp/events.log; }
: > /tmp/events.log

# Sampler every 5 s: state, kernel state, scheduler pid, page faults, mode, rescue kicks.
( while :; do
    read -r faults mode rescued <<< "$(stat page_faults mode nr_rescue_kicks)"
    echo "$(date +%s) $(prop State) $(cat /sys/kernel/sched_ext/state) pid=$(sched_pid) faults=${faults:-} mode=${mode:-} rescued=${rescued:-}"
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
    echo 0 > /sys/devices/system/cpu/cpu$c/online && echo "offline $c" && ev "cpu $c offline"
    sleep 5
    echo 1 > /sys/devices/system/cpu/cpu$c/online && echo "online $c" && ev "cpu $c online"
  done > /tmp/hotplug.log 2>&1 ) &
HOTPLUG=$!

# The kernel's suspend test once a minute: every task frozen, the machine held 1 s, every task
# thawed, as a laptop's suspend does to them; logind's double announces it as logind would.
start_logind_double
echo freezer > /sys/power/pm_test
echo 1 > /sys/module/suspend/parameters/pm_test_delay
( while :; do
    sleep 60
    announce_sleep true
    ev "suspend (freezer test)"
    if echo freeze > /sys/power/state; then froze=yes; else froze=no; echo "suspend failed"; fi
    # Each resume announced is one gearshiftd must check.
    if announce_sleep false; then echo "announced"; [ $froze = yes ] && echo "suspended"; fi
  done > /tmp/suspend.log 2>&1 ) &
SUSPEND=$!

# The rotating load: 20 s phases.
END=$(( $(date +%s) + SOAK_S ))
phase=0
while [ "$(date +%s)" -lt "$END" ]; do
    ev "phase $phase starts"
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
    ev "phase $phase ($name) done"
    phase=$((phase + 1))
done

kill $SWITCHER $HOTPLUG $PROBE $SUSPEND 2>/dev/null
for c in $(seq 1 $((NCPU - 1))); do echo 1 > /sys/devices/system/cpu/cpu$c/online 2>/dev/null; done
# Let the last hotplug settle before the final readings.
for _ in $(seq 1 150); do [ "$(prop State)" = running ] && break; sleep 0.2; done
sleep 6
# A resume check waits for the scheduler's (re)start in progress: give the last one time.
for _ in $(seq 1 150); do
    [ "$(grep -c 'resumed from sleep' /tmp/gsd.log)" -ge "$(grep -cx announced /tmp/suspend.log)" ] && break
    sleep 0.2
done
kill $SAMPLER $MON $LOGIND 2>/dev/null
SCHED_END=$(sched_pid)

echo "--- samples (time state kernel pid faults mode rescue-kicks; every 30 s, and with faults) ---"
awk 'NR % 6 == 1 || / faults=[1-9]/' /tmp/samples.log
echo "--- probe per minute (avg max, µs) ---"; cat /tmp/probe.log
echo "--- backstop kicks: each sample whose count rose, and what happened in the 10 s before ---"
awk 'FILENAME == ARGV[1] { t[++n] = $1; e[n] = $0; next }
     { r = $NF; sub(/^rescued=/, "", r); r += 0
       if (r > prev) {
           print "+" (r - prev) ": " $0
           for (i = 1; i <= n; i++) if (t[i] >= $1 - 10 && t[i] <= $1) print "    " e[i]
       }
       prev = r }' /tmp/events.log /tmp/samples.log
echo "--- hotplug ---"; cat /tmp/hotplug.log | tr '\n' ' '; echo
echo "--- SchedulerExited ---"; grep -A2 SchedulerExited /tmp/exits.log | grep -E 'string|boolean' | paste - - | sed 's/^ *//'
echo "--- failed switches ---"; grep switch_failed /tmp/switch.log
echo "--- suspend cycles, and gearshiftd on them ---"; tr '\n' ' ' < /tmp/suspend.log; echo
grep -E 'sleep|resume' /tmp/gsd.log | tail -10 | cut -c1-160
echo "--- kernel ---"; dmesg | grep -i 'sched_ext' | tail -20
echo "--- gearshiftd (warnings) ---"; grep -E 'WARN|ERROR' /tmp/gsd.log | tail -20
echo "--- the scheduler's attaches and page-fault warnings ---"
grep -E 'attached|page-faulted' /tmp/gsd.log | tail -40 | cut -c1-160
echo "--- the scheduling thread's page faults (ftrace; re-attaching may fault, a session may not) ---"
grep -F page_fault_user $TRACE/trace 2>/dev/null | tail -30
echo "final_state=$(prop State)"
echo "final_reason=$(prop StateReason)"
echo "phases=$phase"
echo "switches_failed=$(grep -c switch_failed /tmp/switch.log)"
echo "hotplug_cycles=$(grep -c '^offline' /tmp/hotplug.log)"
echo "suspend_cycles=$(grep -cx suspended /tmp/suspend.log)"
echo "resumes_announced=$(grep -cx announced /tmp/suspend.log)"
echo "resume_checks=$(grep -c 'resumed from sleep' /tmp/gsd.log)"
echo "exited_signals=$(grep -c 'member=SchedulerExited' /tmp/exits.log)"
echo "kernel_restarts=$(grep -c 'Restarting at the kernel' /tmp/gsd.log)"
echo "sched_hotplug_events=$(stat nr_hotplug_events)"
echo "sched_pids=$(grep -o ' pid=[0-9][0-9]*' /tmp/samples.log | sort -u | wc -l)"
echo "sched_ejections=$(dmesg | grep -ciE 'sched_ext:.*(runtime error|stall|error)')"
echo "page_faults_max=$(sample_max faults)"
echo "rescue_kicks_max=$(sample_max rescued)"
echo "rss_daemon_end_kib=$(rss $GSD)"
echo "rss_sched_end_kib=$(rss "$SCHED_END")"
echo "probe_max_us=$(awk '{if ($3+0 > m) m = $3+0} END{print m+0}' /tmp/probe.log)"
echo "probe_avg_us=$(awk '{s += $2; n++} END{if (n) printf "%.0f", s/n; else print 0}' /tmp/probe.log)"
$B call $DEST Stop >/dev/null 2>&1
kill -TERM $GSD
