//! The background load: CPU-bound threads and message-passing pairs, each counting the
//! units of work it finishes. Every unit is the same computation, so units per second
//! compare across schedulers.

use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;

use crate::ProbeError;

/// Iterations of one unit: about 50–100 µs on a desktop CPU.
const UNIT_ITERATIONS: u32 = 20_000;

fn one_unit(seed: u64) -> u64 {
    let mut x = seed | 1;
    for _ in 0..UNIT_ITERATIONS {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
    }
    std::hint::black_box(x)
}

pub struct Load {
    stop: Arc<AtomicBool>,
    units: Arc<AtomicU64>,
    threads: Vec<JoinHandle<()>>,
}

impl Load {
    /// Starts `hogs` CPU-bound threads and `pairs` pairs of threads passing a byte back and
    /// forth over a socket, one unit of work per message.
    pub fn start(hogs: usize, pairs: usize) -> Result<Self, ProbeError> {
        let mut load = Self {
            stop: Arc::new(AtomicBool::new(false)),
            units: Arc::new(AtomicU64::new(0)),
            threads: Vec::new(),
        };
        if let Err(e) = load.spawn_all(hogs, pairs) {
            let _ = load.stop();
            return Err(e);
        }
        Ok(load)
    }

    fn spawn_all(&mut self, hogs: usize, pairs: usize) -> Result<(), ProbeError> {
        for i in 0..hogs {
            let (stop, units) = (Arc::clone(&self.stop), Arc::clone(&self.units));
            self.spawn(format!("probe-hog{i}"), move || {
                let mut x = i as u64;
                while !stop.load(Ordering::Relaxed) {
                    x = one_unit(x);
                    units.fetch_add(1, Ordering::Relaxed);
                }
            })?;
        }
        for i in 0..pairs {
            let (a, b) = UnixStream::pair().map_err(ProbeError::Spawn)?;
            for (side, mut sock) in [(0, a), (1, b)] {
                let (stop, units) = (Arc::clone(&self.stop), Arc::clone(&self.units));
                self.spawn(format!("probe-pair{i}.{side}"), move || {
                    let mut byte = [0u8; 1];
                    let mut x = i as u64;
                    // Side 0 serves first; each then waits for the other's message.
                    if side == 0 && sock.write_all(&byte).is_err() {
                        return;
                    }
                    while !stop.load(Ordering::Relaxed) {
                        if sock.read_exact(&mut byte).is_err() {
                            return;
                        }
                        x = one_unit(x);
                        units.fetch_add(1, Ordering::Relaxed);
                        if sock.write_all(&byte).is_err() {
                            return;
                        }
                    }
                    // The partner may wait for one more message: closing the socket (on
                    // return) ends its read.
                })?;
            }
        }
        Ok(())
    }

    fn spawn(&mut self, name: String, f: impl FnOnce() + Send + 'static) -> Result<(), ProbeError> {
        let handle = std::thread::Builder::new()
            .name(name)
            .spawn(f)
            .map_err(ProbeError::Spawn)?;
        self.threads.push(handle);
        Ok(())
    }

    /// Units of work finished so far.
    pub fn units(&self) -> u64 {
        self.units.load(Ordering::Relaxed)
    }

    /// Stops every thread and waits for them.
    pub fn stop(mut self) -> Result<(), ProbeError> {
        self.stop.store(true, Ordering::Relaxed);
        let mut failed = false;
        for t in self.threads.drain(..) {
            failed |= t.join().is_err();
        }
        if failed {
            Err(ProbeError::Thread)
        } else {
            Ok(())
        }
    }
}
