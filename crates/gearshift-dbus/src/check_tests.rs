use super::*;

fn row(scheduler: &str, miss_pct: f64, p99: u64, load: f64) -> CheckResult {
    CheckResult {
        scheduler: scheduler.to_owned(),
        expected: 600,
        on_time: (600.0 * (1.0 - miss_pct / 100.0)) as u32,
        miss_pct,
        wakeup_p50_us: p99 / 4,
        wakeup_p99_us: p99,
        load_per_s: load,
    }
}

fn report(rows: Vec<CheckResult>) -> CheckReport {
    CheckReport {
        finished: 1_764_000_000,
        seconds: 8,
        results: rows,
    }
}

#[test]
fn the_report_survives_the_bus_and_the_state_file() {
    let r = report(vec![
        row(DEFAULT_SCHEDULER, 12.5, 9000, 1000.0),
        row("gaming", 0.5, 1200, 990.0),
    ]);
    assert_eq!(CheckReport::from_dict(&r.to_dict()), Some(r.clone()));
    let json = serde_json::to_string(&r).expect("json");
    assert_eq!(
        serde_json::from_str::<CheckReport>(&json).expect("parse"),
        r
    );
    assert_eq!(CheckReport::from_dict(&Dict::new()), None, "no check yet");
}

#[test]
fn the_best_profile_is_judged_against_the_default() {
    let helps = report(vec![
        row(DEFAULT_SCHEDULER, 12.5, 9000, 1000.0),
        row("powersave", 20.0, 20000, 800.0),
        row("gaming", 0.5, 1200, 990.0),
    ]);
    match helps.verdict() {
        Verdict::Helps {
            profile,
            comparison,
        } => {
            assert_eq!(profile, "gaming");
            assert!((comparison.load_ratio - 0.99).abs() < 1e-9);
        }
        other => panic!("{other:?}"),
    }
    let worse = report(vec![
        row(DEFAULT_SCHEDULER, 0.5, 1000, 1000.0),
        row("gaming", 10.0, 8000, 1000.0),
    ]);
    assert!(matches!(worse.verdict(), Verdict::DefaultBetter { .. }));
    let same = report(vec![
        row(DEFAULT_SCHEDULER, 0.0, 1000, 1000.0),
        row("gaming", 0.2, 1100, 1000.0),
    ]);
    assert!(matches!(same.verdict(), Verdict::NoClearDifference { .. }));
    // Equal misses: the wakeup tail decides.
    let tail = report(vec![
        row(DEFAULT_SCHEDULER, 0.0, 5000, 1000.0),
        row("gaming", 0.0, 1000, 1000.0),
    ]);
    assert!(matches!(tail.verdict(), Verdict::Helps { .. }));
    assert_eq!(
        report(vec![row(DEFAULT_SCHEDULER, 1.0, 1, 1.0)]).verdict(),
        Verdict::Incomplete
    );
}

#[test]
fn options_are_checked_key_by_key() {
    let opts = CheckOptions {
        profiles: vec!["gaming".into()],
        seconds: 5,
        allow_battery: true,
    };
    assert_eq!(CheckOptions::from_dict(&opts.to_dict()), Ok(opts));
    assert_eq!(
        CheckOptions::from_dict(&Dict::new()),
        Ok(CheckOptions::default())
    );
    let bad = |key: &str, value: Value<'_>| {
        let dict = Dict::from([(key.to_owned(), owned(value))]);
        match CheckOptions::from_dict(&dict) {
            Err(Error::InvalidArgs(m)) => m,
            other => panic!("{other:?}"),
        }
    };
    assert!(bad("seconds", Value::from(1u32)).contains("from 3 to 120"));
    assert!(bad("seconds", Value::from("8")).contains("must be a u"));
    assert!(bad("profiles", Value::from("gaming")).contains("array of strings"));
    assert!(bad("colour", Value::from(true)).contains("unknown option"));
}
