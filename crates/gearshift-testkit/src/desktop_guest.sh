# What a desktop user feels, measured in the guest: periodic tasks with deadlines (rt-app) while
# a background load runs. Shell functions, prepended to the bench script and the VM smoke test.
#
# Needs: rt-app, hackbench (rt-tests), make and gcc (Debian packages, seen through the guest's
# read-only root), $STRESS_NG and $N (vCPUs). Prints `result <sched> <metric> <value>` and
# `samples <sched> <metric> v…` lines.

# sched_ext's state: enabled while a BPF scheduler is attached (SCHED_EXT_STATE names another
# file, for tests on a host without sched_ext).
state() { cat "${SCHED_EXT_STATE:-/sys/kernel/sched_ext/state}" 2>/dev/null; }

# The periodic tasks: name, period (µs), work per period (µs). A 60 Hz and a 144 Hz frame, and
# an audio callback (128 frames at 48 kHz).
PERIODIC_TASKS="frame60:16667:3000 frame144:6944:1000 audio:2667:400"

# rt-app turns "run" durations into loop counts with a calibrated ns-per-loop value. It is
# measured once, before any scheduler attaches, on CPU 0 while every other CPU runs a hog: an
# emulated machine's vCPUs share host time, so a loop takes longer when they are all busy (as
# under the loads), and calibrating on an idle machine would ask for far more work per period
# than the milliseconds named here. Every scheduler is then given the same work per period.
rtapp_calibrate() {
    local hogs=""
    mkdir -p /tmp/rtapp-cal && cd /tmp/rtapp-cal || return 1
    cat > cal.json <<'EOF2'
{ "global": { "duration": 1, "calibration": "CPU0", "log_size": "disable" },
  "tasks": { "t": { "loop": 1, "run": 1000, "sleep": 1000 } } }
EOF2
    if [ "$N" -gt 1 ]; then
        "$STRESS_NG" --cpu $((N - 1)) --cpu-method loop --taskset 1-$((N - 1)) -t 60 -q & hogs=$!
        sleep 1
    fi
    RTAPP_NS_PER_LOOP=$(rt-app cal.json 2>&1 | sed -n 's/.*pLoad = \([0-9]*\)ns.*/\1/p' | head -1)
    [ -n "$hogs" ] && { kill "$hogs"; wait "$hogs" 2>/dev/null; }
    cd /tmp || return 1
    [ -n "$RTAPP_NS_PER_LOOP" ] || { echo "error: rt-app calibration failed" >&2; return 1; }
    echo "rt-app: ${RTAPP_NS_PER_LOOP} ns per loop" >&2
}

# The middle one of the numbers on standard input, one per line (the lower of the middle two
# for an even count, so it is always a value that was measured).
middle_value() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

# The work of periodic task $1 per period, in rt-app's µs (loops at RTAPP_NS_PER_LOOP): what
# periodic_calibrate() sized, else $2, the duration PERIODIC_TASKS names.
PERIODIC_WORK=""
work_of() {
    local spec
    for spec in $PERIODIC_WORK; do
        [ "${spec%%:*}" = "$1" ] && { echo "${spec#*:}"; return; }
    done
    echo "$2"
}

