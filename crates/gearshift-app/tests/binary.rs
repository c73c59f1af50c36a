//! The installed program: `gearshift` starts, connects to gearshiftd and stays up.

mod common;

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use gearshift_testbus::{DaemonUnderTest, Setup, TestBus};

#[test]
fn the_gearshift_binary_opens_and_connects() {
    let x = common::Xvfb::start();
    let mut bus = TestBus::start();
    bus.start_polkit();
    let _daemon = DaemonUnderTest::start(&bus, Setup::default());
    let log = bus.dir().join("gearshift.log");
    let mut app = Command::new(env!("CARGO_BIN_EXE_gearshift"))
        .env("DISPLAY", &x.display)
        .env("GDK_BACKEND", "x11")
        .env("GSK_RENDERER", "cairo")
        .env("GSETTINGS_BACKEND", "memory")
        .env("GTK_A11Y", "none")
        .env(
            "DBUS_SESSION_BUS_ADDRESS",
            "unix:path=/nonexistent/gearshift-test",
        )
        .env("DBUS_SYSTEM_BUS_ADDRESS", bus.address())
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&log).expect("log"))
        .spawn()
        .expect("gearshift");
    // It shows up on the system bus as a client of gearshiftd.
    let deadline = Instant::now() + common::TIMEOUT;
    loop {
        let out = bus.busctl(None, &["list", "--no-pager"]);
        if String::from_utf8_lossy(&out.stdout).contains(" gearshift ") {
            break;
        }
        assert!(
            app.try_wait().expect("try_wait").is_none(),
            "gearshift exited: {}",
            std::fs::read_to_string(&log).unwrap_or_default()
        );
        assert!(Instant::now() < deadline, "gearshift never connected");
        std::thread::sleep(Duration::from_millis(100));
    }
    std::thread::sleep(Duration::from_secs(1));
    assert!(app.try_wait().expect("try_wait").is_none(), "still running");
    let _ = app.kill();
    let _ = app.wait();
    let stderr = std::fs::read_to_string(&log).unwrap_or_default();
    assert!(
        !stderr.contains("panicked") && !stderr.contains("CRITICAL"),
        "{stderr}"
    );
}
