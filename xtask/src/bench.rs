//! Benchmarks. Timing in the emulated VM is noisy, so results are ratios against EEVDF (the
//! kernel's default scheduler) measured in the same VM run, never absolute targets.
//!
//! - [`vm`]: hackbench, `perf bench sched messaging`, interactive command latency under 2x
//!   overcommit, cyclictest, CPU use with N hogs, and what a desktop user feels: periodic
//!   tasks with deadlines (rt-app: a 60 Hz and a 144 Hz frame, an audio callback) under CPU
//!   hogs, a message storm and a parallel build, and CPU use and wakeups under light load
//!   (desktop_guest.sh), and the CPU shares nice and cgroup cpu.weight give — for EEVDF, scx_gearshift's modes and any other scheduler binaries
//!   given, repeated; the table shows medians with the range.
//! - [`policy`]: instructions (callgrind) and allocations per task of the user-space policy.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{bail, Context, Result};

use gearshift_testkit::cache::Cache;
use gearshift_testkit::desktop::DESKTOP_GUEST;
use gearshift_testkit::vm::VmConfig;
use gearshift_testkit::Kernel;

use crate::results::{median, parse_results, render_table, without_results, Results};
use crate::sizing::{self, Sizing};

/// The workspace's target directory.
pub fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../target"))
}

fn cargo_build_release(args: &[&str]) -> Result<()> {
    let status = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
        .args(["build", "--release", "--locked", "-q"])
        .args(args)
        .status()
        .context("running cargo build")?;
    if !status.success() {
        bail!("cargo build --release {} failed", args.join(" "));
    }
    Ok(())
}

/// What one `cargo xtask bench` run measures.
#[derive(Debug, Clone)]
pub struct BenchPlan {
    pub cpus: u32,
    /// Repetitions of every scheduler's workloads (interleaved: scheduler by scheduler, then
    /// again, EEVDF first and the others taking turns at going first), so drift in the
    /// emulated machine spreads over all of them.
    pub reps: u32,
    /// How long the periodic tasks run under each background load.
    pub periodic_secs: u32,
    /// Other sched_ext scheduler binaries to compare.
    pub others: Vec<PathBuf>,
    /// The periodic tasks' background loads (desktop_guest.sh's names); empty: all.
    pub loads: Vec<String>,
    /// Only hackbench and the periodic tasks.
    pub desktop_only: bool,
    /// Trace the periodic tasks' timer lateness and scheduling delay.
    pub trace: bool,
    /// Which of [`SCHEDULER_NAMES`] run; empty: [`BUILTIN_SCHEDULERS`].
    pub builtin: Vec<String>,
    /// Size the periodic tasks' work afresh rather than reuse the sizing kept for this many
    /// vCPUs (and keep the new one).
    pub resize: bool,
    /// The guest's clock counts instructions (`VmConfig::instruction_clock`).
    pub instruction_clock: bool,
}

/// The guest script of a benchmark run: desktop_guest.sh's functions, then bench_guest.sh.
pub fn guest_script(
    sched: &Path,
    stress_ng: &Path,
    plan: &BenchPlan,
    schedulers: &[String],
    sizing: Option<&Sizing>,
) -> String {
    let script = format!("{DESKTOP_GUEST}\n{}", include_str!("bench_guest.sh"));
    script
        .replace("@SCHED@", &sched.display().to_string())
        .replace("@STRESS_NG@", &stress_ng.display().to_string())
        .replace("@NCPU@", &plan.cpus.to_string())
        .replace("@REPS@", &plan.reps.to_string())
        .replace("@PERIODIC_SECS@", &plan.periodic_secs.to_string())
        .replace("@SCHEDULERS@", &schedulers.join(" "))
        .replace("@LOADS@", &plan.loads.join(" "))
        .replace("@DESKTOP_ONLY@", if plan.desktop_only { "1" } else { "0" })
        .replace("@TRACE@", if plan.trace { "1" } else { "0" })
        .replace("@SIZING@", &sizing.map(Sizing::to_line).unwrap_or_default())
}

