//! Boots a kernel with virtme-ng (host root shared over 9p) and runs a shell command inside as
//! root, returning its exit status, its output and the guest's kernel log.
//!
//! The guest writes everything to a run directory shared read-write with the host: a `booted`
//! marker first (so a VM that never boots is detected by time, not by a hang), then the command's
//! output, its status and `dmesg`. vng's own exit code is not used: it is not reliable.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom, Write};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use nix::sys::signal::{killpg, Signal};
use nix::unistd::Pid;
use thiserror::Error;

use crate::cache::Cache;
use crate::kernel::Kernel;

#[derive(Debug, Error)]
pub enum VmError {
    #[error("virtme-ng not found at {0}; run tools/bootstrap.sh")]
    NoVng(PathBuf),
    #[error("the VM did not boot within {secs} s (TCG is slow on a loaded host; raise the boot timeout). Console tail:\n{console}", secs = .timeout.as_secs())]
    NoBoot { timeout: Duration, console: String },
    #[error("the command did not finish within {secs} s; killed the VM. Output tail:\n{output}", secs = .timeout.as_secs())]
    Timeout { timeout: Duration, output: String },
    #[error("the guest kernel has no sched_ext (/sys/kernel/sched_ext is missing): boot a kernel with CONFIG_SCHED_CLASS_EXT=y")]
    NoSchedExt,
    #[error("the VM stopped before the command finished (kernel panic or qemu failure; run dir {run_dir}). Console tail:\n{console}")]
    Died { run_dir: PathBuf, console: String },
    #[error("VM run dir {path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// How to boot the VM.
#[derive(Debug, Clone)]
pub struct VmConfig {
    pub cpus: u32,
    pub memory_mib: u32,
    /// NUMA nodes; CPUs and memory are split evenly between them. 0 or 1: no NUMA.
    pub numa_nodes: u32,
    pub boot_timeout: Duration,
    pub timeout: Duration,
    /// Variables exported to the command.
    pub env: Vec<(String, String)>,
    /// Copy the command's output to stdout as it arrives.
    pub stream: bool,
    /// Lines of the command's output that start with one of these are copied to stderr as
    /// they arrive: the progress of a long run whose whole output is too much to show.
    pub progress_prefixes: &'static [&'static str],
    /// Fail with [`VmError::NoSchedExt`] when the guest kernel has no sched_ext.
    pub require_sched_ext: bool,
    /// Run the guest's clock on the instructions it executes (QEMU `-icount shift=auto`)
    /// instead of the host's. Single-threaded TCG runs the vCPUs in turns, and with the host's
    /// clock a vCPU's timer fires only in its turn: under load, milliseconds late. Counting
    /// instructions, no vCPU's turn runs past the next timer, so timers fire on time, as on
    /// real hardware, and a benchmark measures the scheduler instead of the turns.
    pub instruction_clock: bool,
}

impl Default for VmConfig {
    fn default() -> Self {
        Self {
            cpus: 2,
            memory_mib: 2048,
            numa_nodes: 0,
            boot_timeout: Duration::from_secs(300),
            timeout: Duration::from_secs(1800),
            env: Vec::new(),
            stream: false,
            progress_prefixes: &[],
            require_sched_ext: true,
            instruction_clock: false,
        }
    }
}

/// What the command did inside the VM.
#[derive(Debug, Clone)]
pub struct VmOutput {
    pub status: i32,
    pub output: String,
    pub dmesg: String,
}

impl VmOutput {
    pub fn success(&self) -> bool {
        self.status == 0
    }

    /// The value a guest script printed as `key=value` (the last such line), trimmed.
    pub fn field(&self, key: &str) -> Option<&str> {
        self.output
            .lines()
            .rev()
            .find_map(|l| l.strip_prefix(key)?.strip_prefix('='))
            .map(str::trim)
    }

    /// [`VmOutput::field`] as a number.
    pub fn number(&self, key: &str) -> Option<f64> {
        self.field(key)?.parse().ok()
    }
}

