# Guest side of `cargo xtask bench`: the same workloads under each scheduler, one VM run, after
# desktop_guest.sh's functions. Prints `result <scheduler> <metric> <value>` lines (one per
# repetition; the host takes medians) and `samples` lines for the plots.
# @SCHED@, @STRESS_NG@, @SCHEDULERS@, @NCPU@, @REPS@, @PERIODIC_SECS@, @LOADS@, @DESKTOP_ONLY@,
# @TRACE@ and @SIZING@ are filled in by the host.
SCHED='@SCHED@'
STRESS_NG='@STRESS_NG@'
N=@NCPU@
REPS=@REPS@
PERIODIC_SECS=@PERIODIC_SECS@
# The periodic tasks' loads (desktop_suite: all when empty), whether to run only hackbench and
# the periodic tasks, and whether to trace where their wakeup latency goes.
DESKTOP_LOADS='@LOADS@'
[ -n "$DESKTOP_LOADS" ] || unset DESKTOP_LOADS
DESKTOP_ONLY=@DESKTOP_ONLY@
LATENCY_TRACE=@TRACE@

GS_SOCK='--control-socket /tmp/gs.sock'
attach() {
    rm -f /tmp/gs.sock
    # The scheduler's process: detach() stops it, desktop_suite reports its own CPU time (none
    # for EEVDF).
    SCHED_PID=""
    case "$1" in
        eevdf) return 0 ;;
        eevdf-nohrtick) hrtick_set NO_HRTICK; return ;;
        # The control socket serves desktop_suite's counters (sched_counters).
        # gearshift-again: the same build once more, the run's A/A control.
        gearshift | gearshift-again) "$SCHED" $GS_SOCK > /tmp/gs.log 2>&1 & ;;
        gearshift-fifo) "$SCHED" $GS_SOCK --mode fifo > /tmp/gs.log 2>&1 & ;;
        gearshift-lowpower) "$SCHED" $GS_SOCK --mode low-power > /tmp/gs.log 2>&1 & ;;
        gearshift-nopreempt) "$SCHED" $GS_SOCK --preemption false > /tmp/gs.log 2>&1 & ;;
        # Another build of gearshift (an A/B with --compare) serves them too.
        */scx_gearshift*) "$1" $GS_SOCK > /tmp/other.log 2>&1 & ;;
        *) "$1" > /tmp/other.log 2>&1 & ;;
    esac
    SCHED_PID=$!
    for _ in $(seq 1 240); do [ "$(state)" = enabled ] && return 0; sleep 0.25; done
    echo "error: $1 did not attach" >&2; return 1
}
detach() {
    [ "$1" = eevdf ] && return 0
    [ "$1" = eevdf-nohrtick ] && { hrtick_set "$HRTICK_BEFORE"; return 0; }
    kill -INT $SCHED_PID; wait $SCHED_PID
    for _ in $(seq 1 40); do [ "$(state)" = disabled ] && return 0; sleep 0.25; done
}
# EEVDF's high-resolution slice-end timer on (HRTICK) or off (NO_HRTICK), the setting before
# kept in HRTICK_BEFORE; an error when the kernel has no such feature to set.
hrtick_set() {
    local f=/sys/kernel/debug/sched/features
    [ -e $f ] || mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
    HRTICK_BEFORE=$(grep -ow -e HRTICK -e NO_HRTICK $f 2>/dev/null) ||
        { echo "error: no HRTICK scheduler feature" >&2; return 1; }
    echo "$1" > $f
}
hogs_start() { "$STRESS_NG" --cpu "$1" --cpu-method loop -t 600 -q & HOGS=$!; sleep 2; }
hogs_stop() { kill $HOGS; wait $HOGS 2>/dev/null; }
median() { sort -n | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
pct() { sort -n | awk -v p="$1" '{a[NR]=$1} END {i=int(NR*p/100); if (i<1) i=1; print a[i]}'; }
busy_pct() {
    a=$(awk '/^cpu /{t=0; for(i=2;i<=NF;i++) t+=$i; print $5+$6, t}' /proc/stat)
    sleep "$1"
    b=$(awk '/^cpu /{t=0; for(i=2;i<=NF;i++) t+=$i; print $5+$6, t}' /proc/stat)
    echo "$a $b" | awk '{printf "%.2f\n", 100 * (1 - ($3-$1)/($4-$2))}'
}
interrupts() { awk 'NR > 1 {for (i = 2; i <= NF && $i ~ /^[0-9]+$/; i++) n += $i} END {print n}' /proc/interrupts; }

# Light load (the periodic tasks alone, as a video or a game's menu): how many CPUs are in use
# and how often CPUs are woken (interrupts per second across all CPUs: timer ticks, IPIs,
# kicks; and by kind, with the CPUs' entries into idle, after machine_rates). CPUs in use as
# cpu_use_between counts them.
light_load() {
    local s=$1 secs=8 i0 i1
    (cd /tmp && periodic_json 60 > /tmp/light.json && rt-app /tmp/light.json > /dev/null 2>&1) &
    local rt=$!
    sleep 2
    i0=$(interrupts); machine_counts > /tmp/machine.light; cpu_use > /tmp/light.use0
    sleep $secs
    cpu_use > /tmp/light.use1; i1=$(interrupts); machine_rates "$s" light /tmp/machine.light
    kill $rt 2>/dev/null; pkill -x rt-app 2>/dev/null; wait $rt 2>/dev/null
    cpu_use_between /tmp/light.use0 /tmp/light.use1 |
        awk -v s="$s" '{ n += $4 } END { printf "result %s light_cpus_in_use %d\n", s, n }'
    echo "result $s light_wakeups_per_s $(( (i1 - i0) / secs ))"
}

# The periodic tasks' work: as an earlier run on this machine sized it (the host keeps it), so
# that runs compare, or sized now; the line printed is what the host keeps.
SIZING='@SIZING@'
if [ -n "$SIZING" ]; then
    RTAPP_NS_PER_LOOP=${SIZING%% *}
    PERIODIC_WORK=${SIZING#* }
    for spec in $PERIODIC_TASKS; do
        case " $PERIODIC_WORK " in
            *" ${spec%%:*}:"*) ;;
            *) echo "error: the kept sizing has no work for ${spec%%:*}: run with --resize" >&2; exit 1 ;;
        esac
    done
    echo "rt-app: work per period as kept from an earlier run: $PERIODIC_WORK (µs at ${RTAPP_NS_PER_LOOP} ns per loop)" >&2