/// The kernel's default scheduler and gearshift's modes, as bench_guest.sh names them: what
/// runs when `--schedulers` names none.
pub const BUILTIN_SCHEDULERS: [&str; 5] = [
    "eevdf",
    "gearshift",
    "gearshift-nopreempt",
    "gearshift-fifo",
    "gearshift-lowpower",
];

/// Every name `--schedulers` takes: the built-in ones, and references that run only when
/// named. `eevdf-nohrtick` is EEVDF with its high-resolution slice-end timer off (the HRTICK
/// scheduler feature), so its slices end at a tick as a sched_ext scheduler's do: beside
/// EEVDF it shows what that timer alone is worth in the machine at hand. `gearshift-again`
/// is the same build as `gearshift`, run as a column of its own: an A/A control, whose
/// distance from `gearshift` is what the run cannot tell apart (identical binaries' medians
/// of three differed by 2x in a build's time and up to 14x in a miss rate, on a busy host).
pub const SCHEDULER_NAMES: [&str; 7] = [
    "eevdf",
    "eevdf-nohrtick",
    "gearshift",
    "gearshift-again",
    "gearshift-nopreempt",
    "gearshift-fifo",
    "gearshift-lowpower",
];

/// The schedulers of `SCHEDULER_NAMES` a run measures, in that order: those named, or the
/// built-in ones when none is.
pub fn selected_schedulers(named: &[String]) -> Vec<String> {
    SCHEDULER_NAMES
        .iter()
        .filter(|s| {
            if named.is_empty() {
                BUILTIN_SCHEDULERS.contains(s)
            } else {
                named.iter().any(|n| n == *s)
            }
        })
        .map(|s| (*s).to_owned())
        .collect()
}

/// The schedulers to compare, as absolute paths the guest can run (it sees the host's files
/// at the same paths, from another working directory). A name that is not a file is an
/// error here, before the VM boots: the guest would only report that it "did not attach"
/// in every repetition, and the table would show an empty column after an hour's run.
pub fn resolve_others(others: &[PathBuf]) -> Result<Vec<PathBuf>> {
    others
        .iter()
        .map(|other| {
            let path = std::fs::canonicalize(other).with_context(|| {
                format!(
                    "--compare {}: no such scheduler binary (a path to one; \
                     --with-peers builds the pinned peers)",
                    other.display()
                )
            })?;
            if !path.is_file() {
                bail!("--compare {}: not a file", other.display());
            }
            Ok(path)
        })
        .collect()
}