/// vng arguments for `cfg`, sharing `run_dir` read-write and running `guest_script` there.
pub fn vng_args(
    kernel: &Kernel,
    cfg: &VmConfig,
    run_dir: &Path,
    guest_script: &Path,
) -> Vec<String> {
    let mut args = vec![
        "--run".to_owned(),
        kernel.image.display().to_string(),
        "--disable-kvm".into(),
        "--disable-microvm".into(),
        "--force-9p".into(),
        // The kernel's messages go to console.log, whose tail a boot or command timeout
        // reports: without them a VM that hangs leaves an empty console.
        "--verbose".into(),
        "--cpus".into(),
        cfg.cpus.to_string(),
        "--memory".into(),
        format!("{}M", cfg.memory_mib),
        // Multi-threaded TCG oopses when sched_ext patches kernel text.
        format!(
            "--qemu-opts=-accel tcg,thread=single{}",
            if cfg.instruction_clock {
                " -icount shift=auto"
            } else {
                ""
            }
        ),
        format!("--rwdir={}", run_dir.display()),
    ];
    if cfg.numa_nodes > 1 {
        let nodes = cfg.numa_nodes;
        for node in 0..nodes {
            let first = node * cfg.cpus / nodes;
            let last = (node + 1) * cfg.cpus / nodes - 1;
            args.push("--numa".into());
            args.push(format!("{}M,cpus={first}-{last}", cfg.memory_mib / nodes));
        }
    }
    args.push("--exec".into());
    args.push(format!("/bin/sh {}", guest_script.display()));
    args
}

/// The guest-side wrapper: marks the boot, checks sched_ext, runs the command, saves results.
pub fn guest_script(run_dir: &Path, cfg: &VmConfig) -> String {
    let r = shell_words::quote(&run_dir.display().to_string()).into_owned();
    let mut s = format!("#!/bin/sh\nR={r}\n: > \"$R/booted\"\n");
    if cfg.require_sched_ext {
        s.push_str(
            "if [ ! -e /sys/kernel/sched_ext/state ]; then : > \"$R/no-sched-ext\"; exit 0; fi\n",
        );
    }
    s.push_str("export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin\n");
    s.push_str("export HOME=/root\n");
    for (k, v) in &cfg.env {
        s.push_str(&format!("export {k}={}\n", shell_words::quote(v)));
    }
    // The shared root is read-only; /tmp is a writable tmpfs in the guest.
    s.push_str("cd /tmp\n");
    s.push_str("/bin/bash \"$R/command.sh\" > \"$R/output\" 2>&1 < /dev/null\n");
    s.push_str("echo $? > \"$R/status.tmp\" && mv \"$R/status.tmp\" \"$R/status\"\n");
    s.push_str("dmesg > \"$R/dmesg\" 2>&1\n");
    s
}

static RUN_COUNTER: AtomicU32 = AtomicU32::new(0);

/// Boots `kernel` and runs `command` (a bash script) as root inside. A VM that does not boot
/// within `cfg.boot_timeout` is booted once more (nothing of `command` ran yet): a TCG guest
/// has been seen to hang early in boot, rarely, on a host running a second VM.
pub fn run(
    cache: &Cache,
    kernel: &Kernel,
    cfg: &VmConfig,
    command: &str,
) -> Result<VmOutput, VmError> {
    match run_once(cache, kernel, cfg, command) {
        Err(VmError::NoBoot { timeout, console }) => {
            eprintln!(
                "the VM did not boot within {} s; booting it once more. Console tail:\n{console}",
                timeout.as_secs()
            );
            run_once(cache, kernel, cfg, command)
        }
        result => result,
    }
}

