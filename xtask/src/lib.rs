//! Gearshift's project commands as a library, so tests in any crate can boot the sched_ext VM.
//!
//! - [`bench`]: VM benchmarks as ratios against EEVDF, and the policy's cost per task.
//! - [`apt`]: a private apt setup (never the system's) to resolve and fetch Debian kernels.
//! - [`kconfig`]: parsing and checking a kernel's `config` file.
//! - [`download`]: verified downloads with progress.
//! - [`kernel`]: obtaining a sched_ext-capable kernel (Debian's or the user's own).
//! - [`tools`]: test tools newer than Debian 12 has (stress-ng with `--race-sched`), and scxctl.
//! - [`vm`]: booting that kernel with virtme-ng and running a command inside as root.

pub mod apt;
pub mod bench;
pub mod bus;
pub mod cache;
pub mod demo;
pub mod download;
pub mod kconfig;
pub mod kernel;
pub mod soak;
pub mod tools;
pub mod vm;

pub use kernel::Kernel;
pub use vm::{VmConfig, VmError, VmOutput};

/// Boots the harness kernel (`GEARSHIFT_KERNEL` or Debian's cached one) and runs `script`:
/// the entry point for VM tests in any crate.
pub fn run_in_vm(cfg: &VmConfig, script: &str) -> anyhow::Result<VmOutput> {
    boot(&kernel::Request::from_env(), cfg, script)
}

/// Like [`run_in_vm`], with the kernel image `image` (a bzImage with sched_ext built in).
pub fn run_in_vm_on(
    image: &std::path::Path,
    cfg: &VmConfig,
    script: &str,
) -> anyhow::Result<VmOutput> {
    let request = kernel::Request {
        image: Some(image.to_owned()),
        refresh: false,
    };
    boot(&request, cfg, script)
}

fn boot(request: &kernel::Request, cfg: &VmConfig, script: &str) -> anyhow::Result<VmOutput> {
    let cache = cache::Cache::from_env();
    let kernel = kernel::obtain(&cache, request)?;
    Ok(vm::run(&cache, &kernel, cfg, script)?)
}