# Sizes each periodic task's work so that one period's burst takes the time PERIODIC_TASKS
# names on the loaded machine. rt-app's own calibration (short trials) matched a loop's cost
# with no load, not under one: an emulated vCPU runs at full speed only while the host runs
# it. Under the hogs, even as real-time tasks that nothing else delays, a period's
# loops took 1.9x the named time for frame60 and 4-5x for frame144 and audio (short bursts
# that begin on an interrupt suffer most). Every scheduler then faced tasks asking for more
# than their share of a CPU, and missed most periods whatever it did. Here the tasks run as
# real-time tasks under the hogs five times; each run gives every task a size (its work scaled
# by named / taken time), the next run tries it, and the median of the five sizes is kept.
# One run's size alone swung 3x at 4 vCPUs (the host runs the vCPUs in turns, so a burst's
# time depends on whose turn it is), and a run that followed a fast one kept its error. A run
# where a task ran no period at all (it happened once: rt-app's threads started and exited at
# once) is run again, up to eight runs in all. Run once per guest, before any scheduler
# attaches: every scheduler gets the same work.
PERIODIC_SIZING_RUNS=5
periodic_calibrate() {
    local try sized=0 spec name period run log took work new sizes="" final=""
    [ -n "${RTAPP_NS_PER_LOOP:-}" ] || { echo "error: periodic_calibrate needs rtapp_calibrate first" >&2; return 1; }
    start_hogs
    sleep 1
    for try in $(seq 1 $((PERIODIC_SIZING_RUNS + 3))); do
        PERIODIC_POLICY=SCHED_FIFO periodic_run 4
        new=""
        for spec in $PERIODIC_TASKS; do
            IFS=: read -r name period run <<< "$spec"
            work=$(work_of "$name" "$run")
            log=$(periodic_log "$name")
            # Column 3: the period's run time (µs); a real-time task runs its burst unpreempted.
            took=$([ -n "$log" ] && awk '!/^#/ && NF >= 11 { t += $3; k++ } END { if (k) printf "%d", t / k }' "$log")
            if [ -z "$took" ] || [ "$took" -le 0 ]; then
                echo "rt-app: no period of $name in sizing run $try; running it again" >&2
                new=""
                break
            fi
            echo "rt-app: $name, sizing run $try: ${work} µs of work took ${took} µs (named: $run)" >&2
            work=$((work * run / took))
            [ "$work" -ge 1 ] || work=1
            new="$new${new:+ }$name:$work"
        done
        [ -n "$new" ] || continue
        PERIODIC_WORK=$new
        sizes="$sizes $new"
        sized=$((sized + 1))
        [ $sized -lt $PERIODIC_SIZING_RUNS ] || break
    done
    load_stop
    if [ $sized -lt $PERIODIC_SIZING_RUNS ]; then
        echo "error: the periodic tasks' work could not be sized (see rt-app's output)" >&2
        cat /tmp/rtapp.out >&2
        return 1
    fi
    for spec in $PERIODIC_TASKS; do
        name=${spec%%:*}
        work=$(printf '%s\n' $sizes | awk -F: -v n="$name" '$1 == n { print $2 }' | middle_value)
        final="$final${final:+ }$name:$work"
    done
    PERIODIC_WORK=$final
    echo "rt-app: work per period, sized under load: $PERIODIC_WORK (µs at ${RTAPP_NS_PER_LOOP} ns per loop; median of $sized runs)" >&2
}

# The rt-app use case: every periodic task for $1 seconds, logging each period into /tmp/rtapp
# (a buffer of 4 MiB per task, written at the end: rt-app 1.0 writes nothing per period with
# log_size "file"). The tasks are SCHED_OTHER, so the scheduler under test decides, unless
# PERIODIC_POLICY=SCHED_FIFO: then they are real-time tasks, which preempt every fair or
# sched_ext task the moment they wake; where even they miss, the misses are the machine's
# (timer interrupts arriving late, work slowed), which no scheduling decision recovers.
periodic_json() {
    local secs=$1 first=1 spec name period run prio=""
    [ "${PERIODIC_POLICY:-SCHED_OTHER}" = SCHED_FIFO ] && prio=', "priority": 50'
    printf '{ "global": { "duration": %s, "calibration": %s, "default_policy": "%s",\n' \
        "$secs" "$RTAPP_NS_PER_LOOP" "${PERIODIC_POLICY:-SCHED_OTHER}"
    printf '    "logdir": "/tmp/rtapp", "log_basename": "rt", "log_size": 4 },\n  "tasks": {\n'
    for spec in $PERIODIC_TASKS; do
        IFS=: read -r name period run <<< "$spec"
        [ $first = 1 ] || printf ',\n'
        first=0
        printf '    "%s": { "loop": -1, "run": %s%s, "timer": { "ref": "unique", "period": %s } }' \
            "$name" "$(work_of "$name" "$run")" "$prio" "$period"
    done
    printf '\n  }\n}\n'
}

