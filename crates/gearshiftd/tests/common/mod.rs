//! Shared setup of the daemon's bus tests: a private system bus, polkit's double, gearshiftd
//! with the scheduler double.
#![allow(dead_code)]

use std::collections::BTreeSet;
use std::future::Future;
use std::time::{Duration, Instant};

#[allow(unused_imports)]
pub use gearshift_dbus::{Error, Scheduler1Proxy};
#[allow(unused_imports)]
pub use gearshift_testbus::{DaemonUnderTest, Setup, TestBus, NOBODY};

pub struct World {
    pub bus: TestBus,
    pub daemon: DaemonUnderTest,
    pub conn: zbus::Connection,
    pub proxy: Scheduler1Proxy<'static>,
}

pub async fn world(setup: Setup) -> World {
    let mut bus = TestBus::start();
    bus.start_polkit();
    let daemon = DaemonUnderTest::start(&bus, setup);
    let conn = bus.connect().await;
    // Fresh reads: the cache lags behind changes made by other callers.
    let proxy = Scheduler1Proxy::builder(&conn)
        .cache_properties(zbus::proxy::CacheProperties::No)
        .build()
        .await
        .expect("proxy");
    World {
        bus,
        daemon,
        conn,
        proxy,
    }
}

pub async fn default_world() -> World {
    world(Setup::default()).await
}

/// Polls `probe` until it returns true or `timeout` passes.
pub async fn eventually<F, Fut>(what: &str, timeout: Duration, mut probe: F)
where
    F: FnMut() -> Fut,
    Fut: Future<Output = bool>,
{
    let deadline = Instant::now() + timeout;
    while !probe().await {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// The daemon's object's org.freedesktop.DBus.Properties, for fresh reads and
/// PropertiesChanged.
pub async fn properties(conn: &zbus::Connection) -> zbus::fdo::PropertiesProxy<'static> {
    zbus::fdo::PropertiesProxy::builder(conn)
        .destination(gearshift_dbus::BUS_NAME)
        .expect("dest")
        .path(gearshift_dbus::OBJECT_PATH)
        .expect("path")
        .build()
        .await
        .expect("properties proxy")
}

/// State as read fresh from the daemon (not the proxy's cache).
pub async fn state(proxy: &Scheduler1Proxy<'_>) -> String {
    let props = properties(proxy.inner().connection()).await;
    let value = props
        .get(
            zbus::names::InterfaceName::from_static_str_unchecked(gearshift_dbus::INTERFACE),
            "State",
        )
        .await
        .expect("State");
    String::try_from(value).expect("State is a string")
}

pub async fn wait_state(proxy: &Scheduler1Proxy<'_>, want: &str, timeout: Duration) {
    let deadline = Instant::now() + timeout;
    loop {
        let now = state(proxy).await;
        if now == want {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "state is {now:?}, waited for {want:?}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

pub const SECS_10: Duration = Duration::from_secs(10);

/// The scheduler double's config: `extra` at the top, `restart` added to the quick
/// [restart] timings of the tests.
pub fn with_restart_config(extra: &str, start_timeout_ms: u32, restart: &str) -> Setup {
    Setup {
        top_level: Some(extra.to_owned()),
        start_timeout_ms,
        restart_extra: restart.to_owned(),
        ..Setup::default()
    }
}

/// Methods, signals and properties of `interface` in an introspection XML, as comparable sets.
pub fn shape(xml: &str, interface: &str) -> BTreeSet<String> {
    let node = zbus_xml::Node::from_reader(xml.as_bytes()).expect("introspection parses");
    let iface = node
        .interfaces()
        .iter()
        .find(|i| i.name() == interface)
        .unwrap_or_else(|| panic!("{interface} is not in the XML"));
    let mut out = BTreeSet::new();
    for m in iface.methods() {
        let args: Vec<String> = m
            .args()
            .iter()
            .map(|a| {
                format!(
                    "{}:{}:{:?}",
                    a.name().unwrap_or_default(),
                    a.ty().inner(),
                    a.direction()
                )
            })
            .collect();
        out.insert(format!("method {}({})", m.name(), args.join(", ")));
    }
    for s in iface.signals() {
        let args: Vec<String> = s
            .args()
            .iter()
            .map(|a| format!("{}:{}", a.name().unwrap_or_default(), a.ty().inner()))
            .collect();
        out.insert(format!("signal {}({})", s.name(), args.join(", ")));
    }
    for p in iface.properties() {
        out.insert(format!(
            "property {} {} {:?}",
            p.name(),
            p.ty().inner(),
            p.access()
        ));
    }
    out
}

pub const DENIED: &str = "org.freedesktop.DBus.Error.AccessDenied";

/// The message of an AccessDenied error; panics on anything else.
pub fn denied(result: gearshift_testbus::CallResult) -> String {
    match result {
        Err((name, message)) if name == DENIED => message,
        other => panic!("expected AccessDenied, got {other:?}"),
    }
}

/// The introspection XML of `path` at `destination`.
pub async fn introspect(
    conn: &zbus::Connection,
    destination: &str,
    path: &str,
) -> zbus::fdo::Result<String> {
    zbus::fdo::IntrospectableProxy::builder(conn)
        .destination(destination.to_owned())
        .expect("destination")
        .path(path.to_owned())
        .expect("path")
        .build()
        .await?
        .introspect()
        .await
}
