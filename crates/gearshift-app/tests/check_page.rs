//! The check page against the real gearshiftd (scheduler double) on a private system bus,
//! under Xvfb: a person runs a check, watches its progress, reads the result with its
//! verdict and date, and cancels a second one; the scheduler ends as it was.
//! One test function: GTK lives on one thread of the process.

mod common;

use std::time::{Duration, Instant};

use adw::prelude::*;
use gearshift_testbus::Setup;

/// Runs the UI until gearshiftd's `CheckRunning` is `want` (a whole check takes a while).
fn until_check_running(w: &common::World, want: bool, within: Duration) {
    let deadline = Instant::now() + within;
    let value = if want { "b true" } else { "b false" };
    while w.property("CheckRunning") != value {
        assert!(
            Instant::now() < deadline,
            "CheckRunning never became {want}"
        );
        w.run_for(Duration::from_millis(200));
    }
}

#[test]
fn a_person_runs_a_check_and_reads_its_result() {
    let w = common::world(Setup::default());
    w.wait_shows("Gearshift is stopped");
    let page = w.window.show_check_page();
    w.wait_shows("No check has been run on this machine yet.");
    page.seconds().set_value(3.0);

    w.press("Run Check");
    until_check_running(&w, true, common::TIMEOUT);
    w.wait("the Run button off while it runs", || {
        !page.run_button().is_sensitive()
    });
    w.wait_shows("Cancel");
    w.run_for(Duration::from_secs(3));
    w.screenshot("check-running");
    until_check_running(&w, false, Duration::from_secs(120));

    // The result: the date, one row per scheduler, and the verdict.
    w.wait_shows("Measured on");
    for row in ["kernel default", "interactive", "low-power", "Late frames"] {
        w.wait_shows(row);
    }
    let text = w.text().join("\n");
    assert!(
        ["helps here", "did better here", "No clear difference"]
            .iter()
            .any(|v| text.contains(v)),
        "{text}"
    );
    // What ran before runs again: nothing, the kernel's default scheduler.
    assert_eq!(w.property("State"), "s \"stopped\"");
    assert!(page.run_button().is_sensitive());
    w.screenshot("check");

    // A second check, cancelled: the daemon says so and the last result stays.
    w.press("Run Check");
    until_check_running(&w, true, common::TIMEOUT);
    w.wait_shows("Cancel");
    w.press("Cancel");
    until_check_running(&w, false, common::TIMEOUT);
    w.wait("the message about the cancelled check", || {
        w.window.toasts_shown() > 0
    });
    assert_eq!(w.property("State"), "s \"stopped\"");
    assert!(w.shows("Measured on"));
}