else
    rtapp_calibrate || exit 1
    periodic_calibrate || exit 1
fi
echo "sizing $RTAPP_NS_PER_LOOP $PERIODIC_WORK"
for rep in $(seq 1 "$REPS"); do
for s in $(rotation "$rep" @SCHEDULERS@); do
    echo "== $s (repetition $rep of $REPS)" >&2
    attach "$s" || continue

    # hackbench: median of 3 runs, seconds.
    # (No sed here: a peer's name is its path, full of slashes.)
    echo "result $s hackbench_s $(for _ in 1 2 3; do hackbench -g 4 -l 100 | awk '/^Time:/{print $2}'; done | median)"

    if [ "$DESKTOP_ONLY" != 1 ]; then
        # perf bench sched messaging, seconds (when perf is usable in the guest).
        if perf bench sched messaging -g 4 -l 50 > /tmp/pbm.log 2>&1; then
            awk '/Total time:/{print "result '"$s"' perf_messaging_s", $3}' /tmp/pbm.log
        fi

        # A short interactive command under 2x CPU overcommit: uname -r round trips, microseconds.
        hogs_start $((2 * N))
        : > /tmp/lat
        for _ in $(seq 1 60); do
            t0=$EPOCHREALTIME; uname -r > /dev/null; t1=$EPOCHREALTIME
            echo "$t0 $t1" | awk '{printf "%d\n", ($2-$1)*1000000}' >> /tmp/lat
            sleep 0.05
        done
        echo "result $s uname_p50_us $(median < /tmp/lat)"
        echo "result $s uname_p95_us $(pct 95 < /tmp/lat)"
        [ "$rep" = 1 ] && echo "samples $s uname_us $(tr '\n' ' ' < /tmp/lat)"

        # cyclictest wakeup latency (SCHED_OTHER, so the scheduler under test handles it).
        cyclictest -t "$N" -i 2000 -l 1500 -q -m > /tmp/ct.log 2>&1
        # A wide value runs into its label ("Avg:123456"): take what follows each label.
        awk '/Avg:/{v = $0; sub(/.*Avg: */, "", v); sub(/ .*/, "", v); a += v; x = $0; sub(/.*Max: */, "", x); sub(/ .*/, "", x); if (x + 0 > m) m = x + 0; n++} END {if (n) {print "result '"$s"' cyclictest_avg_us", a/n; print "result '"$s"' cyclictest_max_us", m}}' /tmp/ct.log
        hogs_stop

        # CPU use with exactly N hogs: nothing should idle. stress-ng's workers take up to 3 s
        # to start in this VM (1 s samples from the start: 41, 47, 58, 99 % under EEVDF), so
        # the 6 s sample starts once a 1 s one finds the CPUs 90 % busy, or after 10 s: a CPU
        # left idle for good still shows.
        hogs_start "$N"
        for _ in $(seq 1 10); do [ "$(busy_pct 1 | cut -d. -f1)" -ge 90 ] && break; done
        echo "result $s busy_pct $(busy_pct 6)"
        hogs_stop
    fi

    # What a desktop user feels: periodic tasks under hogs, a message storm and a build.
    SAMPLES=$([ "$rep" = 1 ] && echo 1 || echo 0) desktop_suite "$s" "$PERIODIC_SECS"
    # The "eevdf-rt" column: the same tasks as real-time tasks under EEVDF, which preempt
    # everything when they wake. Where even they miss as often, the misses are the machine's
    # (timer interrupts arriving late), not a scheduler's: every desktop table needs it.
    if [ "$s" = eevdf ]; then
        PERIODIC_POLICY=SCHED_FIFO SAMPLES=0 desktop_suite eevdf-rt "$PERIODIC_SECS"
    fi
    if [ "$DESKTOP_ONLY" != 1 ]; then
        light_load "$s"
        # Priorities: nice and cgroup cpu.weight shares of two loops on one CPU.
        weight_shares "$s" 6
    fi

    # A scheduler the kernel ejected meanwhile left the rows above to EEVDF: say so (the
    # desktop suite has already left out the loads it missed, as <load>_ejected).
    if [ "${s#eevdf}" = "$s" ] && [ "$(state)" != enabled ]; then
        echo "error: $s was ejected during the workloads; its rows are EEVDF's" >&2
        echo "result $s ejected 1"
    fi
    detach "$s"
done
done
