//! The config and state fuzz targets' committed corpora (fuzz/corpus/{config,state}), replayed
//! on the stable toolchain so that `cargo test` catches a parser regression too.

use std::path::{Path, PathBuf};

use gearshiftd::config::Config;
use gearshiftd::persist::SavedState;

fn corpus(target: &str) -> Vec<Vec<u8>> {
    let dir: PathBuf = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fuzz/corpus")
        .join(target);
    let files: Vec<Vec<u8>> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| std::fs::read(entry.expect("entry").path()).expect("read"))
        .collect();
    assert!(
        files.len() >= 50,
        "only {} files in {}",
        files.len(),
        dir.display()
    );
    files
}

#[test]
fn config_corpus_parses_or_is_refused() {
    let mut valid = 0;
    for data in corpus("config") {
        let Ok(text) = std::str::from_utf8(&data) else {
            continue;
        };
        match Config::parse(text, Path::new("config.toml")) {
            Ok(config) => {
                assert!(config.profile(&config.default_profile).is_some());
                valid += 1;
            }
            Err(e) => assert!(!e.to_string().is_empty()),
        }
    }
    assert!(valid > 0, "no corpus file is a valid config");
}

#[test]
fn state_corpus_loads_or_is_ignored() {
    let mut valid = 0;
    for data in corpus("state") {
        if let Ok(state) = SavedState::from_json(&data) {
            let saved = serde_json::to_vec(&state).expect("serialize");
            assert_eq!(SavedState::from_json(&saved).expect("reload"), state);
            valid += 1;
        }
    }
    assert!(valid > 0, "no corpus file is a valid state");
}
