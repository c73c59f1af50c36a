//! `cargo xtask …`: Gearshift's project commands, over the test kit (crates/gearshift-testkit):
//! the kernel, test tools and VM the tests use, plus what only these commands need.
//!
//! - [`bench`]: VM benchmarks as ratios against EEVDF, and the policy's cost per task.
//! - [`demo`]: gearshiftd and gearshiftctl at work in a VM.
//! - [`man`]: the manual pages, from the programs' exported clap commands.
//! - [`results`]: the bench's result lines and the table of medians and ratios it prints.
//! - [`sizing`]: the periodic tasks' work per period, kept so that bench runs compare.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context, Result};
use clap::{Args, Parser, Subcommand};
use gearshift_testkit::cache::Cache;
use gearshift_testkit::kernel::{self, Request};
use gearshift_testkit::soak;
use gearshift_testkit::vm::{self, VmConfig};

mod bench;
mod demo;
mod man;
mod results;
mod sizing;

#[derive(Parser)]
#[command(about = "Gearshift project commands (sched_ext VM harness, demo)")]
struct Cli {
    #[command(subcommand)]
    command: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Resolve, download and install the sched_ext kernel; print its image path.
    Kernel {
        /// Resolve the newest kernel again instead of using the cached one.
        #[arg(long)]
        refresh: bool,
        #[command(flatten)]
        kernel: KernelArgs,
    },
    /// Boot the VM and run a command inside as root; exits with the command's status.
    Vm {
        #[command(flatten)]
        vm: VmArgs,
        /// The command (one argument is run as a bash script).
        #[arg(last = true, required = true)]
        command: Vec<String>,
    },
    /// Benchmark EEVDF vs scx_gearshift (and other scheduler binaries) in one VM run.
    Bench {
        #[command(flatten)]
        vm: VmArgs,
        /// Other sched_ext scheduler binaries to compare (e.g. scx_rustland).
        #[arg(long = "compare")]
        others: Vec<PathBuf>,
        /// Also build the sched_ext peers from crates.io (scx_bpfland, scx_cosmos, scx_lavd,
        /// scx_flash, scx_rustland, pinned) and compare them (slow: once per version).
        #[arg(long)]
        with_peers: bool,
        /// Repetitions of every scheduler's workloads; the table shows medians and ranges.
        #[arg(long, default_value_t = 3)]
        reps: u32,
        /// Seconds the periodic tasks run under each background load.
        #[arg(long, default_value_t = 20)]
        periodic_secs: u32,
        /// Background loads of the periodic tasks, comma-separated (hogs, storm, build,
        /// mixed); default all four.
        #[arg(long, value_delimiter = ',', value_parser = ["hogs", "storm", "build", "mixed"])]
        loads: Vec<String>,
        /// Only hackbench and the periodic tasks under the loads (with their real-time
        /// reference): no perf messaging, uname, cyclictest, CPU use, light load or
        /// priorities (a suite of many schedulers and repetitions in an afternoon).
        #[arg(long)]
        desktop_only: bool,
        /// Do not trace where the periodic tasks' wakeup latency goes (timer lateness and
        /// scheduling delay): reading the trace back under load is the slowest part.
        #[arg(long)]
        no_trace: bool,
        /// Which of the kernel's default and gearshift's modes to run, comma-separated
        /// (an A/B of two gearshift builds needs only eevdf and gearshift); default all but
        /// the references that run only when named: eevdf-nohrtick, EEVDF with its slice-end
        /// timer off, and gearshift-again, the same build as gearshift once more (an A/A
        /// control: what the run cannot tell apart).
        #[arg(long, value_delimiter = ',', value_parser = bench::SCHEDULER_NAMES)]
        schedulers: Vec<String>,
        /// Size the periodic tasks' work afresh in the guest instead of reusing the sizing
        /// kept from the first run with this many vCPUs (and keep the new one): runs compare
        /// only when their tasks did the same work.
        #[arg(long)]
        resize: bool,
    },
    /// Instructions and allocations per task of the user-space policy (callgrind).
    BenchPolicy,
    /// Fetch the test tools Debian 12 lacks (stress-ng 0.19) and scxctl; print their paths.
    Tools,
    /// Soak: gearshiftd + scx_gearshift (release builds) under rotating load, D-Bus switches
    /// and CPU hotplug; prints what happened and fails if anything went wrong.
    Soak {
        #[command(flatten)]
        kernel: KernelArgs,
        /// How long the load runs, in minutes.
        #[arg(long, default_value_t = 30)]
        minutes: u64,
        /// Virtual CPUs (hotplug takes one of CPUs 1..N offline at a time).
        #[arg(long, default_value_t = 4)]
        cpus: u32,
        /// Guest memory in MiB.
        #[arg(long, default_value_t = 2048)]
        memory_mib: u32,
    },
    /// Boot the VM: gearshiftd runs scx_gearshift, gearshiftctl switches it under load.
    Demo {
        #[command(flatten)]
        vm: VmArgs,
    },
    /// Write the manual pages (gearshiftd.8, gearshiftctl*.1, scx_gearshift.8) into DIR.
    Man {
        /// Output directory.
        #[arg(default_value = "target/man")]
        dir: PathBuf,
    },
}

#[derive(Args)]
struct KernelArgs {
    /// Your own kernel image (bzImage) instead of Debian's; also GEARSHIFT_KERNEL.
    #[arg(long, env = "GEARSHIFT_KERNEL")]
    kernel: Option<PathBuf>,
}

