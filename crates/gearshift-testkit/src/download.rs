//! Downloads verified against apt's SHA-256, with progress on the terminal or in CI logs.

use std::fs::File;
use std::io::{IsTerminal, Read, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use sha2::{Digest, Sha256};
use thiserror::Error;

use crate::apt::DebUri;

#[derive(Debug, Error)]
pub enum DownloadError {
    #[error("could not download {url}: {message}")]
    Http { url: String, message: String },
    #[error("could not write {path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{file}: SHA-256 is {actual}, apt expects {expected} (corrupt or tampered download)")]
    Hash {
        file: String,
        expected: String,
        actual: String,
    },
}

/// Reports progress: a rewritten line on a terminal, a line per 10% otherwise (CI logs).
struct Progress<'a> {
    label: &'a str,
    total: u64,
    done: u64,
    tty: bool,
    last_decile: u64,
    last_draw: Instant,
}

impl<'a> Progress<'a> {
    fn new(label: &'a str, total: u64) -> Self {
        Self {
            label,
            total,
            done: 0,
            tty: std::io::stderr().is_terminal(),
            last_decile: 0,
            last_draw: Instant::now(),
        }
    }

    fn advance(&mut self, bytes: u64) {
        self.done += bytes;
        let percent = (self.done * 100)
            .checked_div(self.total)
            .unwrap_or(0)
            .min(100);
        if self.tty {
            if self.last_draw.elapsed() > Duration::from_millis(200) || self.done >= self.total {
                eprint!("\r  {}: {percent:3}% of {}", self.label, mib(self.total));
                self.last_draw = Instant::now();
            }
        } else if self.total >= 8 << 20 && percent / 10 > self.last_decile {
            // Logs get a line per 10% of big files only; small ones get their final line.
            self.last_decile = percent / 10;
            eprintln!("  {}: {percent}% of {}", self.label, mib(self.total));
        }
    }

    fn finish(&self) {
        if self.tty {
            eprintln!();
        } else if self.total < 8 << 20 {
            eprintln!("  {}: {}", self.label, mib(self.total));
        }
    }
}

fn mib(bytes: u64) -> String {
    format!("{:.1} MiB", bytes as f64 / (1024.0 * 1024.0))
}

/// Downloads `deb` into `dir` unless a file with the right hash is already there.
pub fn fetch_verified(deb: &DebUri, dir: &Path) -> Result<PathBuf, DownloadError> {
    let dest = dir.join(&deb.file_name);
    let io = |path: &Path| {
        let path = path.to_owned();
        move |source| DownloadError::Io { path, source }
    };
    if dest.exists() && sha256_file(&dest).map_err(io(&dest))? == deb.sha256 {
        return Ok(dest);
    }
    std::fs::create_dir_all(dir).map_err(io(dir))?;
    let partial = dir.join(format!("{}.partial", deb.file_name));
    let http = |message: String| DownloadError::Http {
        url: deb.url.clone(),
        message,
    };
    let response = ureq::get(&deb.url)
        .call()
        .map_err(|e| http(e.to_string()))?;
    let mut body = response.into_body().into_reader();
    let mut out = File::create(&partial).map_err(io(&partial))?;
    let mut hasher = Sha256::new();
    let mut progress = Progress::new(&deb.file_name, deb.size);
    let mut buf = vec![0u8; 256 * 1024];
    loop {
        let n = body.read(&mut buf).map_err(|e| http(e.to_string()))?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
        out.write_all(&buf[..n]).map_err(io(&partial))?;
        progress.advance(n as u64);
    }
    progress.finish();
    out.sync_all().map_err(io(&partial))?;
    let actual = hex(&hasher.finalize());
    if actual != deb.sha256 {
        let _ = std::fs::remove_file(&partial);
        return Err(DownloadError::Hash {
            file: deb.file_name.clone(),
            expected: deb.sha256.clone(),
            actual,
        });
    }
    std::fs::rename(&partial, &dest).map_err(io(&dest))?;
    Ok(dest)
}

fn sha256_file(path: &Path) -> std::io::Result<String> {
    let mut file = File::open(path)?;
    let mut hasher = Sha256::new();
    std::io::copy(&mut file, &mut hasher)?;
    Ok(hex(&hasher.finalize()))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cached_file_with_right_hash_is_reused_without_network() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.deb"), b"abc").unwrap();
        let deb = DebUri {
            // Unroutable: reaching the network would fail the test.
            url: "http://127.0.0.1:9/a.deb".into(),
            file_name: "a.deb".into(),
            size: 3,
            sha256: "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad".into(),
        };
        assert_eq!(
            fetch_verified(&deb, dir.path()).unwrap(),
            dir.path().join("a.deb")
        );
    }

    #[test]
    fn stale_file_is_fetched_again_and_errors_name_the_url() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.deb"), b"corrupt").unwrap();
        let deb = DebUri {
            url: "http://127.0.0.1:9/a.deb".into(),
            file_name: "a.deb".into(),
            size: 3,
            sha256: "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad".into(),
        };
        let err = fetch_verified(&deb, dir.path()).unwrap_err();
        assert!(matches!(err, DownloadError::Http { .. }), "{err}");
        assert!(err.to_string().contains("127.0.0.1:9/a.deb"));
    }
}
