//! The clocks the probe needs: CLOCK_MONOTONIC for periods and absolute sleeps (what a frame
//! loop or an audio callback waits on), and the thread's own CPU time for its work.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

fn read(clock: libc::clockid_t) -> Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid timespec to write; both clocks exist on every Linux.
    unsafe { libc::clock_gettime(clock, &mut ts) };
    Duration::new(
        ts.tv_sec.max(0) as u64,
        ts.tv_nsec.clamp(0, 999_999_999) as u32,
    )
}

/// CLOCK_MONOTONIC.
pub fn now() -> Duration {
    read(libc::CLOCK_MONOTONIC)
}

/// The calling thread's CPU time.
pub fn thread_cpu() -> Duration {
    read(libc::CLOCK_THREAD_CPUTIME_ID)
}

/// Sleeps until CLOCK_MONOTONIC reaches `at` (an absolute timer, as periodic tasks use, so
/// the wakeup's lateness is the timer's and the scheduler's, not the loop's).
pub fn sleep_until(at: Duration) {
    let ts = libc::timespec {
        tv_sec: at.as_secs() as libc::time_t,
        tv_nsec: at.subsec_nanos() as libc::c_long,
    };
    // EINTR: sleep again until the time has come.
    loop {
        // SAFETY: `ts` is a valid timespec; a null remainder is allowed with TIMER_ABSTIME.
        let rc = unsafe {
            libc::clock_nanosleep(
                libc::CLOCK_MONOTONIC,
                libc::TIMER_ABSTIME,
                &ts,
                std::ptr::null_mut(),
            )
        };
        if rc != libc::EINTR {
            return;
        }
    }
}

/// Sleeps until `at`, in steps short enough that a cancel is seen within 100 ms.
pub fn sleep_until_or_cancel(at: Duration, cancel: &AtomicBool) {
    const STEP: Duration = Duration::from_millis(100);
    loop {
        let t = now();
        if t >= at || cancel.load(Ordering::Relaxed) {
            return;
        }
        sleep_until((t + STEP).min(at));
    }
}

/// Burns CPU until the calling thread has used `cpu` more CPU time: the work is CPU time,
/// so a frame preempted halfway still has the rest to do.
pub fn spin_cpu(cpu: Duration) {
    let until = thread_cpu() + cpu;
    let mut x = 0x9e37_79b9_7f4a_7c15_u64;
    while thread_cpu() < until {
        for _ in 0..256 {
            x = std::hint::black_box(x.rotate_left(5) ^ 0x2545_f491_4f6c_dd1d);
        }
    }
}