#[derive(Args)]
struct VmArgs {
    #[command(flatten)]
    kernel: KernelArgs,
    /// Virtual CPUs.
    #[arg(long, default_value_t = 2)]
    cpus: u32,
    /// Guest memory in MiB.
    #[arg(long, default_value_t = 2048)]
    memory_mib: u32,
    /// NUMA nodes (CPUs and memory split evenly).
    #[arg(long, default_value_t = 0)]
    numa_nodes: u32,
    /// Seconds to wait for the guest to boot.
    #[arg(long, default_value_t = 300)]
    boot_timeout_s: u64,
    /// Seconds the command may run.
    #[arg(long, default_value_t = 1800)]
    timeout_s: u64,
    /// Run the guest's clock on the instructions it executes (QEMU -icount shift=auto): its
    /// timers then fire on time, where with the host's clock a vCPU's timer waits for its
    /// turn on the host, milliseconds under load.
    #[arg(long)]
    icount: bool,
}

impl VmArgs {
    fn config(&self) -> VmConfig {
        VmConfig {
            cpus: self.cpus,
            memory_mib: self.memory_mib,
            numa_nodes: self.numa_nodes,
            boot_timeout: Duration::from_secs(self.boot_timeout_s),
            timeout: Duration::from_secs(self.timeout_s),
            env: ["RUST_LOG", "RUST_BACKTRACE"]
                .iter()
                .filter_map(|k| std::env::var(k).ok().map(|v| ((*k).to_owned(), v)))
                .collect(),
            stream: true,
            require_sched_ext: true,
            instruction_clock: self.icount,
            ..VmConfig::default()
        }
    }
}

fn obtain(cache: &Cache, args: &KernelArgs, refresh: bool) -> Result<gearshift_testkit::Kernel> {
    let request = Request {
        image: args.kernel.clone(),
        refresh,
    };
    kernel::obtain(cache, &request).context("obtaining a sched_ext kernel")
}

/// Boots the VM and runs `script` with `env` added to the environment.
fn boot(
    cache: &Cache,
    args: &VmArgs,
    script: &str,
    env: Vec<(String, String)>,
) -> Result<ExitCode> {
    let kernel = obtain(cache, &args.kernel, false)?;
    eprintln!(
        "vm: booting {} ({} vCPUs, TCG)",
        kernel.image.display(),
        args.cpus
    );
    let mut config = args.config();
    config.env.extend(env);
    let out = vm::run(cache, &kernel, &config, script)?;
    Ok(ExitCode::from(u8::try_from(out.status).unwrap_or(1)))
}

fn main() -> Result<ExitCode> {
    let cli = Cli::parse();
    let cache = Cache::from_env();
    match cli.command {
        Cmd::Kernel { refresh, kernel } => {
            let k = obtain(&cache, &kernel, refresh)?;
            println!("{}", k.image.display());
            Ok(ExitCode::SUCCESS)
        }
        Cmd::Vm { vm, command } => {
            let script = match command.as_slice() {
                [one] => one.clone(),
                many => shell_words::join(many),
            };
            boot(&cache, &vm, &script, Vec::new())
        }
        Cmd::Bench {
            vm,
            mut others,
            with_peers,
            reps,
            periodic_secs,
            loads,
            desktop_only,
            no_trace,
            schedulers,
            resize,
        } => {
            if with_peers {
                others.extend(bench::install_peers(&cache)?);
            }
            let kernel = obtain(&cache, &vm.kernel, false)?;
            let plan = bench::BenchPlan {
                cpus: vm.cpus,
                reps: reps.max(1),
                periodic_secs: periodic_secs.max(1),
                others,
                loads,
                desktop_only,
                trace: !no_trace,
                builtin: schedulers,
                resize,
                instruction_clock: vm.icount,
            };
            println!("{}", bench::vm(&cache, &kernel, &plan)?);
            Ok(ExitCode::SUCCESS)
        }
        Cmd::BenchPolicy => {
            println!("{}", bench::policy()?);
            Ok(ExitCode::SUCCESS)
        }
        Cmd::Tools => {
            println!("{}", gearshift_testkit::tools::stress_ng(&cache)?.display());
            println!("{}", gearshift_testkit::tools::scxctl(&cache)?.display());
            Ok(ExitCode::SUCCESS)
        }
        Cmd::Soak {
            kernel,
            minutes,
            cpus,
            memory_mib,
        } => {
            let bins = soak::Binaries {
                scheduler: demo::release_bin("scx_gearshift")?,
                daemon: demo::release_bin("gearshiftd")?,
            };
            let kernel = obtain(&cache, &kernel, false)?;
            let cfg = soak::SoakConfig {
                duration: Duration::from_secs(minutes * 60),
                cpus,
                memory_mib,
            };
            let run = bench::target_dir().join("soak");
            let out = soak::run(&cache, &kernel, &bins, &cfg, &run)?;
            let problems = soak::verdict(&out);
            if problems.is_empty() && out.success() {
                println!("soak: passed ({minutes} min, {cpus} vCPUs)");
                Ok(ExitCode::SUCCESS)
            } else {
                println!("soak: FAILED: {}", problems.join("; "));
                Ok(ExitCode::FAILURE)
            }
        }
        Cmd::Demo { vm } => {
            // Under target/: the guest sees the host's root, not its /tmp.
            let run = bench::target_dir().join("demo");
            std::fs::create_dir_all(&run)?;
            let (script, env) = demo::prepare(&run)?;
            boot(&cache, &vm, &script, env)
        }
        Cmd::Man { dir } => {
            for path in man::write_all(&dir)? {
                println!("{}", path.display());
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}
