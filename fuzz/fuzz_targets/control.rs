//! The control channel's decoder, both directions: any bytes are messages or errors, never a
//! panic; a line longer than MAX_LINE is refused, not buffered (tools/fuzz.sh runs with
//! -rss_limit_mb); whatever decodes re-encodes to the same message.
//!
//! Input: one flag byte, then the stream. Flag bits: 0 set = decode Responses, else Requests;
//! 1-3 = the reader's buffer size (small buffers split lines across reads); 4 = prefix the
//! stream with MAX_LINE - 64 spaces (JSON whitespace), so that the length limit is explored
//! without MAX_LINE-sized inputs.
#![no_main]

use std::io::{BufReader, Read};

use gearshift_types::control::{
    read_message, write_message, ProtocolError, Request, Response, MAX_LINE,
};
use libfuzzer_sys::fuzz_target;
use serde::de::DeserializeOwned;
use serde::Serialize;

fn decode_all<T: DeserializeOwned + Serialize + PartialEq + std::fmt::Debug>(
    stream: impl Read,
    capacity: usize,
    total: usize,
) {
    let mut reader = BufReader::with_capacity(capacity, stream);
    // Every call consumes at least one byte or ends the stream.
    for _ in 0..=total {
        match read_message::<T>(&mut reader) {
            Ok(None) => return,
            Ok(Some(msg)) => {
                // What decodes encodes to one line that decodes to the same message.
                let mut line = Vec::new();
                write_message(&mut line, &msg).expect("encode");
                let back: T = read_message(&mut &line[..])
                    .expect("re-decode")
                    .expect("a line");
                assert_eq!(back, msg);
            }
            // The daemon and the scheduler drop the connection after an error.
            Err(ProtocolError::TooLong) | Err(ProtocolError::Malformed(_)) => {}
            Err(e) => panic!("unexpected error from an in-memory stream: {e}"),
        }
    }
    panic!("read_message did not make progress");
}

fuzz_target!(|data: &[u8]| {
    let Some((&flags, rest)) = data.split_first() else {
        return;
    };
    let capacity = [1, 2, 3, 7, 64, 1024, 8192, 65536][usize::from(flags >> 1) & 7];
    let pad = if flags & 0x10 != 0 { MAX_LINE - 64 } else { 0 };
    let stream = std::io::repeat(b' ').take(pad as u64).chain(rest);
    let total = pad + rest.len();
    if flags & 1 == 0 {
        decode_all::<Request>(stream, capacity, total);
    } else {
        decode_all::<Response>(stream, capacity, total);
    }
});
