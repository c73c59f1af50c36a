//! Gearshift system daemon: supervises scx_gearshift and serves io.github.gearshift.Scheduler1.
//!
//! Skeleton: a later issue fills this crate in. Until then it says so and fails, so nobody
//! mistakes it for a working component.

fn main() -> std::process::ExitCode {
    eprintln!("gearshiftd: not built yet (see the project's open issues)");
    std::process::ExitCode::from(2)
}
