//! The parts of gearshiftd that read files from disk, as a library so that they can be fuzzed
//! (`fuzz/`, `tools/fuzz.sh`) and tested on their own, and the command line, which
//! `cargo xtask man` writes gearshiftd(8) from. The daemon itself is `main.rs`.

pub mod cli;
pub mod config;
pub mod persist;
