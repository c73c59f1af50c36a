//! The control fuzz target's committed corpus (fuzz/corpus/control), replayed on the stable
//! toolchain so that `cargo test` catches a decoder regression too. The input format is the fuzz
//! target's (fuzz/fuzz_targets/control.rs): one flag byte, then the stream.

use std::io::{BufReader, Read};
use std::path::Path;

use gearshift_types::control::{read_message, ProtocolError, MAX_LINE};
use gearshift_types::{Request, Response};

fn decode_all<T: for<'de> serde::Deserialize<'de>>(stream: impl Read, capacity: usize) -> usize {
    let mut reader = BufReader::with_capacity(capacity, stream);
    let mut decoded = 0;
    loop {
        match read_message::<T>(&mut reader) {
            Ok(None) => return decoded,
            Ok(Some(_)) => decoded += 1,
            Err(ProtocolError::TooLong) | Err(ProtocolError::Malformed(_)) => {}
            Err(e) => panic!("unexpected error from an in-memory stream: {e}"),
        }
    }
}

#[test]
fn control_corpus_decodes_without_panicking() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/corpus/control");
    let mut files = 0;
    let mut decoded = 0;
    for entry in std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let data = std::fs::read(entry.expect("entry").path()).expect("read");
        let Some((&flags, rest)) = data.split_first() else {
            continue;
        };
        files += 1;
        let capacity = [1, 2, 3, 7, 64, 1024, 8192, 65536][usize::from(flags >> 1) & 7];
        let pad = if flags & 0x10 != 0 { MAX_LINE - 64 } else { 0 };
        let stream = || std::io::repeat(b' ').take(pad as u64).chain(rest);
        decoded += decode_all::<Request>(stream(), capacity);
        decoded += decode_all::<Response>(stream(), capacity);
    }
    assert!(
        files >= 50,
        "only {files} corpus files in {}",
        dir.display()
    );
    assert!(decoded > 0, "no corpus file holds a valid message");
}

#[test]
fn an_endless_line_is_refused_after_max_line_bytes() {
    // A peer that never sends a newline: the decoder stops at MAX_LINE instead of buffering.
    let mut endless = BufReader::new(std::io::repeat(b' '));
    assert!(matches!(
        read_message::<Request>(&mut endless),
        Err(ProtocolError::TooLong)
    ));
}
