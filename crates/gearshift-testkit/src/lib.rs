//! Gearshift's test kit: what tests in any crate need to boot the sched_ext VM or to run a
//! private system bus. `cargo xtask` (xtask/) is the command line over it.
//!
//! - [`apt`]: a private apt setup (never the system's) to resolve and fetch Debian kernels.
//! - [`kconfig`]: parsing and checking a kernel's `config` file.
//! - [`download`]: verified downloads with progress.
//! - [`kernel`]: obtaining a sched_ext-capable kernel (Debian's or the user's own).
//! - [`tools`]: test tools newer than Debian 12 has (stress-ng with `--race-sched`), and scxctl.
//! - [`vm`]: booting that kernel with virtme-ng and running a command inside as root.
//! - [`bus`]: the private system bus's configuration, and gearshiftd's guest-side prelude.
//! - [`desktop`]: the guest's desktop workloads, shared by `cargo xtask bench` and VM tests.
//! - [`soak`]: gearshiftd and scx_gearshift under rotating load, and the soak's verdict.

pub mod apt;
pub mod bus;
pub mod cache;
pub mod desktop;
pub mod download;
pub mod kconfig;
pub mod kernel;
pub mod soak;
pub mod tools;
pub mod vm;

use thiserror::Error;

pub use kernel::{Kernel, KernelError};
pub use vm::{VmConfig, VmError, VmOutput};

/// Why a VM run did not happen or did not finish.
#[derive(Debug, Error)]
pub enum HarnessError {
    /// Obtaining the kernel or a test tool failed.
    #[error(transparent)]
    Kernel(#[from] KernelError),
    /// The VM did not boot, or the command did not finish in time.
    #[error(transparent)]
    Vm(#[from] VmError),
    /// Writing the files the guest reads from the host failed.
    #[error("writing the guest's run directory: {0}")]
    RunDir(#[from] std::io::Error),
}

/// Boots the harness kernel (`GEARSHIFT_KERNEL` or Debian's cached one) and runs `script`:
/// the entry point for VM tests in any crate.
pub fn run_in_vm(cfg: &VmConfig, script: &str) -> Result<VmOutput, HarnessError> {
    boot(&kernel::Request::from_env(), cfg, script)
}

/// Like [`run_in_vm`], with the kernel image `image` (a bzImage with sched_ext built in).
pub fn run_in_vm_on(
    image: &std::path::Path,
    cfg: &VmConfig,
    script: &str,
) -> Result<VmOutput, HarnessError> {
    let request = kernel::Request {
        image: Some(image.to_owned()),
        refresh: false,
    };
    boot(&request, cfg, script)
}

fn boot(request: &kernel::Request, cfg: &VmConfig, script: &str) -> Result<VmOutput, HarnessError> {
    let cache = cache::Cache::from_env();
    let kernel = kernel::obtain(&cache, request)?;
    Ok(vm::run(&cache, &kernel, cfg, script)?)
}
