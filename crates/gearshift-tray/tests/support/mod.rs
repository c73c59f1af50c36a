//! Test harness of the tray: a private session bus with a small StatusNotifierWatcher, the
//! private system bus of gearshift-testbus with gearshiftd, and a com.canonical.dbusmenu
//! reader.
#![allow(dead_code)]

use std::collections::HashMap;
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use futures_util::StreamExt;
use gearshift_dbus::Scheduler1Proxy;
use gearshift_testbus::{DaemonUnderTest, Setup, TestBus};
use tokio::sync::mpsc;
use zbus::message::Header;
use zbus::object_server::SignalEmitter;
use zbus::zvariant::{OwnedObjectPath, OwnedValue, Value};
use zbus::{MatchRule, MessageStream};

pub const TIMEOUT: Duration = Duration::from_secs(20);

/// A plain session dbus-daemon (`--session`: the distribution's session.conf).
pub struct SessionBus {
    address: String,
    daemon: Child,
    _config: Option<tempfile::TempDir>,
}

impl SessionBus {
    pub fn start() -> Self {
        Self::spawn(&["--session".into()], None)
    }

    /// A session bus that starts no services: a name nobody owns is unknown at once, instead
    /// of being activated from /usr/share/dbus-1/services with the caller's real home (and
    /// outliving the test). For a whole desktop shell, which asks for many.
    pub fn start_without_activation() -> Self {
        let dir = tempfile::tempdir().expect("tempdir");
        let config = dir.path().join("session.conf");
        std::fs::write(
            &config,
            format!(
                r#"<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <listen>unix:dir={}</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
    <allow own="*"/>
  </policy>
</busconfig>
"#,
                dir.path().display()
            ),
        )
        .expect("session bus config");
        Self::spawn(&[format!("--config-file={}", config.display())], Some(dir))
    }

    fn spawn(args: &[String], config: Option<tempfile::TempDir>) -> Self {
        let mut daemon = Command::new("dbus-daemon")
            .args(args)
            .args(["--nofork", "--print-address"])
            .stdout(Stdio::piped())
            .spawn()
            .expect("dbus-daemon (apt package dbus)");
        let mut line = String::new();
        BufReader::new(daemon.stdout.take().expect("stdout"))
            .read_line(&mut line)
            .expect("session bus address");
        let address = line.trim().to_owned();
        assert!(!address.is_empty(), "dbus-daemon printed no address");
        Self {
            address,
            daemon,
            _config: config,
        }
    }

    pub fn address(&self) -> &str {
        &self.address
    }

    pub async fn connect(&self) -> zbus::Connection {
        zbus::connection::Builder::address(self.address.as_str())
            .expect("address")
            .build()
            .await
            .expect("connect to the session bus")
    }
}

impl Drop for SessionBus {
    fn drop(&mut self) {
        let _ = self.daemon.kill();
        let _ = self.daemon.wait();
    }
}

/// org.kde.StatusNotifierWatcher, as much of it as an item uses: it reports each registration
/// (the bus name of the item) on a channel.
pub struct Watcher {
    items: Vec<String>,
    registered: mpsc::UnboundedSender<String>,
}

#[zbus::interface(name = "org.kde.StatusNotifierWatcher")]
impl Watcher {
    async fn register_status_notifier_item(
        &mut self,
        #[zbus(header)] header: Header<'_>,
        #[zbus(signal_emitter)] emitter: SignalEmitter<'_>,
        service: String,
    ) {
        // The spec allows a bus name or an object path (then the sender is the bus name).
        let name = if service.starts_with('/') {
            header.sender().map(|s| s.to_string()).unwrap_or_default()
        } else {
            service
        };
        self.items.push(name.clone());
        let _ = Self::status_notifier_item_registered(&emitter, &name).await;
        let _ = self.registered.send(name);
    }

    fn register_status_notifier_host(&self, _service: String) {}

    #[zbus(property)]
    fn registered_status_notifier_items(&self) -> Vec<String> {
        self.items.clone()
    }

    #[zbus(property)]
    fn is_status_notifier_host_registered(&self) -> bool {
        true
    }

    #[zbus(property)]
    fn protocol_version(&self) -> i32 {
        0
    }

    #[zbus(signal)]
    async fn status_notifier_item_registered(
        emitter: &SignalEmitter<'_>,
        service: &str,
    ) -> zbus::Result<()>;
}

/// One entry of a dbusmenu layout, flattened.
#[derive(Debug, Clone, PartialEq)]
pub struct Item {
    pub id: i32,
    pub label: String,
    pub toggle_type: String,
    pub checked: bool,
    pub enabled: bool,
}

fn text(props: &HashMap<String, OwnedValue>, key: &str) -> String {
    match props.get(key).map(|v| &**v) {
        Some(Value::Str(s)) => s.to_string(),
        _ => String::new(),
    }
}