fn run_once(
    cache: &Cache,
    kernel: &Kernel,
    cfg: &VmConfig,
    command: &str,
) -> Result<VmOutput, VmError> {
    let vng = cache.vng();
    if !vng.is_file() {
        return Err(VmError::NoVng(vng));
    }
    let run_dir = cache.runs_dir().join(format!(
        "{}-{}",
        std::process::id(),
        RUN_COUNTER.fetch_add(1, Ordering::Relaxed)
    ));
    let io = |path: &Path| {
        let path = path.to_owned();
        move |source| VmError::Io { path, source }
    };
    let _ = std::fs::remove_dir_all(&run_dir);
    std::fs::create_dir_all(&run_dir).map_err(io(&run_dir))?;
    let script = run_dir.join("guest.sh");
    std::fs::write(&script, guest_script(&run_dir, cfg)).map_err(io(&script))?;
    std::fs::write(run_dir.join("command.sh"), command).map_err(io(&run_dir))?;
    let console_path = run_dir.join("console.log");
    let console = File::create(&console_path).map_err(io(&console_path))?;
    let console_err = console.try_clone().map_err(io(&console_path))?;

    // vng runs its siblings (virtme-run) from PATH.
    let mut path = std::ffi::OsString::from(vng.parent().unwrap_or(Path::new("/")));
    path.push(":");
    path.push(std::env::var_os("PATH").unwrap_or_default());
    let child = Command::new(&vng)
        .args(vng_args(kernel, cfg, &run_dir, &script))
        .env("PATH", path)
        .current_dir(&run_dir)
        .stdin(Stdio::null())
        .stdout(console)
        .stderr(console_err)
        // Own process group, so a timeout kills qemu too.
        .process_group(0)
        .spawn()
        .map_err(io(&vng))?;
    let result = supervise(child, cfg, &run_dir);
    if result.is_ok() {
        let _ = std::fs::remove_dir_all(&run_dir);
    }
    result
}

struct Group(Child);

impl Drop for Group {
    fn drop(&mut self) {
        if let Ok(None) = self.0.try_wait() {
            let _ = killpg(Pid::from_raw(self.0.id() as i32), Signal::SIGKILL);
            let _ = self.0.wait();
        }
    }
}

fn supervise(child: Child, cfg: &VmConfig, run_dir: &Path) -> Result<VmOutput, VmError> {
    let mut child = Group(child);
    let start = Instant::now();
    let mut booted_at: Option<Instant> = None;
    let mut streamed = 0u64;
    let mut progress_read = 0u64;
    let output_path = run_dir.join("output");
    loop {
        let exited = matches!(child.0.try_wait(), Ok(Some(_)));
        if booted_at.is_none() && run_dir.join("booted").exists() {
            booted_at = Some(Instant::now());
        }
        if cfg.stream {
            streamed = copy_new_bytes(&output_path, streamed);
        }
        if !cfg.progress_prefixes.is_empty() {
            progress_read = echo_progress_lines(
                &output_path,
                progress_read,
                cfg.progress_prefixes,
                &mut std::io::stderr().lock(),
            );
        }
        if exited {
            break;
        }
        match booted_at {
            None if start.elapsed() > cfg.boot_timeout => {
                drop(child);
                return Err(VmError::NoBoot {
                    timeout: cfg.boot_timeout,
                    console: tail(&run_dir.join("console.log"), 30),
                });
            }
            Some(t) if t.elapsed() > cfg.timeout => {
                drop(child);
                return Err(VmError::Timeout {
                    timeout: cfg.timeout,
                    output: tail(&output_path, 30),
                });
            }
            _ => std::thread::sleep(Duration::from_millis(200)),
        }
    }
    if run_dir.join("no-sched-ext").exists() {
        return Err(VmError::NoSchedExt);
    }
    let status = std::fs::read_to_string(run_dir.join("status"))
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .ok_or_else(|| VmError::Died {
            run_dir: run_dir.to_owned(),
            console: tail(&run_dir.join("console.log"), 40),
        })?;
    Ok(VmOutput {
        status,
        output: std::fs::read_to_string(&output_path).unwrap_or_default(),
        dmesg: std::fs::read_to_string(run_dir.join("dmesg")).unwrap_or_default(),
    })
}

/// What `path` gained since offset `from`; `None` when it cannot be read (not there yet).
fn bytes_since(path: &Path, from: u64) -> Option<Vec<u8>> {
    let mut file = File::open(path).ok()?;
    file.seek(SeekFrom::Start(from)).ok()?;
    let mut buf = Vec::new();
    file.read_to_end(&mut buf).ok()?;
    Some(buf)
}

/// Copies what `path` gained since `from` to stdout; returns the new offset.
fn copy_new_bytes(path: &Path, from: u64) -> u64 {
    let Some(buf) = bytes_since(path, from) else {
        return from;
    };
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(&buf);
    let _ = out.flush();
    from + buf.len() as u64
}

