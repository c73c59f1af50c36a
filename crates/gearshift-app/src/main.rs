//! Gearshift desktop app (GTK4 + libadwaita).
//!
//! Skeleton: a later issue fills this crate in. Until then it says so and fails, so nobody
//! mistakes it for a working component.

fn main() -> std::process::ExitCode {
    eprintln!("gearshift: not built yet (see the project's open issues)");
    std::process::ExitCode::from(2)
}
