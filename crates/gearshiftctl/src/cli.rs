//! gearshiftctl's command line, public so that `cargo xtask man` (xtask/src/man.rs) writes
//! gearshiftctl(1) and its subcommands' pages from the same definition.

use std::fmt;

use clap::builder::{PossibleValuesParser, TypedValueParser};
use clap::{Parser, Subcommand, ValueEnum};
use gearshift_types::Mode;

pub const EXIT_CODES: &str = "\
Exit codes:
  0  success
  1  gearshiftd refused the request or the call failed (e.g. no such profile)
  2  usage error (unknown command, option or value)
  3  gearshiftd is not reachable (not on the bus, or no bus)
  4  access denied (run as root or from an active local session)
  5  the scheduler is not running, or the kernel has no sched_ext";

/// Control the Gearshift sched_ext scheduler through gearshiftd.
#[derive(Debug, Parser)]
#[command(name = "gearshiftctl", version, after_help = EXIT_CODES)]
pub struct Cli {
    /// Print machine-readable JSON: one object per command (one per line with --watch).
    #[arg(long, global = true)]
    pub json: bool,
    /// The bus gearshiftd is on.
    #[arg(long, global = true, value_enum, default_value_t = BusKind::System)]
    pub bus: BusKind,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum BusKind {
    /// The system bus, where gearshiftd runs.
    System,
    /// The session bus (for testing a daemon run by hand).
    Session,
}

impl fmt::Display for BusKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            BusKind::System => "system",
            BusKind::Session => "session",
        })
    }
}

#[derive(Debug, PartialEq, Eq, Subcommand)]
pub enum Command {
    /// Show the scheduler's state, profile, mode, preemption, automatic rules and version.
    Status,
    /// Show the active profile, or switch to NAME (see list-profiles).
    Profile {
        /// Profile to switch to.
        name: Option<String>,
    },
    /// Show the mode in effect, or switch to MODE (the profile becomes "custom").
    Mode {
        /// Mode to switch to.
        #[arg(value_parser = mode_parser())]
        mode: Option<Mode>,
    },
    /// Show whether waking interactive tasks may preempt CPU-bound ones, or turn it on or off.
    Preempt {
        /// Turn preemption on or off.
        #[arg(value_parser = on_off_parser())]
        setting: Option<bool>,
    },
    /// Show the scheduler's counters; with --watch, a line per update until Ctrl-C.
    Stats {
        /// Keep printing updates (the daemon's Stats signal) until interrupted.
        #[arg(long)]
        watch: bool,
        /// With --watch: milliseconds between updates (the daemon enforces a minimum).
        #[arg(long, requires = "watch", default_value_t = 1000,
              value_parser = clap::value_parser!(u32).range(1..))]
        interval_ms: u32,
    },
    /// Start the scheduler; returns once the kernel reports it enabled.
    Start,
    /// Stop the scheduler; the kernel's default scheduler takes over.
    Stop,
    /// Stop and start the scheduler, forgetting earlier failures.
    Restart,
    /// List the profiles with their mode and preemption; the active one is marked.
    ListProfiles,
    /// Check how responsive this machine is under load: a 60 Hz frame-like task (3 ms of work
    /// a frame) under two CPU-bound threads per CPU and a message-passing pair per CPU, first
    /// under the kernel's default scheduler, then under each profile. Prints late frames,
    /// wakeup latency and the load's throughput, with ratios to the default, and a verdict.
    /// Ctrl-C stops it; what ran before is put back either way. Needs the manage
    /// authorization, like start and stop.
    Check {
        /// A profile to measure (repeat for several); default: every profile.
        #[arg(long = "profile", value_name = "NAME")]
        profiles: Vec<String>,
        /// Seconds to measure each scheduler.
        #[arg(long, default_value_t = 8, value_parser = clap::value_parser!(u32).range(3..=120))]
        seconds: u32,
        /// Run on battery power too (refused otherwise: it would drain the battery).
        #[arg(long)]
        allow_battery: bool,
        /// Show the last check's result (kept by gearshiftd) instead of running one.
        #[arg(long, conflicts_with_all = ["profiles", "seconds", "allow_battery"])]
        last: bool,
    },
    /// Hold PROFILE while COMMAND runs (e.g. a game or a recording), then release it; exits
    /// with the command's status. The hold beats the automatic rules; choosing a profile
    /// yourself ends it.
    Hold {
        /// Profile to hold.
        profile: String,
        /// Why, shown to the user (ActiveHolds).
        #[arg(long, default_value = "held by gearshiftctl")]
        reason: String,
        /// The application holding it.
        #[arg(long, default_value = "io.github.gearshift.gearshiftctl")]
        app_id: String,
        /// The command to run.
        #[arg(last = true, required = true)]
        command: Vec<String>,
    },
}

fn mode_parser() -> impl TypedValueParser<Value = Mode> {
    PossibleValuesParser::new(Mode::ALL.iter().map(|m| m.as_str())).try_map(|s| s.parse::<Mode>())
}

fn on_off_parser() -> impl TypedValueParser<Value = bool> {
    PossibleValuesParser::new(["on", "off"]).map(|s| s == "on")
}
