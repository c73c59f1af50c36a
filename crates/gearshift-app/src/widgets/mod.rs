//! The app's widgets, each built from the .ui template beside it.

mod check_page;
mod stats_graph;
mod status_panel;
mod window;

pub use check_page::CheckPage;
pub use stats_graph::StatsGraph;
pub use status_panel::StatusPanel;
pub use window::{ProfileRow, Window};
