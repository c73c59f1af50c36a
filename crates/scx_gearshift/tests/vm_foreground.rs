//! The foreground boost in the sched_ext VM: two identical 60 Hz frame tasks share a CPU among
//! CPU hogs, each in a cgroup of its own; once the control socket names one cgroup the
//! foreground, its frames are done clearly sooner after their period starts than the other's
//! (and so miss fewer deadlines). With no foreground nothing is boosted. Ignored by plain
//! `cargo test`; `tools/test.sh` runs them.

mod common;

use common::{field, number, run};

/// Measured runs with the foreground set, and the seconds each lasts. Each run starts both
/// frame tasks afresh, at a random phase to each other, and which one wakes first decides much
/// of a run (a frame woken well before the other may keep the CPU, boosted or not): several
/// short runs average over phases where a few long ones would each depend on one.
const RUNS: usize = 6;
const RUN_SECS: usize = 5;

#[test]
#[ignore = "boots the sched_ext VM; run by tools/test.sh"]
fn the_foreground_cgroups_frames_are_done_sooner() {
    let body = format!(
        r#"
N=$(nproc)
{desktop}
{frames}
cd /tmp
rtapp_calibrate || exit 91
start_sched --control-socket /tmp/gs.sock
CG=/sys/fs/cgroup
mkdir -p $CG/gs-fg $CG/gs-bg
"$STRESS_NG" --cpu $((2 * N)) --cpu-method loop -t 600 -q & HOGS=$!
sleep 1
b0=$(stat nr_foreground_boosts)
frame_pair none 8
echo "boosts_without_foreground=$(( $(stat nr_foreground_boosts) - b0 ))"
echo "foreground_set=$(set_foreground "$(command stat -c %i $CG/gs-fg)")"
echo "foreground_id=$(command stat -c %i $CG/gs-fg)"
echo "foreground_read_back=$(stat foreground_cgroup_id)"
b1=$(stat nr_foreground_boosts)
for i in $(seq 1 {runs}); do frame_pair "run$i" {run_secs}; done
echo "boosts_with_foreground=$(( $(stat nr_foreground_boosts) - b1 ))"
echo "foreground_cleared=$(set_foreground 0)"
b2=$(stat nr_foreground_boosts)
frame_pair cleared 3
echo "boosts_after_clearing=$(( $(stat nr_foreground_boosts) - b2 ))"
kill $HOGS; wait $HOGS 2>/dev/null
echo "state_after=$(state)"
stop_sched
"#,
        desktop = gearshift_testkit::desktop::DESKTOP_GUEST,
        frames = FRAME_PAIR,
        runs = RUNS,
        run_secs = RUN_SECS,
    );
    let out = run(2, &body);
    assert_eq!(out.status, 0, "the script ran to the end");
    assert_eq!(
        number(&out, "boosts_without_foreground"),
        0.0,
        "no foreground, no boost"
    );
    let id = field(&out, "foreground_id").expect("the cgroup's id");
    assert_eq!(
        field(&out, "foreground_set"),
        Some(id),
        "set-foreground confirms the id"
    );
    assert_eq!(
        field(&out, "foreground_read_back"),
        Some(id),
        "stats read it back"
    );
    assert!(
        number(&out, "boosts_with_foreground") > 0.0,
        "the foreground task's enqueues were boosted"
    );
    assert_eq!(field(&out, "foreground_cleared"), Some("0"));
    assert_eq!(
        number(&out, "boosts_after_clearing"),
        0.0,
        "a foreground of 0 boosts no one"
    );
    // The frame's completion time (wakeup latency plus the wall time of its work) is the
    // measure, not the deadline misses: on a slow host both tasks miss nearly every deadline
    // (the work alone outgrows the period when the two vCPUs share one host thread), and a
    // count that saturates can no longer tell who went first. Misses are printed beside it.
    let (mut fg, mut bg, mut fg_misses, mut bg_misses) = (0.0, 0.0, 0.0, 0.0);
    for i in 1..=RUNS {
        let run = format!("run{i}");
        assert!(number(&out, &format!("{run}_fg_periods")) > 0.0);
        assert!(number(&out, &format!("{run}_bg_periods")) > 0.0);
        fg += number(&out, &format!("{run}_fg_done_us"));
        bg += number(&out, &format!("{run}_bg_done_us"));
        fg_misses += number(&out, &format!("{run}_fg_misses"));
        bg_misses += number(&out, &format!("{run}_bg_misses"));
    }
    eprintln!(
        "mean frame completion over {RUNS} runs: foreground {:.0} us, background {:.0} us; \
         misses {fg_misses} and {bg_misses}",
        fg / RUNS as f64,
        bg / RUNS as f64
    );
    assert!(
        bg_misses >= 10.0,
        "the load makes the background task miss frames ({bg_misses}), so the comparison means something"
    );
    // The bound: with no foreground the two frames measure 0.92-1.15 of each other in single
    // runs of 3-8 s (this test's `none` and `cleared` runs), about 1.0 over several; boosted,
    // 0.61-0.86 summed over every host and starvation window measured (docs/benchmarks.md,
    // fifteenth pass). The boost acts mostly on the frame's run, which it shortens by
    // preempting the other frame, while both still wait on the same slow vCPU, so completion
    // times differ less than misses do.
    assert!(
        fg <= 0.9 * bg,
        "the foreground frames are done clearly sooner: {fg} vs {bg} us (sums over {RUNS} runs)"
    );
    assert_eq!(field(&out, "state_after"), Some("enabled"), "never ejected");
    assert_eq!(field(&out, "sched_exit"), Some("0"));
}

