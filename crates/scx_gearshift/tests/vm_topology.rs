//! NUMA placement, in a sched_ext VM with two nodes. Ignored by plain `cargo test`;
//! `tools/test.sh` runs it.

mod common;

use std::path::PathBuf;
use std::process::Command;

use common::{field, run_with};
use gearshift_testkit::VmConfig;

/// A job of two CPU-bound threads (main and one more) running for argv[1] seconds.
const TWO_THREAD_JOB: &str = r#"
#include <pthread.h>
#include <stdlib.h>
#include <time.h>
static volatile int stop;
static void *spin(void *arg) { volatile unsigned long x = 0; while (!stop) x++; return arg; }
int main(int argc, char **argv) {
    pthread_t t;
    time_t end = time(NULL) + (argc > 1 ? atoi(argv[1]) : 10);
    volatile unsigned long x = 0;
    pthread_create(&t, NULL, spin, NULL);
    while (time(NULL) < end) x++;
    stop = 1;
    pthread_join(t, NULL);
    return 0;
}
"#;

/// Builds the job on the host; the guest sees the host's file system.
fn two_thread_job() -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    let src = dir.join("two_thread_job.c");
    let bin = dir.join("two_thread_job");
    std::fs::write(&src, TWO_THREAD_JOB).unwrap();
    let st = Command::new("cc")
        .args(["-O2", "-pthread", "-o"])
        .arg(&bin)
        .arg(&src)
        .status()
        .expect("cc");
    assert!(st.success(), "compiling the two-thread job");
    bin
}

#[test]
#[ignore = "boots the sched_ext VM; run by tools/test.sh"]
fn threads_of_a_job_stay_on_one_node_while_the_other_is_idle() {
    let job = two_thread_job();
    let out = run_with(
        VmConfig {
            cpus: 4,
            numa_nodes: 2,
            ..VmConfig::default()
        },
        &format!(
            r#"
JOB='{job}'
echo "nodes=$(ls -d /sys/devices/system/node/node[0-9]* | wc -l)"
# Node of each CPU, by CPU id.
NODE=()
for c in 0 1 2 3; do n=$(basename /sys/devices/system/cpu/cpu$c/node[0-9]*); NODE[$c]=${{n#node}}; done
# The sampler uses shell builtins only (a read with a timeout on a FIFO is its sleep): forking
# cat, awk and sleep twice a second would itself fill a node's CPUs for long stretches of the
# slow guest and push the job's threads away, measuring the sampler rather than the placement.
mkfifo /tmp/tick; exec 3<>/tmp/tick
pause() {{ read -r -t "$1" -u 3 || true; }}
sample() {{
    local out="" f line fields
    for f in /proc/$1/task/*/stat; do
        read -r line < "$f" || continue
        read -r -a fields <<< "${{line##*) }}"
        # Field 39 of stat (the CPU it last ran on) is the 37th after "pid (comm) ".
        out+="${{fields[36]}}:${{NODE[${{fields[36]}}]}} "
    done
    echo "sample=$out"
}}
start_sched --control-socket /tmp/gs.sock
# Each round starts the job afresh, then samples the CPU of its threads.
for round in 1 2 3; do
    "$JOB" 60 & P=$!
    pause 1.5
    for i in $(seq 1 10); do
        sample $P
        pause 0.5
    done
    kill $P
    while kill -0 $P 2>/dev/null; do pause 0.2; done
done
echo "state=$(state)"
stop_sched
"#,
            job = job.display()
        ),
    );
    assert_eq!(out.status, 0);
    assert_eq!(field(&out, "nodes"), Some("2"), "the VM has two NUMA nodes");
    assert_eq!(field(&out, "state"), Some("enabled"));
    // Each sample: "cpu:node" of every thread of the job.
    let nodes: Vec<Vec<&str>> = out
        .output
        .lines()
        .filter_map(|l| l.strip_prefix("sample="))
        .map(|l| {
            l.split_whitespace()
                .filter_map(|t| t.split(':').nth(1))
                .collect()
        })
        .filter(|n: &Vec<&str>| n.len() == 2)
        .collect();
    let samples = nodes.len();
    let same = nodes.iter().filter(|n| n[0] == n[1]).count();
    eprintln!("threads on one node in {same} of {samples} samples");
    assert!(samples >= 24, "enough samples: {samples}");
    // Placed without regard to nodes, two threads on four CPUs share a node a third of the
    // time. With a second VM on the host (as tools/test-vm.sh runs them) the slowed guest's own
    // work pushes a thread to the idle node now and then, by design (a task leaves home when
    // every CPU there runs something): 23-25 of 30 samples there, before and after c7c7c8e,
    // against 27 or more alone. 70 % keeps the test far from chance and clear of that.
    assert!(
        same * 10 >= samples * 7,
        "threads on one node in only {same} of {samples} samples"
    );
}
