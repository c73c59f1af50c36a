//! gearshiftctl's command line as a library, so that `cargo xtask man` writes gearshiftctl(1)
//! from the same clap definition the program parses with. The program itself is `main.rs`.

pub mod cli;
