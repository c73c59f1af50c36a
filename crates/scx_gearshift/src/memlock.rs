//! Keeping the scheduler resident: no huge pages, mlockall, no compaction of locked pages,
//! fault counting.

use std::io;
use std::path::Path;

const COMPACT_UNEVICTABLE: &str = "/proc/sys/vm/compact_unevictable_allowed";

/// Memory locked and compaction of unevictable pages off; the sysctl is restored on drop.
pub struct LockedMemory {
    saved_compact_unevictable: Option<String>,
}

impl LockedMemory {
    /// Turns transparent huge pages off for this process, locks all current and future
    /// mappings and sets vm.compact_unevictable_allowed=0.
    pub fn lock() -> io::Result<Self> {
        disable_transparent_huge_pages()?;
        let unlimited = libc::rlimit {
            rlim_cur: libc::RLIM_INFINITY,
            rlim_max: libc::RLIM_INFINITY,
        };
        // SAFETY: plain syscalls with valid arguments.
        if unsafe { libc::setrlimit(libc::RLIMIT_MEMLOCK, &unlimited) } != 0 {
            return Err(io::Error::last_os_error());
        }
        if unsafe { libc::mlockall(libc::MCL_CURRENT | libc::MCL_FUTURE) } != 0 {
            return Err(io::Error::last_os_error());
        }
        // Compaction would migrate our locked pages and fault them back in on next touch.
        let saved_compact_unevictable = match std::fs::read_to_string(COMPACT_UNEVICTABLE) {
            Ok(old) => {
                std::fs::write(COMPACT_UNEVICTABLE, "0")?;
                Some(old.trim().to_owned())
            }
            // Kernels without CONFIG_COMPACTION have no such knob and nothing to protect from.
            Err(e) if e.kind() == io::ErrorKind::NotFound => None,
            Err(e) => return Err(e),
        };
        Ok(Self {
            saved_compact_unevictable,
        })
    }
}

impl Drop for LockedMemory {
    fn drop(&mut self) {
        if let Some(old) = &self.saved_compact_unevictable {
            if let Err(e) = std::fs::write(Path::new(COMPACT_UNEVICTABLE), old) {
                tracing::warn!("could not restore {COMPACT_UNEVICTABLE}={old}: {e}");
            }
        }
    }
}

/// No transparent huge pages for this process. Locked pages are still fair game for
/// khugepaged: to collapse them into a huge page it unmaps them while it copies, and a thread
/// touching them meanwhile page-faults. (The likely cause of the one fault the soak saw, on a
/// kernel with THP "always"; not proven.) Must come before `mlockall`, so the pages it
/// populates are small ones.
fn disable_transparent_huge_pages() -> io::Result<()> {
    // SAFETY: plain prctl with integer arguments.
    if unsafe { libc::prctl(libc::PR_SET_THP_DISABLE, 1, 0, 0, 0) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Minor plus major page faults of the calling thread so far.
pub fn thread_page_faults() -> u64 {
    // SAFETY: getrusage fills the struct we pass.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    if unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut usage) } != 0 {
        return 0;
    }
    (usage.ru_minflt + usage.ru_majflt) as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn touching_fresh_memory_counts_as_faults_of_this_thread() {
        let before = thread_page_faults();
        let mut v = vec![0u8; 8 << 20];
        for i in (0..v.len()).step_by(4096) {
            v[i] = 1;
        }
        std::hint::black_box(&v);
        assert!(thread_page_faults() >= before + 1000);
    }

    #[test]
    fn huge_pages_are_off_for_the_process_afterwards() {
        disable_transparent_huge_pages().unwrap();
        // SAFETY: plain prctl query.
        assert_eq!(
            unsafe { libc::prctl(libc::PR_GET_THP_DISABLE, 0, 0, 0, 0) },
            1
        );
    }
}