/// Writes the complete lines `path` gained since `from` that start with one of `prefixes` to
/// `out`; returns the offset just past the last complete line, so a line the guest is still
/// writing is read whole next time.
fn echo_progress_lines(path: &Path, from: u64, prefixes: &[&str], out: &mut impl Write) -> u64 {
    let Some(buf) = bytes_since(path, from) else {
        return from;
    };
    let Some(end) = buf.iter().rposition(|&b| b == b'\n') else {
        return from;
    };
    for line in String::from_utf8_lossy(&buf[..end]).lines() {
        if prefixes.iter().any(|p| line.starts_with(p)) {
            let _ = writeln!(out, "{line}");
        }
    }
    let _ = out.flush();
    from + end as u64 + 1
}

fn tail(path: &Path, lines: usize) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let all: Vec<&str> = text.lines().collect();
    all[all.len().saturating_sub(lines)..].join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::Source;

    fn kernel() -> Kernel {
        Kernel {
            image: "/lib/modules/7.3.4+deb13-amd64/vmlinuz".into(),
            release: Some("7.3.4+deb13-amd64".into()),
            source: Source::User,
        }
    }

    #[test]
    fn progress_lines_are_echoed_once_and_only_when_complete() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("output");
        std::fs::write(
            &path,
            "== eevdf (repetition 1 of 3)\nresult eevdf x 1\n== gears",
        )
        .unwrap();
        let mut out = Vec::new();
        let at = echo_progress_lines(&path, 0, &["== "], &mut out);
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "== eevdf (repetition 1 of 3)\n"
        );
        // The half-written line is read again, whole, once the guest ends it.
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap();
        f.write_all(b"hift (repetition 1 of 3)\n").unwrap();
        let mut out = Vec::new();
        let at = echo_progress_lines(&path, at, &["== "], &mut out);
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "== gearshift (repetition 1 of 3)\n"
        );
        let mut out = Vec::new();
        assert_eq!(echo_progress_lines(&path, at, &["== "], &mut out), at);
        assert!(out.is_empty(), "nothing new, nothing echoed");
    }

    #[test]
    fn numa_nodes_split_cpus_and_memory() {
        let cfg = VmConfig {
            cpus: 4,
            memory_mib: 2048,
            numa_nodes: 2,
            ..VmConfig::default()
        };
        let args = vng_args(
            &kernel(),
            &cfg,
            Path::new("/c/run"),
            Path::new("/c/run/guest.sh"),
        );
        let numa: Vec<&str> = args
            .windows(2)
            .filter(|w| w[0] == "--numa")
            .map(|w| w[1].as_str())
            .collect();
        assert_eq!(numa, vec!["1024M,cpus=0-1", "1024M,cpus=2-3"]);
        assert!(args.contains(&"--qemu-opts=-accel tcg,thread=single".to_owned()));
        assert!(args.contains(&"--disable-kvm".to_owned()));
        assert_eq!(args.last().unwrap(), "/bin/sh /c/run/guest.sh");
    }

    #[test]
    fn instruction_clock_adds_icount_to_tcg() {
        let cfg = VmConfig {
            instruction_clock: true,
            ..VmConfig::default()
        };
        let args = vng_args(&kernel(), &cfg, Path::new("/r"), Path::new("/r/g.sh"));
        assert!(
            args.contains(&"--qemu-opts=-accel tcg,thread=single -icount shift=auto".to_owned())
        );
    }

    #[test]
    fn no_numa_by_default() {
        let args = vng_args(
            &kernel(),
            &VmConfig::default(),
            Path::new("/r"),
            Path::new("/r/g.sh"),
        );
        assert!(!args.iter().any(|a| a == "--numa"));
    }

    #[test]
    fn guest_script_quotes_env_and_marks_boot_first() {
        let cfg = VmConfig {
            env: vec![("RUST_LOG".into(), "debug; rm -rf /".into())],
            ..VmConfig::default()
        };
        let s = guest_script(Path::new("/c/my run"), &cfg);
        assert!(s.contains("R='/c/my run'"));
        assert!(s.contains("export RUST_LOG='debug; rm -rf /'"));
        let booted = s.find("booted").unwrap();
        assert!(booted < s.find("command.sh").unwrap());
        assert!(booted < s.find("no-sched-ext").unwrap());
    }
}
