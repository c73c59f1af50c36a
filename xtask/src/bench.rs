//! Benchmarks. Timing in the emulated VM is noisy, so results are ratios against EEVDF (the
//! kernel's default scheduler) measured in the same VM run, never absolute targets.
//!
//! - [`vm`]: hackbench, `perf bench sched messaging`, interactive command latency under 2x
//!   overcommit, cyclictest, CPU use with N hogs — for EEVDF, scx_gearshift and any other
//!   scheduler binaries given.
//! - [`policy`]: instructions (callgrind) and allocations per task of the user-space policy.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{bail, Context, Result};

use crate::cache::Cache;
use crate::vm::VmConfig;

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

/// `result <scheduler> <metric> <value>` lines from the guest.
pub fn parse_results(output: &str) -> BTreeMap<String, BTreeMap<String, f64>> {
    let mut table: BTreeMap<String, BTreeMap<String, f64>> = BTreeMap::new();
    for line in output.lines() {
        let mut f = line.split_whitespace();
        if f.next() != Some("result") {
            continue;
        }
        if let (Some(sched), Some(metric), Some(Ok(value))) =
            (f.next(), f.next(), f.next().map(str::parse::<f64>))
        {
            table
                .entry(metric.to_owned())
                .or_default()
                .insert(sched.to_owned(), value);
        }
    }
    table
}

/// A markdown table: one row per metric, a column per scheduler, and each one's ratio to EEVDF.
pub fn render_table(
    table: &BTreeMap<String, BTreeMap<String, f64>>,
    schedulers: &[String],
) -> String {
    let mut out = String::from("| metric |");
    for s in schedulers {
        out.push_str(&format!(" {s} |"));
    }
    for s in schedulers.iter().filter(|s| *s != "eevdf") {
        out.push_str(&format!(" {s} / eevdf |"));
    }
    out.push_str("\n|---|");
    let ratio_cols = schedulers.iter().filter(|s| *s != "eevdf").count();
    out.push_str(&"---:|".repeat(schedulers.len() + ratio_cols));
    out.push('\n');
    for (metric, values) in table {
        out.push_str(&format!("| {metric} |"));
        for s in schedulers {
            match values.get(s) {
                Some(v) => out.push_str(&format!(" {v:.2} |")),
                None => out.push_str(" – |"),
            }
        }
        for s in schedulers.iter().filter(|s| *s != "eevdf") {
            match (values.get(s), values.get("eevdf")) {
                (Some(v), Some(base)) if *base > 0.0 => {
                    out.push_str(&format!(" {:.2}× |", v / base))
                }
                _ => out.push_str(" – |"),
            }
        }
        out.push('\n');
    }
    out
}

/// Runs the VM benchmark; `others` are extra sched_ext scheduler binaries to compare.
pub fn vm(cache: &Cache, kernel: &crate::Kernel, cpus: u32, others: &[PathBuf]) -> Result<String> {
    cargo_build_release(&["-p", "scx_gearshift", "--bin", "scx_gearshift"])?;
    let sched = target_dir().join("release/scx_gearshift");
    let stress_ng = crate::tools::stress_ng(cache)?;
    let mut schedulers: Vec<String> = [
        "eevdf",
        "gearshift",
        "gearshift-nopreempt",
        "gearshift-fifo",
        "gearshift-lowpower",
    ]
    .iter()
    .map(|s| (*s).to_owned())
    .collect();
    schedulers.extend(others.iter().map(|p| p.display().to_string()));
    let script = include_str!("bench_guest.sh")
        .replace("@SCHED@", &sched.display().to_string())
        .replace("@STRESS_NG@", &stress_ng.display().to_string())
        .replace("@NCPU@", &cpus.to_string())
        .replace("@SCHEDULERS@", &schedulers.join(" "));
    let cfg = VmConfig {
        cpus,
        memory_mib: 2048,
        timeout: std::time::Duration::from_secs(3600),
        ..VmConfig::default()
    };
    eprintln!(
        "bench: {} in one VM run ({cpus} vCPUs)",
        schedulers.join(", ")
    );
    let out = crate::vm::run(cache, kernel, &cfg, &script)?;
    if !out.success() {
        bail!("the benchmark failed in the guest:\n{}", out.output);
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
    }
    let samples = parse_samples(&output);
    let plot = target_dir().join("bench-latency.png");
    match plot_latency(cache, &samples, &plot) {
        Ok(()) => eprintln!("bench: latency distributions plotted in {}", plot.display()),
        Err(e) => eprintln!("bench: no plot ({e:#})"),
    }
    Ok(render_table(&parse_results(&output), &names))
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

/// Writes a PNG of the latency distributions (CDFs), using matplotlib from the bootstrap's
/// venv via `tools/plot_latency.py`.
fn plot_latency(cache: &Cache, samples: &BTreeMap<String, Vec<f64>>, png: &Path) -> Result<()> {
    let csv = png.with_extension("csv");
    let mut text = String::from("series,value\n");
    for (series, values) in samples {
        for v in values {
            text.push_str(&format!("{series},{v}\n"));
        }
    }
    std::fs::write(&csv, text).context("writing the samples")?;
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tools/plot_latency.py");
    let status = Command::new(cache.root().join("venv/bin/python"))
        .arg(script)
        .arg(&csv)
        .arg(png)
        .status()
        .context("running tools/plot_latency.py")?;
    if !status.success() {
        bail!("tools/plot_latency.py failed");
    }
    Ok(())
}

/// Builds scx_rustland and scx_bpfland from crates.io into the cache (slow: minutes each) and
/// returns their binaries, for comparing.
pub fn install_peers(cache: &Cache) -> Result<Vec<PathBuf>> {
    let root = cache.root().join("peers");
    let mut bins = Vec::new();
    for (krate, version) in [("scx_rustland", "1.1.4"), ("scx_bpfland", "1.1.4")] {
        let bin = root.join("bin").join(krate);
        if !bin.is_file() {
            eprintln!("bench: building {krate} {version} from crates.io (takes a while)");
            let status = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
                .args(["install", "--locked", "--version", version, "--root"])
                .arg(&root)
                .arg(krate)
                .env("BPF_CLANG", "clang-19")
                .status()
                .context("running cargo install")?;
            if !status.success() {
                bail!("cargo install {krate} failed");
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

    #[test]
    fn results_become_ratios_against_eevdf() {
        let out = "noise\nresult eevdf hackbench_s 2.0\nresult gearshift hackbench_s 1.5\n\
                   result eevdf uname_p50_us 1000\nresult gearshift uname_p50_us 250\nresult gearshift bogus x\n";
        let table = parse_results(out);
        assert_eq!(table["hackbench_s"]["gearshift"], 1.5);
        assert!(!table.contains_key("bogus"));
        let text = render_table(&table, &["eevdf".into(), "gearshift".into()]);
        assert!(
            text.contains("| hackbench_s | 2.00 | 1.50 | 0.75× |"),
            "{text}"
        );
        assert!(
            text.contains("| uname_p50_us | 1000.00 | 250.00 | 0.25× |"),
            "{text}"
        );
    }
}