# Runs the rt-app use case for $1 seconds (periodic_json: PERIODIC_POLICY applies), its logs
# in a fresh /tmp/rtapp and its output in /tmp/rtapp.out.
periodic_run() {
    rm -rf /tmp/rtapp && mkdir -p /tmp/rtapp
    periodic_json "$1" > /tmp/rtapp.json
    (cd /tmp && rt-app /tmp/rtapp.json > /tmp/rtapp.out 2>&1)
}
# The log periodic_run() left for periodic task $1 (empty if rt-app wrote none).
periodic_log() { ls /tmp/rtapp/rt-"$1"-*.log 2>/dev/null | head -1; }

# Each /proc/interrupts row (an IRQ number, or a kind: LOC timer, IWI irq_work, RES reschedule
# and CAL function-call IPIs) with its count summed over the CPUs, one `name: count` a line.
irq_rows() {
    awk '$1 ~ /:$/ {n = 0; for (i = 2; i <= NF && $i ~ /^[0-9]+$/; i++) n += $i; print $1, n}' /proc/interrupts
}
# What the machine did meanwhile, per second: local timer interrupts (ticks and high-resolution
# timers); IPIs that wake or preempt another CPU (EEVDF queues a wakeup on an idle CPU with a
# function-call IPI, sched_ext sends a rescheduling one: the two kinds summed compare them);
# irq_work self-interrupts (sched_ext's kicks and BPF ring buffer wakeups of a scheduler's user
# space defer through them); and switches to the idle task (a CPU going idle; counted only with
# kernel.sched_schedstats on, which the first count turns on). Under single-threaded TCG the
# first and the last also end a vCPU's turn on the host, which is what decides how late the
# other vCPUs' timers fire.
machine_counts() {
    sysctl -q kernel.sched_schedstats=1 2>/dev/null
    irq_rows | awk '{c[$1] = $2}
         END {print "LOC:", c["LOC:"] + 0; print "IPI:", c["RES:"] + c["CAL:"]; print "IWI:", c["IWI:"] + 0}'
    awk '/^cpu[0-9]/ {n += $5} END {if (NR) print "idle:", n}' /proc/schedstat 2>/dev/null
    echo "time: $EPOCHREALTIME"
}
# Per CPU: name, busy and total jiffies (/proc/stat), and the times it went idle after running
# a task (sched_goidle; counted with kernel.sched_schedstats on, which machine_counts turns on).
# A snapshot for cpu_use_between.
cpu_use() {
    paste -d ' ' <(awk '/^cpu[0-9]/ {t = 0; for (i = 2; i <= NF; i++) t += $i; print $1, t - $5 - $6, t}' /proc/stat) \
        <(awk '/^cpu[0-9]/ {print $5}' /proc/schedstat)
}
# Per CPU between the cpu_use snapshots in files $1 and $2: name, busy %, idle entries, and 1
# if it was in use (else 0): busy half the time, or went idle at least a quarter as often as
# the CPU that did so most (when any did: without schedstats none counts idle entries). A busy
# share of a few per cent says little: it also comes from a CPU's device interrupts (the 9p
# root's, stretched by another VM on the host) and from a task that strays there in a short
# spell (low-power's second CPU ran 3-6 % in such spells).
cpu_use_between() {
    paste -d ' ' "$1" "$2" | awk '{
        name[NR] = $1; u[NR] = ($7 > $3) ? 100 * ($6 - $2) / ($7 - $3) : 0; d[NR] = $8 - $4
        if (d[NR] > top) top = d[NR] }
        END { for (i = 1; i <= NR; i++) printf "%s %.1f %d %d\n", name[i], u[i], d[i], (u[i] >= 50 || (top > 0 && 4 * d[i] >= top)) }'
}
# CPU time of process $1 in clock ticks (user and system, all threads); nothing if it is gone.
proc_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat" 2>/dev/null; }
# proc_ticks of the scheduler's own process $SCHED_PID, set by the caller (unset for the
# kernel's schedulers): what a scheduler costs beside the work it schedules. Under load, four
# sched_ext peers' main threads called sched_yield() in a loop, up to 40 % of a CPU at 2 vCPUs;
# in single-threaded TCG that also shortens each vCPU's turn on the host and so delivers the
# other vCPU's timer interrupts sooner.
sched_cpu_ticks() {
    [ -n "${SCHED_PID:-}" ] && proc_ticks "$SCHED_PID"
}
# `result <scheduler> <load>_sched_cpu_pct <% of one CPU>` since tick count $3 at time $4.
sched_cpu_rate() {
    local now
    # No process (EEVDF), or it is gone: nothing to report.
    now=$(sched_cpu_ticks) && [ -n "$3" ] || return 0
    awk -v s="$1" -v l="$2" -v a="$3" -v b="$now" -v t0="$4" -v t1="$EPOCHREALTIME" -v hz="$(getconf CLK_TCK)" \
        'BEGIN { if (t1 > t0) printf "result %s %s_sched_cpu_pct %.1f\n", s, l, 100 * (b - a) / hz / (t1 - t0) }'
}
# `result <scheduler> <metric prefix>_<counter>_per_s <rate>` since the counts in file $3.
machine_rates() {
    machine_counts | awk -v s="$1" -v m="$2" '
        BEGIN { name["LOC:"] = "timer_irqs"; name["IPI:"] = "wakeup_ipis"; name["IWI:"] = "irq_work"; name["idle:"] = "idle_entries" }
        NR == FNR { b[$1] = $2; next }
        { a[$1] = $2 }
        END {
            d = a["time:"] - b["time:"]
            if (d <= 0) exit
            for (k in name) if ((k in a) && (k in b)) printf "result %s %s_%s_per_s %.0f\n", s, m, name[k], (a[k] - b[k]) / d
        }' "$3" -
}

