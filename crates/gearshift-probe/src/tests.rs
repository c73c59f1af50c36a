use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::*;

fn short_plan() -> ProbePlan {
    ProbePlan {
        period: Duration::from_millis(10),
        work: Duration::from_millis(1),
        duration: Duration::from_millis(500),
        warmup: Duration::from_millis(100),
        hogs: 2,
        pairs: 1,
    }
}

#[test]
fn a_run_counts_every_period_and_the_load_gets_work_done() {
    let result = run(&short_plan(), &AtomicBool::new(false)).expect("probe");
    let f = &result.frames;
    assert_eq!(f.expected, 50);
    assert!(f.ran >= 1 && f.ran <= f.expected, "{f:?}");
    assert!(f.on_time <= f.ran);
    assert_eq!(f.wakeup_us.len(), f.ran as usize);
    assert!(f.wakeup_us.windows(2).all(|w| w[0] <= w[1]), "sorted");
    assert!(result.load_per_s > 0.0);
    let miss = f.miss_pct();
    assert!((0.0..=100.0).contains(&miss));
}

#[test]
fn cancel_ends_a_run_early_and_stops_the_load() {
    let cancel = Arc::new(AtomicBool::new(false));
    let plan = ProbePlan {
        duration: Duration::from_secs(60),
        ..short_plan()
    };
    let c = Arc::clone(&cancel);
    let setter = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(300));
        c.store(true, Ordering::Relaxed);
    });
    let t0 = Instant::now();
    let out = run(&plan, &cancel);
    setter.join().expect("setter");
    assert!(matches!(out, Err(ProbeError::Cancelled)), "{out:?}");
    assert!(
        t0.elapsed() < Duration::from_secs(30),
        "a minute's run ended early"
    );
}

#[test]
fn a_plan_whose_work_does_not_fit_its_period_is_refused() {
    let plan = ProbePlan {
        work: Duration::from_millis(20),
        ..short_plan()
    };
    let err = run(&plan, &AtomicBool::new(false)).expect_err("refused");
    assert!(err.to_string().contains("shorter than the period"), "{err}");
}

#[test]
fn misses_count_skipped_periods_and_percentiles_use_nearest_rank() {
    let frames = Frames {
        expected: 10,
        ran: 8,
        on_time: 7,
        wakeup_us: (1..=8).map(|v| v * 100).collect(),
    };
    assert!((frames.miss_pct() - 30.0).abs() < 1e-9);
    assert_eq!(frames.wakeup_percentile_us(50.0), 400);
    assert_eq!(frames.wakeup_percentile_us(99.0), 800);
    assert_eq!(frames.wakeup_percentile_us(0.0), 100);
    let none = Frames {
        expected: 0,
        ran: 0,
        on_time: 0,
        wakeup_us: vec![],
    };
    assert_eq!(none.miss_pct(), 0.0);
    assert_eq!(none.wakeup_percentile_us(99.0), 0);
}

#[test]
fn the_machine_sized_plan_keeps_every_cpu_busy() {
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    let plan = ProbePlan::for_this_machine(Duration::from_secs(5));
    assert_eq!(plan.hogs, 2 * cpus);
    assert_eq!(plan.pairs, cpus);
    assert!(plan.work < plan.period);
}
