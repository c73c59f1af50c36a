//! scx_gearshift: a sched_ext scheduler whose BPF part dispatches and whose Rust part decides.
//!
//! - [`bpf`]: the dispatcher (BPF, in `src/bpf/`) as seen from Rust.
//! - [`policy`]: deadlines, interactive detection, time slices — pure, host-testable.
//! - [`session`]: the scheduling loop tying the two together, restarted on CPU hotplug.
//! - [`topology`]: the CPU packing order low-power mode uses.
//! - [`control`]: the control socket `gearshiftd` talks to.
//! - [`alloc`] and [`memlock`]: the locked arena that keeps the scheduler free of page faults.
//! - [`startup`]: the loading thread's priority boost until the scheduler is attached.
//! - [`cli`]: the command line, which `cargo xtask man` also writes scx_gearshift(8) from.

pub mod alloc;
pub mod bpf;
pub mod cli;
pub mod control;
pub mod memlock;
pub mod policy;
pub mod session;
pub mod startup;
pub mod topology;