# Where a periodic task's wakeup latency comes from, traced while it runs (when tracefs has the
# events, unless LATENCY_TRACE=0): the timer's lateness, from its expiry to its handler running (in an emulated
# machine mostly the wait for the vCPU's turn on the host: no guest scheduler can shorten it),
# and the scheduling delay, from the wakeup (sched_waking) to the task running on a CPU (what
# the scheduler decides). rt-app's wakeup latency is about their sum.
TRACEFS=/sys/kernel/tracing
TRACE_EVENTS="sched/sched_waking sched/sched_switch timer/hrtimer_start timer/hrtimer_expire_entry"
# A tracefs event filter matching the periodic tasks' threads by the task-name field $1 (rt-app
# names each thread after its task, as the parser below expects).
trace_filter() {
    local spec f=""
    for spec in $PERIODIC_TASKS; do f="$f${f:+ || }$1 ~ \"${spec%%:*}*\""; done
    echo "$f"
}
latency_trace_start() {
    local e
    [ "${LATENCY_TRACE:-1}" = 1 ] && [ -e $TRACEFS/events/sched/sched_waking ] || return 0
    echo 0 > $TRACEFS/tracing_on
    echo 8192 > $TRACEFS/buffer_size_kb
    # The scheduler events are recorded only for the periodic tasks: under a message storm
    # every context switch would otherwise be, the buffers would wrap, and reading them back
    # took minutes of the emulated machine's time per run.
    echo "$(trace_filter comm)" > $TRACEFS/events/sched/sched_waking/filter
    echo "$(trace_filter next_comm)" > $TRACEFS/events/sched/sched_switch/filter
    for e in $TRACE_EVENTS; do echo 1 > "$TRACEFS/events/$e/enable"; done
    echo > $TRACEFS/trace
    echo 1 > $TRACEFS/tracing_on
}
# Writes each periodic task's timer lateness and scheduling delays (µs, one per line) to
# /tmp/trace-<task>.late and .delay.
latency_trace_stop() {
    local e names=""
    rm -f /tmp/trace-*.late /tmp/trace-*.delay
    [ "${LATENCY_TRACE:-1}" = 1 ] && [ -e $TRACEFS/events/sched/sched_waking ] || return 0
    echo 0 > $TRACEFS/tracing_on
    for e in $TRACE_EVENTS; do echo 0 > "$TRACEFS/events/$e/enable"; done
    echo 0 > $TRACEFS/events/sched/sched_waking/filter
    echo 0 > $TRACEFS/events/sched/sched_switch/filter
    for spec in $PERIODIC_TASKS; do names="$names ${spec%%:*}"; done
    # Lines: "<comm>-<pid> [cpu] flags <seconds>: <event>: key=value ...". rt-app names each
    # thread after its task. A timer is matched by its address; a wakeup by the task's pid.
    awk -v names="$names" '
        function task(c,   i) { for (i in want) if (index(c, i) == 1) return i; return "" }
        function val(k,   i) { for (i = 1; i <= NF; i++) if (index($i, k "=") == 1) return substr($i, length(k) + 2); return "" }
        BEGIN { n = split(names, a, " "); for (i = 1; i <= n; i++) want[a[i]] = 1 }
        {
            for (i = 2; i <= NF; i++) if ($i ~ /^[0-9]+\.[0-9]+:$/) break
            if (i >= NF) next
            ts = substr($i, 1, length($i) - 1) * 1e6; ev = $(i + 1)
            if (ev == "hrtimer_start:") {
                t = task($1)
                if (t != "" && val("function") == "hrtimer_wakeup") { tt[val("hrtimer")] = t; due[val("hrtimer")] = val("expires") }
            } else if (ev == "hrtimer_expire_entry:") {
                h = val("hrtimer")
                if (h in tt) { printf "%d\n", (val("now") - due[h]) / 1000 > ("/tmp/trace-" tt[h] ".late"); delete tt[h] }
            } else if (ev == "sched_waking:") {
                t = task(val("comm"))
                if (t != "") { woke[val("pid")] = ts; wt[val("pid")] = t }
            } else if (ev == "sched_switch:") {
                p = val("next_pid")
                if (p in woke) { printf "%d\n", ts - woke[p] > ("/tmp/trace-" wt[p] ".delay"); delete woke[p] }
            }
        }' $TRACEFS/trace
    echo > $TRACEFS/trace
}
# `result` lines for the p50 and p99 of the values in file $3, as metric $2 of scheduler $1.
percentiles() {
    [ -s "$3" ] || return 0
    sort -n "$3" | awk -v s="$1" -v m="$2" '
        { a[NR] = $1 }
        END {
            i50 = int(NR * 0.50); if (i50 < 1) i50 = 1
            i99 = int(NR * 0.99); if (i99 < 1) i99 = 1
            printf "result %s %s_p50_us %d\nresult %s %s_p99_us %d\n", s, m, a[i50], s, m, a[i99]
        }'
}