/// Guest functions: two identical 60 Hz frame tasks, one rt-app process each, in cgroups
/// gs-fg and gs-bg, pinned to the same CPU so that they compete for it.
const FRAME_PAIR: &str = r#"
FRAME_PERIOD_US=16667
FRAME_WORK_US=6000
FRAME_CPU=$((N - 1))
# Sends set-foreground and prints the cgroup id the answer confirms.
set_foreground() {
    /usr/bin/python3 -c 'import json, socket, sys
s = socket.socket(socket.AF_UNIX); s.connect("/tmp/gs.sock")
s.sendall(json.dumps({"request": "set-foreground", "cgroup_id": int(sys.argv[1])}).encode() + b"\n")
a = json.loads(s.makefile().readline()); print(a["cgroup_id"] if a["response"] == "foreground" else a)' "$1"
}
frame_json() {
    printf '{ "global": { "duration": %s, "calibration": %s, "default_policy": "SCHED_OTHER",\n' \
        "$2" "$RTAPP_NS_PER_LOOP"
    printf '    "logdir": "/tmp/frames", "log_basename": "%s", "log_size": 4 },\n' "$1"
    printf '  "tasks": { "frame": { "loop": -1, "run": %s, "timer": { "ref": "unique", "period": %s } } } }\n' \
        "$FRAME_WORK_US" "$FRAME_PERIOD_US"
}
# Runs both frame tasks for $2 seconds and prints, as $1_fg_… and $1_bg_…, the periods run,
# the deadlines missed (periods not completed on time, skipped ones included) and the mean
# completion time of a frame in microseconds (rt-app's wakeup latency plus its run's wall time).
frame_pair() {
    local label=$1 secs=$2 t pids="" log
    rm -rf /tmp/frames && mkdir -p /tmp/frames
    for t in fg bg; do
        frame_json "$t" "$secs" > "/tmp/frames-$t.json"
        taskset -c "$FRAME_CPU" sh -c "echo \$\$ > $CG/gs-$t/cgroup.procs && exec rt-app /tmp/frames-$t.json" \
            > "/tmp/frames-$t.out" 2>&1 &
        pids="$pids $!"
    done
    wait $pids
    for t in fg bg; do
        log=$(ls /tmp/frames/"$t"-frame-*.log 2>/dev/null | head -1)
        [ -n "$log" ] || { echo "no rt-app log for $t"; cat "/tmp/frames-$t.out"; exit 93; }
        awk -v m="${label}_$t" -v want=$((secs * 1000000 / FRAME_PERIOD_US)) '
            # Columns: idx perf run period start end rel_st slack c_duration c_period wu_lat.
            !/^#/ && NF >= 11 { n++; if ($8 >= 0) ok++; done += $3 + $11 }
            END {
                miss = want - ok; if (miss < 0) miss = 0
                printf "%s_periods=%d\n%s_misses=%d\n", m, n, m, miss
                printf "%s_done_us=%d\n", m, n ? done / n : 0
            }' "$log"
    done
}
"#;
