//! Starting fast on a loaded machine: the thread that locks memory and loads the BPF program
//! runs at the highest nice priority until the scheduler is attached.
//!
//! Before the scheduler attaches, the kernel's default scheduler runs everything, and the
//! loader is one task among all the others. Loading is CPU-bound (faulting in and locking the
//! arena, the BPF verifier): in the emulated 2-vCPU test machine it took 25 s idle and 83-160 s
//! beside four CPU hogs, past gearshiftd's enable timeout, so a scheduler ejected on a loaded
//! machine (exactly when a restart is needed) could not come back. At nice -20 the loader
//! weighs as much as 86 nice-0 tasks. The boost ends at attach: from then on the scheduling
//! thread is dispatched by BPF, and the threads it spawns inherit its restored nice.

use std::io;

/// The calling thread's nice value, raised to -20; the old value is put back on drop.
#[derive(Debug)]
pub struct StartupPriority {
    restore_to: libc::c_int,
}

/// The highest priority nice can give.
const HIGHEST_NICE: libc::c_int = -20;

impl StartupPriority {
    /// Raises the calling thread (Linux nice values are per thread). Needs CAP_SYS_NICE, which
    /// gearshiftd and its systemd unit leave the scheduler.
    pub fn raise() -> io::Result<Self> {
        let restore_to = thread_nice()?;
        set_thread_nice(HIGHEST_NICE)?;
        Ok(Self { restore_to })
    }
}

impl Drop for StartupPriority {
    fn drop(&mut self) {
        // Lowering a priority is always allowed; if it fails anyway, the thread stays boosted,
        // which BPF's dispatch of the scheduling thread does not consult.
        if let Err(e) = set_thread_nice(self.restore_to) {
            tracing::warn!("cannot restore the scheduler's nice value: {e}");
        }
    }
}

/// The calling thread's nice value.
pub fn thread_nice() -> io::Result<libc::c_int> {
    // getpriority() may return -1 as a value: only errno tells an error apart.
    // SAFETY: errno is thread-local; getpriority takes plain integers.
    let nice = unsafe {
        *libc::__errno_location() = 0;
        libc::getpriority(libc::PRIO_PROCESS, 0)
    };
    let err = io::Error::last_os_error();
    match err.raw_os_error() {
        Some(0) | None => Ok(nice),
        Some(_) => Err(err),
    }
}

fn set_thread_nice(nice: libc::c_int) -> io::Result<()> {
    // SAFETY: plain syscall; who = 0 is the calling thread.
    if unsafe { libc::setpriority(libc::PRIO_PROCESS, 0, nice) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn is_root() -> bool {
        // SAFETY: plain query.
        unsafe { libc::geteuid() == 0 }
    }

    #[test]
    fn the_boost_lasts_until_dropped() {
        let before = thread_nice().expect("nice");
        match StartupPriority::raise() {
            Ok(boost) => {
                assert_eq!(thread_nice().expect("nice"), HIGHEST_NICE);
                let other = std::thread::spawn(|| thread_nice().expect("nice"));
                // A thread spawned while boosted inherits the boost, as the kernel does.
                assert_eq!(other.join().expect("thread"), HIGHEST_NICE);
                drop(boost);
                assert_eq!(thread_nice().expect("nice"), before);
            }
            Err(e) => {
                assert!(!is_root(), "root may raise its priority: {e}");
                assert_eq!(
                    thread_nice().expect("nice"),
                    before,
                    "a refused raise changes nothing"
                );
            }
        }
    }
}