# Runs the periodic tasks for $3 seconds and reports, per task, for scheduler $1 under load $2:
# periods run, deadline misses (periods not completed on time: overruns plus the periods an
# overrun skipped, as % of the periods there were), periods that began with a timed sleep
# (slept: a late period starts at once, with a wakeup latency of 0), wakeup latency
# p50/p99/max (µs), and its two parts, timer lateness and scheduling delay, p50/p99 (µs).
periodic_measure() {
    local sched=$1 load=$2 secs=$3 spec name period run log expected
    local sched_ticks sched_t0
    latency_trace_start
    machine_counts > /tmp/machine.before
    sched_ticks=$(sched_cpu_ticks); sched_t0=$EPOCHREALTIME
    periodic_run "$secs"
    sched_cpu_rate "$sched" "$load" "$sched_ticks" "$sched_t0"
    machine_rates "$sched" "$load" /tmp/machine.before
    latency_trace_stop
    for spec in $PERIODIC_TASKS; do
        IFS=: read -r name period run <<< "$spec"
        log=$(periodic_log "$name")
        if [ -z "$log" ]; then
            echo "error: rt-app wrote no log for $name under $sched/$load" >&2
            cat /tmp/rtapp.out >&2
            return 1
        fi
        expected=$((secs * 1000000 / period))
        # Columns: idx perf run period start end rel_st slack c_duration c_period wu_lat.
        awk -v s="$sched" -v m="${name}_${load}" -v want="$expected" '
            !/^#/ && NF >= 11 { n++; if ($8 >= 0) ok++; if ($11 > 0) slept++ }
            END {
                miss = want > 0 ? 100 * (want - ok) / want : 0
                if (miss < 0) miss = 0
                printf "result %s %s_runs %d\n", s, m, n
                printf "result %s %s_miss_pct %.2f\n", s, m, miss
                printf "result %s %s_slept %d\n", s, m, slept
            }' "$log"
        awk '!/^#/ && NF >= 11 { print $11 }' "$log" | sort -n > /tmp/wulat
        awk -v s="$sched" -v m="${name}_${load}" '
            { a[NR] = $1 }
            END {
                if (!NR) exit
                i50 = int(NR * 0.50); if (i50 < 1) i50 = 1
                i99 = int(NR * 0.99); if (i99 < 1) i99 = 1
                printf "result %s %s_wu_p50_us %d\n", s, m, a[i50]
                printf "result %s %s_wu_p99_us %d\n", s, m, a[i99]
                printf "result %s %s_wu_max_us %d\n", s, m, a[NR]
            }' /tmp/wulat
        percentiles "$sched" "${name}_${load}_timer_late" "/tmp/trace-$name.late"
        percentiles "$sched" "${name}_${load}_sched_delay" "/tmp/trace-$name.delay"
        if [ "${SAMPLES:-1}" = 1 ]; then
            echo "samples $sched ${name}_${load}_wu_us $(tr '\n' ' ' < /tmp/wulat)"
        fi
    done
}

