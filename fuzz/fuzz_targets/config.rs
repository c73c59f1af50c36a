//! gearshiftd's config parser: any text is a config or an error, never a panic.
#![no_main]

use std::path::Path;

use gearshiftd::config::Config;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    // The daemon reads the file with read_to_string: non-UTF-8 never reaches the parser.
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    match Config::parse(text, Path::new("/etc/gearshift/config.toml")) {
        Ok(config) => {
            // What the daemon does with a valid config right after loading it.
            assert!(config.profile(&config.default_profile).is_some());
            assert!(config.battery_profile().is_some());
            for ppd in ["power-saver", "balanced", "performance"] {
                assert!(config.for_power_profile(ppd).is_some());
            }
            for p in &config.profiles {
                let _ = p.info();
            }
        }
        Err(e) => {
            // The message is logged.
            let _ = e.to_string();
        }
    }
});
