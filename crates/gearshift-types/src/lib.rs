//! Types every Gearshift component shares: the scheduler's modes, the control protocol between
//! `gearshiftd` and `scx_gearshift`, and the stats the scheduler reports.

pub mod control;
pub mod mode;
pub mod stats;

pub use control::{Request, Response, Settings};
pub use mode::{Mode, UnknownMode};
pub use stats::Stats;