# The schedulers of round (repetition) $1 of a comparison, in the order they run: EEVDF, if
# named first, stays first (the reference); the others take turns at going first, so that
# drift in the emulated machine, or what the scheduler before left behind, does not always
# fall on the same one.
rotation() {
    local round=$1 fixed="" k
    shift
    [ "$1" = eevdf ] && { fixed=eevdf; shift; }
    k=$(( $# ? (round - 1) % $# : 0 ))
    echo $fixed "${@:k+1}" "${@:1:k}"
}

# A C source tree for the build load: $1 files of generated code, each a few functions gcc has
# to optimise, and a Makefile that links them, in $BUILD_DIR (/tmp/build unless set).
# Generated once per guest, and built once then, untimed: the compilers and headers come
# from the host over 9p, and whichever scheduler's build read them first paid for it (the
# first scheduler of a bench run built in 1.3-1.8x the time of the next, four runs of four).
# Fails if that build does, so a tree gcc cannot build is reported before anything is timed.
build_tree() {
    local files=$1 dir=${BUILD_DIR:-/tmp/build} i
    [ -f "$dir/Makefile" ] && return 0
    mkdir -p "$dir" && cd "$dir" || return 1
    for i in $(seq 1 "$files"); do
        cat > "u$i.c" <<EOF
#include <stdint.h>
#include <string.h>
static uint64_t mix$i(uint64_t x) { x ^= x >> 33; x *= 0xff51afd7ed558ccdULL; return x ^ (x >> 29); }
uint64_t table$i(const uint8_t *p, size_t n) {
    uint64_t h = $i, acc[8]; memset(acc, 0, sizeof acc);
    for (size_t k = 0; k < n; k++) { acc[k & 7] += mix$i(p[k] + h); h = mix$i(h ^ acc[(k + 3) & 7]); }
    for (int j = 0; j < 8; j++) h ^= mix$i(acc[j] + j);
    return h;
}
EOF
    done
    {
        echo "OBJS = $(seq -f 'u%g.o' 1 "$files" | tr '\n' ' ')"
        echo "all: libgen.a"
        echo "libgen.a: \$(OBJS)"
        printf '\tar rcs $@ $^\n'
        echo "%.o: %.c"
        printf '\tgcc -O2 -c $< -o $@\n'
        echo "clean:"
        printf '\trm -f *.o libgen.a\n'
    } > Makefile.new
    if ! make -s -f Makefile.new -j"${N:-1}" > /dev/null; then
        echo "error: the generated build tree in $dir does not build" >&2
        return 1
    fi
    # The Makefile last: its presence says the tree is ready and warmed (see above).
    make -s -f Makefile.new clean && mv Makefile.new Makefile
    cd /tmp || return 1
}

# Background loads, started by load_start and ended by load_stop:
#   hogs   2×N CPU-bound loops
#   storm  message passing (hackbench) in a loop
#   build  make -jN of the generated tree ($BUILD_FILES files, 8 per CPU unless set) in a
#          loop; each build's wall time (s) goes to /tmp/build_times
#   mixed  the hogs and the storm at once: a desktop whose CPUs are all taken by one kind of
#          work while another wakes and sleeps thousands of times a second
start_hogs() { "$STRESS_NG" --cpu $((2 * N)) --cpu-method loop -t 3600 -q & LOAD_PID=$!; }
start_storm() { (while :; do hackbench -g 4 -l 200 > /dev/null 2>&1; done) & LOAD_PID=$!; }
load_start() {
    case "$1" in
        hogs) start_hogs ;;
        storm) start_storm ;;
        # One parent for both, so load_stop ends the hogs with the storm: stress-ng runs
        # through its loader, and no process of it is named "stress-ng" for pkill.
        mixed) (start_hogs; start_storm; wait) & LOAD_PID=$! ;;
        build)
            build_tree "${BUILD_FILES:-$((8 * N))}" || return 1
            : > /tmp/build_times; : > /tmp/build_failures
            # Only a build that succeeded counts: one that failed (a compiler killed, a file
            # left half-written by the last load_stop) took a fraction of the time and once
            # showed up as a 1 s build.
            (cd /tmp/build && while :; do
                make -s clean
                t0=$EPOCHREALTIME
                if make -s -j"$N" > /dev/null 2>&1; then
                    t1=$EPOCHREALTIME
                    echo "$t0 $t1" | awk '{ printf "%.3f\n", $2 - $1 }' >> /tmp/build_times
                else
                    echo failed >> /tmp/build_failures
                fi
            done) & LOAD_PID=$! ;;
        *) echo "error: unknown load $1" >&2; return 1 ;;
    esac
    sleep 2
}
load_stop() {
    # The loop's shell and everything it started (hackbench groups, make and gcc). The shell
    # goes first, so it does not record the build it is stopping as a failed one.
    local kids
    kids=$(pgrep -P "$LOAD_PID")
    kill "$LOAD_PID" 2>/dev/null
    wait "$LOAD_PID" 2>/dev/null
    [ -n "$kids" ] && kill $kids 2>/dev/null
    pkill -x hackbench 2>/dev/null; pkill -x make 2>/dev/null; pkill -x stress-ng 2>/dev/null
    # make leaves its compilers running when it is killed: they would write objects into the
    # next build's tree after its `make clean`.
    pkill -x gcc 2>/dev/null; pkill -x cc1 2>/dev/null; pkill -x as 2>/dev/null
    sleep 1
}