fn flatten(node: &Value<'_>, out: &mut Vec<Item>) {
    let Value::Structure(s) = node else {
        panic!("layout node is not a structure: {node:?}")
    };
    let fields = s.fields();
    let Value::I32(id) = fields[0] else {
        panic!("layout id: {:?}", fields[0])
    };
    let props: HashMap<String, OwnedValue> = fields[1]
        .try_clone()
        .expect("props")
        .try_into()
        .expect("a{sv}");
    if id != 0 {
        out.push(Item {
            id,
            label: text(&props, "label"),
            toggle_type: text(&props, "toggle-type"),
            checked: matches!(props.get("toggle-state").map(|v| &**v), Some(Value::I32(1))),
            enabled: !matches!(props.get("enabled").map(|v| &**v), Some(Value::Bool(false))),
        });
    }
    let Value::Array(children) = &fields[2] else {
        panic!("layout children: {:?}", fields[2])
    };
    for child in children.iter() {
        let child = match child {
            Value::Value(inner) => &**inner,
            other => other,
        };
        flatten(child, out);
    }
}

/// The registered item, seen from the session bus.
pub struct ItemClient {
    pub conn: zbus::Connection,
    pub name: String,
    pub menu: OwnedObjectPath,
}

impl ItemClient {
    pub async fn new(conn: zbus::Connection, name: String) -> Self {
        let mut this = Self {
            conn,
            name,
            menu: OwnedObjectPath::try_from("/").expect("path"),
        };
        this.menu = this
            .item_property("Menu")
            .await
            .try_into()
            .expect("Menu is o");
        this
    }

    pub async fn item_property(&self, name: &str) -> OwnedValue {
        let props = zbus::fdo::PropertiesProxy::builder(&self.conn)
            .destination(self.name.as_str())
            .expect("dest")
            .path("/StatusNotifierItem")
            .expect("path")
            .cache_properties(zbus::proxy::CacheProperties::No)
            .build()
            .await
            .expect("properties proxy");
        props
            .get(
                zbus::names::InterfaceName::from_static_str_unchecked("org.kde.StatusNotifierItem"),
                name,
            )
            .await
            .unwrap_or_else(|e| panic!("item property {name}: {e}"))
    }

    pub async fn icon_name(&self) -> String {
        self.item_property("IconName").await.try_into().expect("s")
    }

    /// Active, Passive or NeedsAttention.
    pub async fn status(&self) -> String {
        self.item_property("Status").await.try_into().expect("s")
    }

    /// The whole menu (GetLayout of the root, all levels, all properties).
    pub async fn layout(&self) -> Vec<Item> {
        let reply = self
            .conn
            .call_method(
                Some(self.name.as_str()),
                self.menu.as_str(),
                Some("com.canonical.dbusmenu"),
                "GetLayout",
                &(0i32, -1i32, Vec::<String>::new()),
            )
            .await
            .expect("GetLayout");
        let body = reply.body();
        type Node = (i32, HashMap<String, OwnedValue>, Vec<OwnedValue>);
        let (_revision, (id, props, children)): (u32, Node) =
            body.deserialize().expect("(u(ia{sv}av))");
        assert_eq!(id, 0, "the root");
        let _ = props;
        let mut items = Vec::new();
        for child in &children {
            flatten(child, &mut items);
        }
        items
    }

    pub async fn click(&self, id: i32) {
        self.conn
            .call_method(
                Some(self.name.as_str()),
                self.menu.as_str(),
                Some("com.canonical.dbusmenu"),
                "Event",
                &(id, "clicked", Value::I32(0), 0u32),
            )
            .await
            .expect("Event clicked");
    }

    /// The menu's change signals (LayoutUpdated, ItemsPropertiesUpdated).
    pub async fn menu_signals(&self) -> MessageStream {
        let rule = MatchRule::builder()
            .msg_type(zbus::message::Type::Signal)
            .interface("com.canonical.dbusmenu")
            .expect("interface")
            .build();
        MessageStream::for_match_rule(rule, &self.conn, Some(64))
            .await
            .expect("signal stream")
    }
}

/// Waits for the next menu change signal.
pub async fn next_menu_signal(stream: &mut MessageStream) -> String {
    let msg = tokio::time::timeout(TIMEOUT, stream.next())
        .await
        .expect("a menu signal in time")
        .expect("stream open")
        .expect("message");
    msg.header()
        .member()
        .map(|m| m.to_string())
        .unwrap_or_default()
}

pub fn find<'a>(items: &'a [Item], label: &str) -> &'a Item {
    items
        .iter()
        .find(|i| i.label == label)
        .unwrap_or_else(|| panic!("no item {label:?} in {items:#?}"))
}

