# Where a parallel build's time goes while the desktop's periodic tasks run, per scheduler: a
# guest script for the sched_ext VM, sourced there. For each round, each scheduler in turn
# (desktop_guest.sh's rotation(): EEVDF first when named first, the others taking turns)
# runs the three periodic tasks of the bench (desktop_guest.sh) for the whole of one
# `make -j$(nproc)` of the bench's generated tree, and prints one `build`
# line (wall time; idle, system and interrupt shares of the machine; context switches; IPIs
# and irq_work interrupts; the build's and rt-app's CPU time; the scheduler process's own),
# one `irq` line (interrupts by kind, task migrations), one `periods` line (periods rt-app ran
# per task), and for sched_ext schedulers a `bpf` line
# per BPF program (runs, total time and time per run, from kernel.bpf_stats_enabled) and, for
# scx_gearshift, the change in its counters (gauges such as nr_interactive included).
#
#   cargo xtask vm --icount --cpus 4 --timeout-s 3600 -- \
#     "ROUNDS=2 SCHEDS='eevdf /path/to/scx_gearshift /path/to/scx_cosmos' . $PWD/tools/build-breakdown.sh"
#
# The periodic tasks' work per period is the bench's kept sizing (SIZING_FILE, by default the
# 4-vCPU instruction-clock one `cargo xtask bench --icount --cpus 4` keeps); a build first
# warms the caches under EEVDF. Timing in the emulated machine is noisy: compare schedulers
# within one run, over rounds.
TOOLS_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
N=$(nproc)
. "$TOOLS_DIR/../crates/gearshift-testkit/src/desktop_guest.sh"
SIZING_FILE=${SIZING_FILE:-$HOME/.cache/gearshift/bench/periodic-sizing-4cpu-icount.txt}
read -r RTAPP_NS_PER_LOOP PERIODIC_WORK < "$SIZING_FILE" ||
    { echo "error: no periodic sizing in $SIZING_FILE: run cargo xtask bench first" >&2; return 1; }

# idle, total, system+irq+softirq jiffies and context switches, from /proc/stat.
machine_snapshot() {
    awk '/^cpu / { t = 0; for (i = 2; i <= NF; i++) t += $i; printf "%d %d %d ", $5 + $6, t, $4 + $7 + $8 }
         /^ctxt/ { print $2 }' /proc/stat
}
# Function-call and reschedule IPIs plus irq_work interrupts (a kick costs one of these), from
# desktop_guest.sh's machine_counts snapshot in file $1.
ipis_and_irq_work() { awk '$1 == "IPI:" || $1 == "IWI:" { n += $2 } END { print n }' "$1"; }
# User and system CPU seconds of this shell's waited-for children so far (bash's `times`, into a
# file: on a pipe's side it would run in a subshell with children of its own). Around the
# build, the build's: make waits for every compiler it starts.
children_cpu() {
    times > /tmp/times.out
    awk 'NR == 2 { for (i = 1; i <= 2; i++) { split($i, t, "m"); printf "%.2f ", t[1] * 60 + t[2] } print "" }' /tmp/times.out
}
rtapp_ticks() { local p; p=$(pgrep -x rt-app | head -1); [ -n "$p" ] && proc_ticks "$p" || echo 0; }
bpf_costs() { [ -n "$SCHED_PID" ] && python3 "$TOOLS_DIR/bpf_prog_costs.py" "$SCHED_PID"; }

attach_for_breakdown() {
    local s=$1 args=""
    SCHED_PID=""
    [ "$s" = eevdf ] && return 0
    rm -f /tmp/gs.sock
    case "$s" in *scx_gearshift*) args="--control-socket /tmp/gs.sock" ;; esac
    # A scheduler's arguments follow its path after colons (path:--mode:fifo).
    # shellcheck disable=SC2086
    ${s//:/ } $args > /tmp/sched.log 2>&1 &
    SCHED_PID=$!
    for _ in $(seq 1 240); do [ "$(state)" = enabled ] && return 0; sleep 0.25; done
    echo "error: $s did not attach" >&2
    return 1
}
detach_for_breakdown() {
    [ -n "$SCHED_PID" ] || return 0
    kill -INT "$SCHED_PID"; wait "$SCHED_PID"
    for _ in $(seq 1 40); do [ "$(state)" = disabled ] && return 0; sleep 0.25; done
}

# Task migrations between CPUs over the build, machine-wide (perf's software counter), into
# MIGRATIONS ("-" without perf). Not called in a command substitution: perf is this shell's
# child, and only this shell can wait for it to write its count.
migrations_start() {
    PERF_PID=""
    command -v perf > /dev/null || return 0
    perf stat -a -x, -e cpu-migrations -o /tmp/migrations.out & PERF_PID=$!
}
migrations_stop() {
    MIGRATIONS=-
    [ -n "$PERF_PID" ] || return 0
    kill -INT "$PERF_PID"; wait "$PERF_PID"
    MIGRATIONS=$(awk -F, '/cpu-migrations/ { print $1 }' /tmp/migrations.out)
}