# Every integer counter of the scheduler's stats, `name value` a line by name, when it serves
# its control protocol on /tmp/gs.sock (gearshift under cargo xtask bench); nothing otherwise
# (another scheduler, or a socket left behind by one that exited).
sched_stats() {
    [ -S /tmp/gs.sock ] || return 0
    python3 -c 'import json, socket
try:
    s = socket.socket(socket.AF_UNIX); s.settimeout(5); s.connect("/tmp/gs.sock")
    s.sendall(b"{\"request\":\"get-stats\"}\n")
    stats = json.loads(s.makefile().readline())["stats"]
except (OSError, ValueError, KeyError):
    raise SystemExit(0)
for k, v in sorted(stats.items()):
    if isinstance(v, int) and not isinstance(v, bool):
        print(k, v)' 2>/dev/null
}

# Of those, the scheduler's own latency counters, and how much went through user space
# (enqueues sent there, ended slices BPF queued itself).
sched_counters() {
    sched_stats | awk '$1 ~ /^nr_latency/ || $1 == "nr_preemptions" || $1 == "nr_starvation_guard" ||
        $1 == "nr_queued" || $1 == "nr_slice_requeues"'
}

# What those counters did over one load: `result <scheduler> <load>_<counter> <delta>`.
counters_delta() {
    local sched=$1 load=$2 before=$3
    sched_counters | awk -v s="$sched" -v l="$load" '
        NR == FNR { b[$1] = $2; next }
        ($1 in b) { printf "result %s %s_%s %d\n", s, l, $1, $2 - b[$1] }' "$before" -
}

