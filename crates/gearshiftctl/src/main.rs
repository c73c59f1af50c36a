//! Command-line client for the Gearshift daemon.
//!
//! Skeleton: a later issue fills this crate in. Until then it says so and fails, so nobody
//! mistakes it for a working component.

fn main() -> std::process::ExitCode {
    eprintln!("gearshiftctl: not built yet (see the project's open issues)");
    std::process::ExitCode::from(2)
}
