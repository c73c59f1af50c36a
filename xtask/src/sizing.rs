//! The periodic tasks' work per period, sized once per machine and vCPU count and kept in the
//! cache. Sizing runs rt-app under load in the guest (desktop_guest.sh's `rtapp_calibrate` and
//! `periodic_calibrate`), and on an emulated machine it lands on different loop counts from one
//! VM run to the next (frame60's 3 ms came out between 2,427 and 3,597 loops): results of two
//! runs compare only if both gave the schedulers the same work, so later runs reuse the first
//! run's sizing.

use std::fs;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use gearshift_testkit::cache::Cache;

/// What the guest needs to give every scheduler the same work: rt-app's ns per loop and each
/// periodic task's work per period (µs at that rate), as desktop_guest.sh's `PERIODIC_WORK`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sizing {
    pub ns_per_loop: u64,
    pub work: Vec<(String, u64)>,
}

impl Sizing {
    /// Parses `<ns per loop> <task>:<µs>…`, the form the guest prints after `sizing ` and the
    /// cache file holds.
    pub fn parse(text: &str) -> Result<Sizing> {
        let mut fields = text.split_whitespace();
        let ns_per_loop: u64 = fields
            .next()
            .context("no ns-per-loop value")?
            .parse()
            .context("the ns-per-loop value is not a whole number")?;
        if ns_per_loop == 0 {
            bail!("the ns-per-loop value is 0");
        }
        let work = fields
            .map(|spec| {
                let (name, us) = spec
                    .split_once(':')
                    .with_context(|| format!("{spec:?} is not <task>:<µs>"))?;
                let us: u64 = us
                    .parse()
                    .with_context(|| format!("{spec:?}: the work is not a whole number"))?;
                if name.is_empty() || us == 0 {
                    bail!("{spec:?}: a task needs a name and some work");
                }
                Ok((name.to_owned(), us))
            })
            .collect::<Result<Vec<_>>>()?;
        if work.is_empty() {
            bail!("no periodic task's work");
        }
        Ok(Sizing { ns_per_loop, work })
    }

    /// The guest's `sizing …` line in a VM run's output, if it printed one.
    pub fn from_guest_output(output: &str) -> Option<Result<Sizing>> {
        output
            .lines()
            .find_map(|line| line.strip_prefix("sizing "))
            .map(Sizing::parse)
    }

    /// The form `parse` reads, which bench_guest.sh splits into `RTAPP_NS_PER_LOOP` and
    /// `PERIODIC_WORK`.
    pub fn to_line(&self) -> String {
        let work: Vec<String> = self
            .work
            .iter()
            .map(|(name, us)| format!("{name}:{us}"))
            .collect();
        format!("{} {}", self.ns_per_loop, work.join(" "))
    }
}

/// Where the sizing for `cpus` vCPUs is kept; one per guest clock, as a loop's cost under
/// load depends on how the vCPUs take turns.
pub fn cache_path(cache: &Cache, cpus: u32, instruction_clock: bool) -> PathBuf {
    let clock = if instruction_clock { "-icount" } else { "" };
    cache
        .root()
        .join(format!("bench/periodic-sizing-{cpus}cpu{clock}.txt"))
}

/// The kept sizing; `None` when there is none yet. A file that does not parse is an error that
/// names it, rather than a silent resizing that would make this run incomparable to the last.
pub fn load(path: &Path) -> Result<Option<Sizing>> {
    let text = match fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e).with_context(|| format!("reading {}", path.display())),
    };
    Sizing::parse(&text).map(Some).with_context(|| {
        format!(
            "{} is not a periodic-task sizing (remove it or run with --resize)",
            path.display()
        )
    })
}

/// Keeps `sizing` at `path`, replacing what was there in one step (a crash leaves the old
/// file or the new one, never half of one).
pub fn store(path: &Path, sizing: &Sizing) -> Result<()> {
    let dir = path.parent().context("the sizing file has no directory")?;
    fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let tmp = path.with_extension("tmp");
    fs::write(&tmp, format!("{}\n", sizing.to_line()))
        .with_context(|| format!("writing {}", tmp.display()))?;
    fs::rename(&tmp, path).with_context(|| format!("replacing {}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_guest_clock_keeps_its_own_sizing() {
        let cache = Cache::at("/c");
        let host = cache_path(&cache, 4, false);
        let icount = cache_path(&cache, 4, true);
        assert_eq!(host, Path::new("/c/bench/periodic-sizing-4cpu.txt"));
        assert_eq!(
            icount,
            Path::new("/c/bench/periodic-sizing-4cpu-icount.txt")
        );
    }

    #[test]
    fn the_guests_sizing_line_round_trips_through_the_cache_file() {
        let output = "rt-app: 967 ns per loop\nresult eevdf hackbench_s 5.1\n\
                      sizing 967 frame60:3443 frame144:707 audio:436\n";
        let sizing = Sizing::from_guest_output(output).unwrap().unwrap();
        assert_eq!(sizing.ns_per_loop, 967);
        assert_eq!(sizing.work[1], ("frame144".to_owned(), 707));
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("bench/periodic-sizing-2cpu.txt");
        assert_eq!(load(&path).unwrap(), None);
        store(&path, &sizing).unwrap();
        assert_eq!(load(&path).unwrap(), Some(sizing));
    }

    #[test]
    fn a_damaged_sizing_is_an_error_naming_the_file_not_a_new_sizing() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("periodic-sizing-2cpu.txt");
        for bad in [
            "",
            "967",
            "0 frame60:3443",
            "967 frame60",
            "967 frame60:x",
            "x a:1",
        ] {
            fs::write(&path, bad).unwrap();
            let err = format!("{:#}", load(&path).unwrap_err());
            assert!(err.contains("periodic-sizing-2cpu.txt"), "{bad:?}: {err}");
        }
    }

    #[test]
    fn a_run_that_printed_no_sizing_has_none() {
        assert!(Sizing::from_guest_output("result eevdf hackbench_s 5.1\n").is_none());
    }
}