/// Runs the VM benchmark.
pub fn vm(cache: &Cache, kernel: &Kernel, plan: &BenchPlan) -> Result<String> {
    cargo_build_release(&["-p", "scx_gearshift", "--bin", "scx_gearshift"])?;
    let sched = target_dir().join("release/scx_gearshift");
    let stress_ng = gearshift_testkit::tools::stress_ng(cache)?;
    let cpus = plan.cpus;
    let mut schedulers = selected_schedulers(&plan.builtin);
    schedulers.extend(
        resolve_others(&plan.others)?
            .iter()
            .map(|p| p.display().to_string()),
    );
    let sizing_path = sizing::cache_path(cache, cpus, plan.instruction_clock);
    let kept = if plan.resize {
        None
    } else {
        sizing::load(&sizing_path)?
    };
    match &kept {
        Some(_) => eprintln!(
            "bench: periodic tasks' work as kept in {} (--resize sizes it afresh)",
            sizing_path.display()
        ),
        None => eprintln!(
            "bench: sizing the periodic tasks' work in the guest; kept in {} for later runs",
            sizing_path.display()
        ),
    }
    let script = guest_script(&sched, &stress_ng, plan, &schedulers, kept.as_ref());
    let cfg = VmConfig {
        cpus,
        memory_mib: 2048,
        timeout: std::time::Duration::from_secs(4 * 3600),
        instruction_clock: plan.instruction_clock,
        // An hour or more: which scheduler, repetition and load the guest is at.
        progress_prefixes: &["== ", "desktop_suite:"],
        ..VmConfig::default()
    };
    eprintln!(
        "bench: {} in one VM run ({cpus} vCPUs, {} repetitions, {} clock)",
        schedulers.join(", "),
        plan.reps,
        if plan.instruction_clock {
            "instruction-counting"
        } else {
            "host"
        }
    );
    let out = gearshift_testkit::vm::run(cache, kernel, &cfg, &script)?;
    if !out.success() {
        bail!("the benchmark failed in the guest:\n{}", out.output);
    }
    if kept.is_none() {
        let sized = Sizing::from_guest_output(&out.output)
            .context("the guest printed no sizing of the periodic tasks")??;
        sizing::store(&sizing_path, &sized)?;
    }
    // Other schedulers are named by their binary's file name.
    let mut output = out.output.clone();
    let mut names = Vec::new();
    for s in &schedulers {
        let name = Path::new(s)
            .file_name()
            .map_or(s.clone(), |n| n.to_string_lossy().into_owned());
        if name != *s {
            output = output.replace(&format!(" {s} "), &format!(" {name} "));
        }
        names.push(name);
        if s == "eevdf" {
            // The periodic tasks as real-time tasks, measured beside EEVDF (bench_guest.sh).
            names.push("eevdf-rt".to_owned());
        }
    }
    let samples = parse_samples(&output);
    let results = parse_results(&output);
    for name in without_results(&results, &names) {
        eprintln!("bench: warning: {name} has no results: it did not attach, or was ejected in every repetition");
    }
    let plot = target_dir().join(format!("bench-latency-{cpus}cpu.png"));
    match plot_latency(cache, &samples, &results, &plot) {
        Ok(()) => eprintln!(
            "bench: latency distributions and deadline misses plotted in {} and {}",
            plot.display(),
            misses_png(&plot).display()
        ),
        Err(e) => eprintln!("bench: no plot ({e:#})"),
    }
    Ok(render_table(&results, &names))
}

/// Where the deadline-miss chart goes, next to the latency plot.
fn misses_png(latency_png: &Path) -> PathBuf {
    latency_png.with_file_name(
        latency_png
            .file_name()
            .map(|n| n.to_string_lossy().replace("latency", "misses"))
            .unwrap_or_else(|| "bench-misses.png".into()),
    )
}

/// `samples <scheduler> <metric> v1 v2 …` lines from the guest.
pub fn parse_samples(output: &str) -> BTreeMap<String, Vec<f64>> {
    output
        .lines()
        .filter_map(|l| l.strip_prefix("samples "))
        .filter_map(|rest| {
            let mut f = rest.split_whitespace();
            let sched = f.next()?;
            let metric = f.next()?;
            let values = f.filter_map(|v| v.parse().ok()).collect();
            Some((format!("{sched} {metric}"), values))
        })
        .collect()
}

/// Writes PNGs of the latency distributions (CDFs) and of the deadline misses (median %, per
/// periodic task, load and scheduler), using matplotlib from the bootstrap's venv via
/// `tools/plot_latency.py`.
fn plot_latency(
    cache: &Cache,
    samples: &BTreeMap<String, Vec<f64>>,
    results: &Results,
    png: &Path,
) -> Result<()> {
    let csv = png.with_extension("csv");
    let mut text = String::from("series,value\n");
    for (series, values) in samples {
        for v in values {
            text.push_str(&format!("{series},{v}\n"));
        }
    }
    std::fs::write(&csv, text).context("writing the samples")?;
    let misses_csv = png.with_extension("misses.csv");
    let mut text = String::from("metric,scheduler,value\n");
    for (metric, by_sched) in results.iter().filter(|(m, _)| m.ends_with("_miss_pct")) {
        for (sched, values) in by_sched {
            if let Some(v) = median(values) {
                text.push_str(&format!("{metric},{sched},{v}\n"));
            }
        }
    }
    std::fs::write(&misses_csv, text).context("writing the deadline misses")?;
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tools/plot_latency.py");
    let status = Command::new(cache.root().join("venv/bin/python"))
        .arg(script)
        .arg(&csv)
        .arg(png)
        .arg(&misses_csv)
        .arg(misses_png(png))
        .status()
        .context("running tools/plot_latency.py")?;
    if !status.success() {
        bail!("tools/plot_latency.py failed");
    }
    Ok(())
}

