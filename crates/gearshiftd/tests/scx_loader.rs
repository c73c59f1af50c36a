//! gearshiftd's `org.scx.Loader` (scx_loader's interface): its contract, the real scxctl
//! (crates.io, pinned in gearshift_testkit::tools) against it, the calls scx_loader's clients
//! make, polkit, and that it never takes the name from a running or installed scx_loader.

mod common;

use std::path::PathBuf;
use std::process::{Command, Output};
use std::sync::OnceLock;
use std::time::Duration;

use common::*;
use futures_util::StreamExt;
use gearshift_dbus::{ACTION_MANAGE, ACTION_SWITCH_PROFILE};
use gearshift_testbus::run_as;
use zbus::zvariant::Value;

const LOADER: &str = "org.scx.Loader";
const LOADER_PATH: &str = "/org/scx/Loader";
const CONTRACT: &str = include_str!("../../../dbus/org.scx.Loader.xml");
const UNSUPPORTED_SCHEDULER: &str = "io.github.gearshift.Error.UnsupportedScheduler";

#[zbus::proxy(
    interface = "org.scx.Loader",
    default_service = "org.scx.Loader",
    default_path = "/org/scx/Loader"
)]
trait Loader {
    fn start_scheduler(&self, scx_name: &str, sched_mode: u32) -> zbus::Result<()>;
    fn start_scheduler_with_args(&self, scx_name: &str, scx_args: &[&str]) -> zbus::Result<()>;
    fn switch_scheduler(&self, scx_name: &str, sched_mode: u32) -> zbus::Result<()>;
    fn switch_scheduler_with_args(&self, scx_name: &str, scx_args: &[&str]) -> zbus::Result<()>;
    fn stop_scheduler(&self) -> zbus::Result<()>;
    fn restart_scheduler(&self) -> zbus::Result<()>;
    fn restore_default(&self) -> zbus::Result<()>;
    fn scheduler_modes(&self, scx_name: &str) -> zbus::Result<Vec<u32>>;
    fn scheduler_mode_args(&self, scx_name: &str) -> zbus::Result<Vec<(u32, Vec<String>)>>;
    #[zbus(property)]
    fn current_scheduler(&self) -> zbus::Result<String>;
    #[zbus(property)]
    fn scheduler_mode(&self) -> zbus::Result<u32>;
    #[zbus(property)]
    fn current_scheduler_args(&self) -> zbus::Result<Vec<String>>;
    #[zbus(property)]
    fn supported_schedulers(&self) -> zbus::Result<Vec<String>>;
    #[zbus(property)]
    fn default_scheduler(&self) -> zbus::Result<String>;
    #[zbus(property)]
    fn default_mode(&self) -> zbus::Result<u32>;
}

/// A proxy that reads properties fresh (changes come from other callers too).
async fn loader(conn: &zbus::Connection) -> LoaderProxy<'static> {
    LoaderProxy::builder(conn)
        .cache_properties(zbus::proxy::CacheProperties::No)
        .build()
        .await
        .expect("org.scx.Loader proxy")
}

/// Waits until gearshiftd owns org.scx.Loader (it asks after its own name).
fn wait_for_loader(bus: &TestBus) {
    let deadline = std::time::Instant::now() + SECS_10;
    while !bus.has_owner(LOADER) {
        assert!(
            std::time::Instant::now() < deadline,
            "gearshiftd did not take {LOADER}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

async fn loader_world() -> World {
    let w = default_world().await;
    wait_for_loader(&w.bus);
    w
}

/// The D-Bus error's name and message.
fn error_of<T: std::fmt::Debug>(result: zbus::Result<T>) -> (String, String) {
    match result {
        Err(zbus::Error::MethodError(name, message, _)) => {
            (name.to_string(), message.unwrap_or_default())
        }
        other => panic!("expected a D-Bus error, got {other:?}"),
    }
}

/// scxctl from crates.io, built once into the cache (`cargo xtask tools` does it ahead).
fn scxctl_bin() -> &'static PathBuf {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| {
        gearshift_testkit::tools::scxctl(&gearshift_testkit::cache::Cache::from_env())
            .unwrap_or_else(|e| panic!("scxctl: {e} (cargo xtask tools builds it)"))
    })
}

