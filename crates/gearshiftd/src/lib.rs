//! The parts of gearshiftd that read files from disk, as a library so that they can be fuzzed
//! (`fuzz/`, `tools/fuzz.sh`) and tested on their own. The daemon itself is `main.rs`.

pub mod config;
pub mod persist;