/// The sched_ext peers compared with `--with-peers`, pinned: crates.io versions.
pub const PEERS: &[(&str, &str)] = &[
    ("scx_bpfland", "1.1.4"),
    ("scx_cosmos", "1.1.7"),
    ("scx_lavd", "1.1.4"),
    ("scx_flash", "1.1.4"),
    ("scx_rustland", "1.1.4"),
];

/// Builds the peers from crates.io into the cache (slow: minutes each, once) and returns
/// their binaries, for comparing.
pub fn install_peers(cache: &Cache) -> Result<Vec<PathBuf>> {
    let mut bins = Vec::new();
    for (i, (krate, version)) in PEERS.iter().enumerate() {
        // One directory per version, so a new pin is built instead of an old binary reused.
        let root = cache
            .root()
            .join("peers")
            .join(format!("{krate}-{version}"));
        let bin = root.join("bin").join(krate);
        if !bin.is_file() {
            eprintln!(
                "bench: building peer {}/{}: {krate} {version} from crates.io (takes a while)",
                i + 1,
                PEERS.len()
            );
            let status = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
                .args(["install", "--locked", "--version", version, "--root"])
                .arg(&root)
                .arg(krate)
                .env("BPF_CLANG", "clang-19")
                .status()
                .context("running cargo install")?;
            if !status.success() {
                bail!("cargo install {krate} {version} failed");
            }
        }
        bins.push(bin);
    }
    Ok(bins)
}