pub fn checked_profiles(items: &[Item]) -> Vec<String> {
    items
        .iter()
        .filter(|i| i.toggle_type == "radio" && i.checked)
        .map(|i| i.label.clone())
        .collect()
}

pub struct World {
    pub system: TestBus,
    pub daemon: DaemonUnderTest,
    pub proxy: Scheduler1Proxy<'static>,
    pub session: SessionBus,
    pub watcher_conn: zbus::Connection,
    pub registered: mpsc::UnboundedReceiver<String>,
    pub tray: Option<Child>,
    pub dir: tempfile::TempDir,
}

impl World {
    pub async fn start() -> Self {
        Self::start_with(SessionBus::start()).await
    }

    /// The world with this session bus.
    pub async fn start_with(session: SessionBus) -> Self {
        Self::start_with_setup(session, Setup::default()).await
    }

    /// The world with this session bus and gearshiftd set up so.
    pub async fn start_with_setup(session: SessionBus, setup: Setup) -> Self {
        let mut system = TestBus::start();
        system.start_polkit();
        system.polkit_allow(&[
            gearshift_dbus::ACTION_SWITCH_PROFILE,
            gearshift_dbus::ACTION_MANAGE,
        ]);
        let daemon = DaemonUnderTest::start(&system, setup);
        let conn = system.connect().await;
        let proxy = Scheduler1Proxy::builder(&conn)
            .cache_properties(zbus::proxy::CacheProperties::No)
            .build()
            .await
            .expect("proxy");
        let (tx, registered) = mpsc::unbounded_channel();
        let watcher = Watcher {
            items: Vec::new(),
            registered: tx,
        };
        let watcher_conn = zbus::connection::Builder::address(session.address())
            .expect("address")
            .name("org.kde.StatusNotifierWatcher")
            .expect("name")
            .serve_at("/StatusNotifierWatcher", watcher)
            .expect("serve")
            .build()
            .await
            .expect("watcher connection");
        Self {
            system,
            daemon,
            proxy,
            session,
            watcher_conn,
            registered,
            tray: None,
            dir: tempfile::tempdir().expect("tempdir"),
        }
    }

    /// Starts gearshift-tray on both buses and waits until it registers; returns a client
    /// of its item.
    pub async fn start_tray(&mut self) -> ItemClient {
        let app = self.dir.path().join("app.sh");
        let opened = self.dir.path().join("app-opened");
        std::fs::write(&app, format!("#!/bin/sh\ntouch '{}'\n", opened.display()))
            .expect("app script");
        std::fs::set_permissions(&app, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .expect("chmod");
        let log = std::fs::File::create(self.dir.path().join("tray.log")).expect("log");
        let child = Command::new(env!("CARGO_BIN_EXE_gearshift-tray"))
            .env("DBUS_SESSION_BUS_ADDRESS", self.session.address())
            .env("DBUS_SYSTEM_BUS_ADDRESS", self.system.address())
            .env("GEARSHIFT_APP", &app)
            .env("RUST_LOG", "debug")
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .expect("start gearshift-tray");
        self.tray = Some(child);
        let name = tokio::time::timeout(TIMEOUT, self.registered.recv())
            .await
            .unwrap_or_else(|_| panic!("the tray did not register:\n{}", self.tray_log()))
            .expect("watcher channel");
        ItemClient::new(self.session.connect().await, name).await
    }

    pub fn app_opened(&self) -> bool {
        self.dir.path().join("app-opened").exists()
    }

    pub fn tray_log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("tray.log")).unwrap_or_default()
    }

    pub async fn profile(&self) -> String {
        self.proxy.profile().await.expect("Profile")
    }
}

impl Drop for World {
    fn drop(&mut self) {
        if let Some(mut tray) = self.tray.take() {
            let _ = tray.kill();
            let _ = tray.wait();
        }
        if std::thread::panicking() {
            eprintln!("---- gearshift-tray log ----\n{}", self.tray_log());
        }
    }
}

/// Polls the menu until `ok` holds for it; returns it.
pub async fn menu_until(
    client: &ItemClient,
    what: &str,
    ok: impl Fn(&[Item]) -> bool,
) -> Vec<Item> {
    let deadline = Instant::now() + TIMEOUT;
    loop {
        let items = client.layout().await;
        if ok(&items) {
            return items;
        }
        assert!(
            Instant::now() < deadline,
            "menu never showed {what}: {items:#?}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Polls `probe` until it holds.
pub async fn eventually<F, Fut>(what: &str, probe: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    assert!(
        holds_within(TIMEOUT, probe).await,
        "timed out waiting for {what}"
    );
}

/// Polls `probe` until it holds (true) or `within` has passed (false).
pub async fn holds_within<F, Fut>(within: Duration, mut probe: F) -> bool
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let deadline = Instant::now() + within;
    loop {
        if probe().await {
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}
