# Guest side of `cargo xtask bench`: the same workloads under each scheduler, one VM run.
# Prints `result <scheduler> <metric> <value>` lines; the host turns them into ratios.
# @SCHED@, @STRESS_NG@, @SCHEDULERS@, @NCPU@ are filled in by the host.
SCHED='@SCHED@'
STRESS_NG='@STRESS_NG@'
N=@NCPU@

state() { cat /sys/kernel/sched_ext/state; }
attach() {
    case "$1" in
        eevdf) return 0 ;;
        gearshift) "$SCHED" > /tmp/gs.log 2>&1 & ;;
        gearshift-fifo) "$SCHED" --mode fifo > /tmp/gs.log 2>&1 & ;;
        gearshift-lowpower) "$SCHED" --mode low-power > /tmp/gs.log 2>&1 & ;;
        gearshift-nopreempt) "$SCHED" --preemption false > /tmp/gs.log 2>&1 & ;;
        *) "$1" > /tmp/other.log 2>&1 & ;;
    esac
    SPID=$!
    for _ in $(seq 1 240); do [ "$(state)" = enabled ] && return 0; sleep 0.25; done
    echo "error: $1 did not attach" >&2; return 1
}
detach() {
    [ "$1" = eevdf ] && return 0
    kill -INT $SPID; wait $SPID
    for _ in $(seq 1 40); do [ "$(state)" = disabled ] && return 0; sleep 0.25; done
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

for s in @SCHEDULERS@; do
    echo "== $s" >&2
    attach "$s" || continue

    # hackbench: median of 3 runs, seconds.
    for _ in 1 2 3; do hackbench -g 4 -l 100 | awk '/^Time:/{print $2}'; done | median | sed "s/^/result $s hackbench_s /"

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
    tr '\n' ' ' < /tmp/lat | sed "s/^/samples $s uname_us /"; echo

    # cyclictest wakeup latency (SCHED_OTHER, so the scheduler under test handles it).
    cyclictest -t "$N" -i 2000 -l 1500 -q -m > /tmp/ct.log 2>&1
    awk '/Avg:/{for(i=1;i<=NF;i++){if($i=="Avg:")a+=$(i+1); if($i=="Max:")m=($(i+1)>m)?$(i+1):m}; n++} END {if (n) {print "result '"$s"' cyclictest_avg_us", a/n; print "result '"$s"' cyclictest_max_us", m}}' /tmp/ct.log
    hogs_stop

    # CPU use with exactly N hogs: nothing should idle.
    hogs_start "$N"
    echo "result $s busy_pct $(busy_pct 6)"
    hogs_stop

    detach "$s"
done
