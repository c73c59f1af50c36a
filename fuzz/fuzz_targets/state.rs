//! gearshiftd's state-file loader: a damaged /var/lib/gearshift/state.json is ignored, never a
//! panic, and whatever loads saves back to the same state.
#![no_main]

use gearshiftd::persist::SavedState;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    match SavedState::from_json(data) {
        Ok(state) => {
            let saved = serde_json::to_vec_pretty(&state).expect("a loaded state serializes");
            let back = SavedState::from_json(&saved).expect("a saved state loads");
            assert_eq!(back, state);
        }
        Err(e) => {
            // The message is logged.
            let _ = e.to_string();
        }
    }
});