/// Instructions per task: the difference between two callgrind runs of the replay example with
/// different event counts, counting only inside its measured function.
pub fn policy() -> Result<String> {
    cargo_build_release(&["-p", "scx_gearshift", "--example", "policy_replay"])?;
    let bin = target_dir().join("release/examples/policy_replay");
    let run = |events: u64| -> Result<(u64, String)> {
        let out = Command::new("valgrind")
            .args(["--tool=callgrind", "--callgrind-out-file=/dev/null"])
            .arg("--toggle-collect=*policy_replay::replay*")
            .arg(&bin)
            .args(["--events", &events.to_string()])
            .output()
            .context("running valgrind (apt install valgrind)")?;
        let stderr = String::from_utf8_lossy(&out.stderr);
        let collected = stderr
            .lines()
            .find_map(|l| l.split("Collected :").nth(1))
            .and_then(|v| v.trim().parse().ok())
            .context("no instruction count in valgrind's output")?;
        Ok((
            collected,
            String::from_utf8_lossy(&out.stdout).trim().to_owned(),
        ))
    };
    let (small, _) = run(100_000)?;
    let (large, report) = run(300_000)?;
    let per_task = (large - small) as f64 / 200_000.0;
    Ok(format!("{report}\ninstructions_per_task={per_task:.1}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn samples_are_grouped_by_scheduler_and_metric() {
        let out =
            "samples eevdf uname_us 10 20 x 30\nsamples gearshift uname_us 5\nresult eevdf a 1\n";
        let s = parse_samples(out);
        assert_eq!(s["eevdf uname_us"], vec![10.0, 20.0, 30.0]);
        assert_eq!(s["gearshift uname_us"], vec![5.0]);
        assert_eq!(s.len(), 2);
    }

    /// The order desktop_guest.sh's rotation() gives repetition `rep` of `schedulers`.
    fn rotation(rep: u32, schedulers: &str) -> String {
        let out = std::process::Command::new("bash")
            .arg("-c")
            .arg(format!("{DESKTOP_GUEST}\nrotation {rep} {schedulers}"))
            .output()
            .expect("running bash");
        String::from_utf8_lossy(&out.stdout).trim().to_owned()
    }

    #[test]
    fn references_run_only_when_named_and_in_a_fixed_order() {
        let all = selected_schedulers(&[]);
        assert_eq!(all, BUILTIN_SCHEDULERS.map(String::from).to_vec());
        assert!(!all.iter().any(|s| s == "eevdf-nohrtick"));
        assert!(!all.iter().any(|s| s == "gearshift-again"));
        let named = selected_schedulers(&[
            "gearshift-again".into(),
            "gearshift".into(),
            "eevdf-nohrtick".into(),
            "eevdf".into(),
        ]);
        assert_eq!(
            named,
            ["eevdf", "eevdf-nohrtick", "gearshift", "gearshift-again"]
        );
    }

    #[test]
    fn a_scheduler_to_compare_must_be_a_file_and_is_named_by_its_absolute_path() {
        let err = resolve_others(&["scx_cosmos-1.1.7".into()]).unwrap_err();
        assert!(
            format!("{err:#}").contains("--compare scx_cosmos-1.1.7"),
            "{err:#}"
        );
        let dir = std::env::temp_dir();
        assert!(
            resolve_others(std::slice::from_ref(&dir)).is_err(),
            "a directory is not a scheduler"
        );
        let here = std::env::current_dir().unwrap();
        let relative = Path::new("Cargo.toml");
        assert!(
            here.join(relative).is_file(),
            "tests run from the crate's directory"
        );
        assert_eq!(
            resolve_others(&[relative.into()]).unwrap(),
            [std::fs::canonicalize(here.join(relative)).unwrap()]
        );
    }

    #[test]
    fn eevdf_runs_first_and_the_others_take_turns_going_first() {
        assert_eq!(rotation(1, "eevdf a b c"), "eevdf a b c");
        assert_eq!(rotation(2, "eevdf a b c"), "eevdf b c a");
        assert_eq!(rotation(3, "eevdf a b c"), "eevdf c a b");
        assert_eq!(rotation(4, "eevdf a b c"), "eevdf a b c");
        // Without EEVDF every scheduler takes its turn; one alone stays.
        assert_eq!(rotation(2, "a b"), "b a");
        assert_eq!(rotation(5, "eevdf"), "eevdf");
    }

    #[test]
    fn the_guest_script_has_the_desktop_workloads_and_every_placeholder_filled() {
        let plan = BenchPlan {
            cpus: 4,
            reps: 3,
            periodic_secs: 20,
            others: Vec::new(),
            loads: vec!["hogs".into(), "mixed".into()],
            desktop_only: true,
            trace: false,
            builtin: Vec::new(),
            resize: false,
            instruction_clock: false,
        };
        let sizing = Sizing::parse("967 frame60:3443 audio:436").unwrap();
        let script = guest_script(
            Path::new("/s"),
            Path::new("/stress"),
            &plan,
            &["eevdf".into(), "gearshift".into()],
            Some(&sizing),
        );
        for placeholder in [
            "@SCHED@",
            "@STRESS_NG@",
            "@NCPU@",
            "@REPS@",
            "@PERIODIC_SECS@",
            "@SCHEDULERS@",
            "@LOADS@",
            "@DESKTOP_ONLY@",
            "@TRACE@",
            "@SIZING@",
        ] {
            assert!(
                !script.contains(placeholder),
                "{placeholder} left in the script"
            );
        }
        assert!(script.contains("desktop_suite \"$s\" \"$PERIODIC_SECS\""));
        assert!(script.contains("REPS=3") && script.contains("PERIODIC_SECS=20"));
        assert!(script.contains("for s in $(rotation \"$rep\" eevdf gearshift); do"));
        assert!(
            script.contains("DESKTOP_LOADS='hogs mixed'"),
            "only the loads asked for"
        );
        assert!(script.contains("DESKTOP_ONLY=1") && script.contains("LATENCY_TRACE=0"));
        assert!(
            script.contains("SIZING='967 frame60:3443 audio:436'"),
            "the kept sizing is handed to the guest"
        );
        assert!(
            script.contains("PERIODIC_POLICY=SCHED_FIFO SAMPLES=0 desktop_suite eevdf-rt"),
            "the real-time reference is measured beside EEVDF"
        );
    }
}
