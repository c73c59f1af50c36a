//! The D-Bus contract of `io.github.gearshift.Scheduler1`.
//!
//! Filled by the daemon issue: the interface XML in `dbus/` is the contract and this crate
//! holds its Rust side (proxies for clients, shared names for the daemon).

/// Well-known bus name of the Gearshift system service.
pub const BUS_NAME: &str = "io.github.gearshift.Scheduler1";
/// Object path of the scheduler object.
pub const OBJECT_PATH: &str = "/io/github/gearshift/Scheduler1";