/// Runs scxctl against the private bus, as `uid` when given (then from a copy in the bus's
/// directory: the cache under /root is not open to other users).
fn scxctl(bus: &TestBus, uid: Option<u32>, args: &[&str]) -> Output {
    let bin = match uid {
        None => scxctl_bin().clone(),
        Some(_) => {
            let copy = bus.dir().join("scxctl");
            if !copy.exists() {
                std::fs::copy(scxctl_bin(), &copy).expect("copy scxctl");
            }
            copy
        }
    };
    let mut cmd = Command::new(bin);
    cmd.args(args).env("NO_COLOR", "1");
    run_as(bus.env(&mut cmd), uid);
    cmd.output().expect("running scxctl")
}

/// stdout of a run that must succeed.
fn succeeded(out: &Output) -> String {
    assert!(
        out.status.success(),
        "scxctl failed: {}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// stdout and stderr of a run that must fail.
fn failed(out: &Output) -> String {
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!out.status.success(), "scxctl should have failed: {text}");
    text
}

#[tokio::test]
async fn live_introspection_matches_the_contract() {
    let w = loader_world().await;
    let live = introspect(&w.conn, LOADER, LOADER_PATH).await.unwrap();
    let contract = shape(CONTRACT, LOADER);
    assert!(contract.len() >= 15, "contract parsed to {contract:?}");
    assert_eq!(shape(&live, LOADER), contract);
}

#[tokio::test]
async fn scxctl_lists_gets_restarts_stops_and_restores_gearshift() {
    let w = loader_world().await;
    let bus = &w.bus;
    let out = succeeded(&scxctl(bus, None, &["list"]));
    assert!(
        out.contains(r#"supported schedulers: ["gearshift"]"#),
        "{out}"
    );
    let out = succeeded(&scxctl(bus, None, &["get"]));
    assert!(out.contains("no scx scheduler running"), "{out}");

    // scxctl turns scheduler names into its own built-in list before calling, so it refuses
    // to start or name a scheduler it does not know, scx_gearshift included: these never
    // reach gearshiftd (see README, "scx_loader and scxctl").
    let out = failed(&scxctl(
        bus,
        None,
        &["start", "-s", "gearshift", "-m", "gaming"],
    ));
    assert!(out.contains("this scxctl build does not"), "{out}");
    assert_eq!(state(&w.proxy).await, "stopped");

    // Started as scxctl's start would: StartScheduler(s, u).
    let l = loader(&w.conn).await;
    l.start_scheduler("scx_gearshift", 1).await.unwrap();
    assert_eq!(state(&w.proxy).await, "running");
    assert_eq!(l.current_scheduler().await.unwrap(), "scx_gearshift");
    let out = failed(&scxctl(bus, None, &["get"]));
    assert!(out.contains("scx_gearshift is not supported"), "{out}");
    let out = failed(&scxctl(bus, None, &["switch", "-m", "powersave"]));
    assert!(out.contains("scx_gearshift is not supported"), "{out}");
    assert_eq!(w.proxy.profile().await.unwrap(), "interactive");

    let pid = w.daemon.double.pid().expect("the double runs");
    let out = succeeded(&scxctl(bus, None, &["restart"]));
    assert!(out.contains("restarted"), "{out}");
    assert_eq!(state(&w.proxy).await, "running");
    assert_ne!(w.daemon.double.pid(), Some(pid), "a new scheduler process");
    assert_eq!(l.scheduler_mode().await.unwrap(), 1, "the mode survives");

    let out = succeeded(&scxctl(bus, None, &["stop"]));
    assert!(out.contains("stopped"), "{out}");
    assert_eq!(state(&w.proxy).await, "stopped");
    assert_eq!(l.current_scheduler().await.unwrap(), "unknown");
    let out = succeeded(&scxctl(bus, None, &["get"]));
    assert!(out.contains("no scx scheduler running"), "{out}");
    let out = failed(&scxctl(bus, None, &["restart"]));
    assert!(out.contains("No scheduler is running to restart"), "{out}");
    assert_eq!(state(&w.proxy).await, "stopped");

    // restore calls RestoreDefault, which starts scx_gearshift, and only then fails to name it.
    let out = failed(&scxctl(bus, None, &["restore"]));
    assert!(out.contains("scx_gearshift is not supported"), "{out}");
    assert_eq!(state(&w.proxy).await, "running");
    assert_eq!(w.proxy.profile().await.unwrap(), "interactive");
}

/// Waits for a PropertiesChanged of org.scx.Loader that sets `name` to `want`.
async fn changed_to(changes: &mut zbus::fdo::PropertiesChangedStream, name: &str, want: Value<'_>) {
    let found = tokio::time::timeout(SECS_10, async {
        while let Some(signal) = changes.next().await {
            let args = signal.args().expect("PropertiesChanged args");
            if args.changed_properties().get(name) == Some(&want) {
                return;
            }
        }
        panic!("PropertiesChanged stream ended");
    })
    .await;
    assert!(
        found.is_ok(),
        "no PropertiesChanged setting {name} to {want:?}"
    );
}

#[tokio::test]
async fn modes_select_profiles_and_are_reported() {
    let w = loader_world().await;
    let l = loader(&w.conn).await;
    let props = zbus::fdo::PropertiesProxy::builder(&w.conn)
        .destination(LOADER)
        .unwrap()
        .path(LOADER_PATH)
        .unwrap()
        .build()
        .await
        .unwrap();
    let mut changes = props.receive_properties_changed().await.unwrap();
    assert_eq!(l.supported_schedulers().await.unwrap(), ["scx_gearshift"]);
    assert_eq!(l.default_scheduler().await.unwrap(), "scx_gearshift");
    assert_eq!(l.default_mode().await.unwrap(), 0);
    assert_eq!(l.scheduler_mode().await.unwrap(), 0);

    // Switching a stopped scheduler starts it, as scx_loader does.
    l.switch_scheduler("scx_gearshift", 2).await.unwrap();
    changed_to(
        &mut changes,
        "CurrentScheduler",
        Value::from("scx_gearshift"),
    )
    .await;
    changed_to(&mut changes, "SchedulerMode", Value::from(2u32)).await;
    assert_eq!(state(&w.proxy).await, "running");
    assert_eq!(w.proxy.profile().await.unwrap(), "low-power");
    assert!(!w.proxy.preemption().await.unwrap());

    // Gaming and LowLatency select the same profile; the one asked for is reported.
    for (mode, profile) in [(3, "interactive"), (1, "interactive"), (4, "throughput")] {
        l.switch_scheduler("gearshift", mode).await.unwrap();
        changed_to(&mut changes, "SchedulerMode", Value::from(mode)).await;
        assert_eq!(w.proxy.profile().await.unwrap(), profile, "mode {mode}");
        assert_eq!(l.scheduler_mode().await.unwrap(), mode);
    }
    // Changes made through gearshiftd's own interface show up too.
    w.proxy.set_profile("low-power").await.unwrap();
    changed_to(&mut changes, "SchedulerMode", Value::from(2u32)).await;
    w.proxy.set_profile("fifo").await.unwrap();
    changed_to(&mut changes, "SchedulerMode", Value::from(0u32)).await;
    // No arguments: the scheduler's defaults, Auto.
    l.switch_scheduler_with_args("scx_gearshift", &[])
        .await
        .unwrap();
    assert_eq!(w.proxy.profile().await.unwrap(), "interactive");
    assert_eq!(
        l.current_scheduler_args().await.unwrap(),
        Vec::<String>::new()
    );

    assert_eq!(
        l.scheduler_modes("scx_gearshift").await.unwrap(),
        [0, 1, 2, 3, 4]
    );
    let args = l.scheduler_mode_args("scx_gearshift").await.unwrap();
    assert_eq!(args.len(), 5);
    assert_eq!(
        args[2],
        (
            2,
            ["--mode", "low-power", "--preemption", "false"]
                .map(String::from)
                .to_vec()
        )
    );

    // Bad requests are refused and change nothing.
    let (name, message) = error_of(l.switch_scheduler("scx_gearshift", 9).await);
    assert_eq!(name, "io.github.gearshift.Error.InvalidMode");
    assert!(message.contains("0 (Auto)"), "{message}");
    let (name, message) = error_of(
        l.switch_scheduler_with_args("scx_gearshift", &["--slice-us", "5000"])
            .await,
    );
    assert_eq!(name, "io.github.gearshift.Error.UnsupportedArguments");
    assert!(message.contains("--slice-us"), "{message}");
    assert_eq!(w.proxy.profile().await.unwrap(), "interactive");

    l.stop_scheduler().await.unwrap();
    changed_to(&mut changes, "CurrentScheduler", Value::from("unknown")).await;
    assert_eq!(l.scheduler_mode().await.unwrap(), 0);
    let (name, _) = error_of(l.restart_scheduler().await);
    assert_eq!(name, "io.github.gearshift.Error.NotRunning");
    l.restore_default().await.unwrap();
    assert_eq!(state(&w.proxy).await, "running");
    assert_eq!(w.proxy.profile().await.unwrap(), "interactive");
}

#[tokio::test]
async fn other_schedulers_get_a_clear_error_and_change_nothing() {
    let w = loader_world().await;
    let l = loader(&w.conn).await;
    let refusals = [
        (
            "scx_bpfland",
            error_of(l.start_scheduler("scx_bpfland", 1).await),
        ),
        (
            "scx_lavd",
            error_of(l.switch_scheduler("scx_lavd", 2).await),
        ),
        (
            "scx_rusty",
            error_of(l.start_scheduler_with_args("scx_rusty", &[]).await),
        ),
        (
            "scx_cosmos",
            error_of(l.switch_scheduler_with_args("scx_cosmos", &["-v"]).await),
        ),
        ("scx_flash", error_of(l.scheduler_modes("scx_flash").await)),
    ];
    for (scheduler, (name, message)) in refusals {
        assert_eq!(name, UNSUPPORTED_SCHEDULER, "{scheduler}");
        assert!(
            message.contains(scheduler) && message.contains("scx_gearshift only"),
            "{message}"
        );
    }
    // scxctl checks names against SupportedSchedulers itself.
    let out = failed(&scxctl(&w.bus, None, &["start", "-s", "bpfland"]));
    assert!(out.contains("invalid value 'bpfland'"), "{out}");
    assert_eq!(state(&w.proxy).await, "stopped");
    assert_eq!(w.proxy.profile().await.unwrap(), "interactive");
}

#[tokio::test]
async fn callers_need_the_polkit_actions_of_scheduler1() {
    let w = loader_world().await;
    w.proxy.start().await.unwrap();
    let switch = |mode: u32| {
        w.bus.call_target_as(
            Some(NOBODY),
            (LOADER, LOADER_PATH, LOADER),
            "SwitchScheduler",
            "su",
            &format!(r#"["scx_gearshift", {mode}]"#),
        )
    };
    // polkit's double allows nothing yet.
    let msg = denied(switch(2));
    assert!(msg.contains(ACTION_SWITCH_PROFILE), "{msg}");
    for command in ["stop", "restart"] {
        let out = failed(&scxctl(&w.bus, Some(NOBODY), &[command]));
        assert!(out.contains(ACTION_MANAGE), "{command}: {out}");
    }
    assert_eq!(state(&w.proxy).await, "running");
    assert_eq!(w.proxy.profile().await.unwrap(), "interactive");

    // Choosing a mode is a profile switch...
    w.bus.polkit_allow(&[ACTION_SWITCH_PROFILE]);
    switch(2).expect("SwitchScheduler with switch-profile granted");
    assert_eq!(w.proxy.profile().await.unwrap(), "low-power");
    failed(&scxctl(&w.bus, Some(NOBODY), &["stop"]));
    // ... and starting the scheduler on the way needs manage, checked before any change.
    w.proxy.stop().await.unwrap();
    let msg = denied(switch(4));
    assert!(msg.contains(ACTION_MANAGE), "{msg}");
    assert_eq!(state(&w.proxy).await, "stopped");
    assert_eq!(w.proxy.profile().await.unwrap(), "low-power");

    w.bus.polkit_allow(&[ACTION_SWITCH_PROFILE, ACTION_MANAGE]);
    switch(4).expect("SwitchScheduler with both granted");
    assert_eq!(state(&w.proxy).await, "running");
    assert_eq!(w.proxy.profile().await.unwrap(), "throughput");
    succeeded(&scxctl(&w.bus, Some(NOBODY), &["stop"]));
    assert_eq!(state(&w.proxy).await, "stopped");
}

/// A stand-in for a running scx_loader.
struct OtherLoader;

#[zbus::interface(name = "org.scx.Loader")]
impl OtherLoader {
    #[zbus(property)]
    fn current_scheduler(&self) -> String {
        "scx_lavd".into()
    }
}

#[tokio::test]
async fn a_running_scx_loader_keeps_the_name() {
    let mut bus = TestBus::start();
    bus.start_polkit();
    let other = zbus::connection::Builder::address(bus.address())
        .unwrap()
        .serve_at(LOADER_PATH, OtherLoader)
        .unwrap()
        .name(LOADER)
        .unwrap()
        .build()
        .await
        .expect("the other loader takes the name");
    let daemon = DaemonUnderTest::start(&bus, Setup::default());
    let conn = bus.connect().await;
    eventually("gearshiftd's word on org.scx.Loader", SECS_10, || async {
        daemon.log().contains("is owned by another program")
    })
    .await;

    // The name and its clients stay with the other loader...
    let dbus = zbus::fdo::DBusProxy::new(&conn).await.unwrap();
    let owner = dbus
        .get_name_owner(LOADER.try_into().unwrap())
        .await
        .unwrap();
    assert_eq!(owner.as_str(), other.unique_name().unwrap().as_str());
    let l = loader(&conn).await;
    assert_eq!(l.current_scheduler().await.unwrap(), "scx_lavd");
    // ... and gearshiftd serves its own interface as ever, with no loader object of its own.
    let proxy = Scheduler1Proxy::new(&conn).await.unwrap();
    proxy.start().await.unwrap();
    assert_eq!(state(&proxy).await, "running");
    let gearshiftd = dbus
        .get_name_owner(gearshift_dbus::BUS_NAME.try_into().unwrap())
        .await
        .unwrap();
    let introspected = introspect(&conn, gearshiftd.as_str(), LOADER_PATH).await;
    match introspected {
        Err(zbus::fdo::Error::UnknownObject(_)) => {}
        Ok(xml) => assert!(!xml.contains(LOADER), "{xml}"),
        Err(e) => panic!("introspecting gearshiftd's {LOADER_PATH}: {e}"),
    }

    // It did not queue for the name either: when the other loader leaves, nobody has it.
    drop(l);
    other.close().await.unwrap();
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(!bus.has_owner(LOADER));
}

#[tokio::test]
async fn an_installed_scx_loader_keeps_the_name() {
    // The bus could start scx_loader on demand (its activation file is installed).
    let services = tempfile::tempdir().unwrap();
    std::fs::write(
        services.path().join("org.scx.Loader.service"),
        "[D-BUS Service]\nName=org.scx.Loader\nExec=/bin/false\nUser=root\n",
    )
    .unwrap();
    let bus = TestBus::start_with_services(services.path());
    let daemon = DaemonUnderTest::start(&bus, Setup::default());
    eventually("gearshiftd's word on org.scx.Loader", SECS_10, || async {
        daemon.log().contains("belongs to an installed scx_loader")
    })
    .await;
    assert!(!bus.has_owner(LOADER));
}

#[tokio::test]
async fn the_config_switch_turns_it_off() {
    let w = world(with_restart_config(
        "[compat]\nscx_loader = false",
        10_000,
        "",
    ))
    .await;
    eventually("gearshiftd's word on org.scx.Loader", SECS_10, || async {
        w.daemon.log().contains("[compat] scx_loader = false")
    })
    .await;
    assert!(!w.bus.has_owner(LOADER));
    w.proxy.start().await.unwrap();
    assert_eq!(state(&w.proxy).await, "running");
}