build_breakdown() {
    local s=$1 name rt m0 m1 p0 p1 q0 q1 t0 t1 rc
    name=$(basename "${s%%:*}")
    rm -rf /tmp/rtapp && mkdir -p /tmp/rtapp && periodic_json 3600 > /tmp/rtapp.json
    (cd /tmp && exec rt-app /tmp/rtapp.json > /tmp/rtapp.out 2>&1) & rt=$!
    sleep 1
    (cd /tmp/build && make -s clean)
    sched_stats > /tmp/counters.0; bpf_costs > /tmp/bpf.0
    # Started before the build's clocks and stopped after them: perf's own start, stop and CPU
    # time (a waited-for child of this shell) stay out of the build's figures.
    migrations_start
    irq_rows > /tmp/irq.0
    m0=$(machine_snapshot); machine_counts > /tmp/interrupts.0; q0=$(rtapp_ticks)
    p0=${SCHED_PID:+$(proc_ticks "$SCHED_PID")}; t0=$EPOCHREALTIME
    children_cpu > /tmp/build.cpu.0
    (cd /tmp/build && exec make -s -j"$N" > /dev/null 2>&1)
    rc=$?
    children_cpu > /tmp/build.cpu.1
    t1=$EPOCHREALTIME; m1=$(machine_snapshot); machine_counts > /tmp/interrupts.1; q1=$(rtapp_ticks)
    p1=${SCHED_PID:+$(proc_ticks "$SCHED_PID")}
    irq_rows > /tmp/irq.1; migrations_stop
    sched_stats > /tmp/counters.1; bpf_costs > /tmp/bpf.1
    kill "$rt" 2>/dev/null; wait "$rt" 2>/dev/null
    echo "$t0 $t1 $m0 $m1 $(paste /tmp/build.cpu.0 /tmp/build.cpu.1 | awk '{ print $3 - $1, $4 - $2 }') $((q1 - q0)) $(( ${p1:-0} - ${p0:-0} )) $(( $(ipis_and_irq_work /tmp/interrupts.1) - $(ipis_and_irq_work /tmp/interrupts.0) )) $rc" | awk -v s="$name" '{
        tot = $8 - $4
        printf "build %s wall_s=%.1f idle=%.1f%% sys=%.1f%% ctxt=%dk ipis=%dk build_cpu_s=%.0f (%.0fu+%.0fs) rtapp_cpu_s=%.0f sched_cpu_s=%.1f rc=%d\n",
            s, $2 - $1, 100 * ($7 - $3) / tot, 100 * ($9 - $5) / tot, ($10 - $6) / 1000, $15 / 1000,
            $11 + $12, $11, $12, $13 / 100, $14 / 100, $16 }'
    echo "irq $name $(awk 'NR == FNR { a[$1] = $2; next } $2 != a[$1] { printf "%s=%d ", $1, $2 - a[$1] }' \
        /tmp/irq.0 /tmp/irq.1)migrations=$MIGRATIONS"
    echo "periods $name $(for f in /tmp/rtapp/rt-*.log; do
        n=$(basename "$f" .log); printf '%s=%d ' "${n#rt-}" "$(grep -vc '^#' "$f")"; done)"
    awk -v s="$name" 'NR == FNR { c[$1] = $2; t[$1] = $3; next }
        ($2 - c[$1]) > 0 { n = $2 - c[$1]; d = $3 - t[$1]; all += d
            printf "bpf %s %s runs=%d ms=%d us_per_run=%.1f\n", s, $1, n, d / 1e6, d / n / 1e3 }
        END { if (all) printf "bpf %s all ms=%d\n", s, all / 1e6 }' /tmp/bpf.0 /tmp/bpf.1
    [ -s /tmp/counters.1 ] && echo "counters $name $(awk 'NR == FNR { b[$1] = $2; next }
        ($1 in b) && $2 != b[$1] { printf "%s=%d ", $1, $2 - b[$1] }' /tmp/counters.0 /tmp/counters.1)"
    rm -f /tmp/counters.0 /tmp/counters.1
}

sysctl -qw kernel.bpf_stats_enabled=1
# Under EEVDF: build_tree's untimed first build warms the compilers' files for every scheduler.
build_tree $((8 * N)) || return 1
for round in $(seq 1 "${ROUNDS:-1}"); do
    # shellcheck disable=SC2086
    for s in $(rotation "$round" $SCHEDS); do
        echo "== $s (round $round)" >&2
        attach_for_breakdown "$s" || continue
        build_breakdown "$s"
        detach_for_breakdown
    done
done