# Periodic tasks under each load ($DESKTOP_LOADS, all four unless set) for $2 seconds, for
# scheduler $1; the build's median wall time under the periodic tasks too.
#
# A sched_ext scheduler (any but eevdf and eevdf-rt) the kernel ejects leaves the rest of the
# run to EEVDF: each load it was not attached for to the end reports `result <sched>
# <load>_ejected 1` instead of its rows, so that no median mixes EEVDF's rows into a peer's
# column.
desktop_suite() {
    local sched=$1 secs=$2 load
    for load in ${DESKTOP_LOADS:-hogs storm build mixed}; do
        # Progress on stderr: a run that times out shows how far it got.
        echo "desktop_suite: $sched under $load, at $SECONDS s" >&2
        load_start "$load" || return 1
        sched_counters > /tmp/counters.before
        {
            periodic_measure "$sched" "$load" "$secs" || { load_stop; return 1; }
            counters_delta "$sched" "$load" /tmp/counters.before
            # A build that outlasts a short run still gets timed: wait for one (up to 2 min).
            if [ "$load" = build ]; then
                for _ in $(seq 1 120); do [ -s /tmp/build_times ] && break; sleep 1; done
            fi
            load_stop
            if [ "$load" = build ] && [ -s /tmp/build_times ]; then
                echo "result $sched build_s $(middle_value < /tmp/build_times)"
            fi
            [ "$load" = build ] && echo "result $sched build_failures $(wc -l < /tmp/build_failures)"
        } > /tmp/load.out
        if [ "${sched#eevdf}" = "$sched" ] && [ "$(state)" != enabled ]; then
            echo "desktop_suite: $sched was ejected; its rows under $load are left out" >&2
            echo "result $sched ${load}_ejected 1"
        else
            cat /tmp/load.out
        fi
    done
    echo "desktop_suite: $sched done, at $SECONDS s" >&2
    return 0
}

# CPU time of two CPU-bound loops pinned to CPU 0 over $1 seconds, each shell running its
# setup ($2, $3) before it spins: prints the ratio first : second.
share_of_pair() {
    local secs=$1 a b ta tb
    taskset -c 0 sh -c "$2; while :; do :; done" & a=$!
    taskset -c 0 sh -c "$3; while :; do :; done" & b=$!
    sleep 1
    ta=$(proc_ticks $a); tb=$(proc_ticks $b)
    sleep "$secs"
    ta=$(( $(proc_ticks $a) - ta ))
    tb=$(( $(proc_ticks $b) - tb ))
    kill $a $b; wait $a $b 2>/dev/null
    awk -v a="$ta" -v b="$tb" 'BEGIN {printf "%.2f\n", a / (b > 0 ? b : 1)}'
}

# Whether priorities work, for scheduler $1: the CPU share of nice 0 over nice 10 (the kernel's
# own scheduler gives about 9:1) and of a cgroup at cpu.weight 1000 over one at the default
# 100 (about 10:1), two loops on one CPU for $2 seconds each.
weight_shares() {
    local s=$1 secs=${2:-6} cg=/sys/fs/cgroup
    echo "result $s nice_share $(share_of_pair "$secs" : 'renice -n 10 -p $$ > /dev/null')"
    grep -qw cpu $cg/cgroup.subtree_control || echo +cpu > $cg/cgroup.subtree_control
    mkdir -p $cg/gs-heavy $cg/gs-light
    echo 1000 > $cg/gs-heavy/cpu.weight
    echo 100 > $cg/gs-light/cpu.weight
    echo "result $s cgroup_share $(share_of_pair "$secs" "echo \$\$ > $cg/gs-heavy/cgroup.procs" \
        "echo \$\$ > $cg/gs-light/cgroup.procs")"
}
