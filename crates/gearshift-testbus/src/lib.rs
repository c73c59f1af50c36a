//! Test harness: a private system bus (dbus-daemon with the project's policy file), polkit's
//! double from python-dbusmock, and gearshiftd run against a scheduler double and a fake
//! sysfs. Used by the tests of the daemon and of its clients; never by the product.

use std::io::{BufRead, BufReader};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

pub use gearshift_testkit::bus::{repo_root, system_bus_config};
use tempfile::TempDir;

/// uid/gid of `nobody`: the unprivileged caller in tests.
pub const NOBODY: u32 = 65534;

/// A workspace binary (built on demand), e.g. `gearshiftd` or `gearshiftctl`.
pub fn workspace_bin(name: &str) -> PathBuf {
    let exe = std::env::current_exe().expect("test binary path");
    // target/<profile>/deps/<test> -> target/<profile>/<name>
    let dir = exe.parent().and_then(Path::parent).expect("target dir");
    let path = dir.join(name);
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let status = Command::new(cargo)
        .args(["build", "--quiet", "--bin", name])
        .current_dir(repo_root())
        .status()
        .expect("running cargo build");
    assert!(status.success(), "cargo build --bin {name} failed");
    assert!(
        path.exists(),
        "{} missing after cargo build",
        path.display()
    );
    path
}

/// World-traversable temporary directory, so unprivileged callers reach the bus socket.
fn open_tempdir() -> TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).expect("chmod");
    dir
}

fn wait_until(what: &str, timeout: Duration, mut ready: impl FnMut() -> bool) {
    let deadline = Instant::now() + timeout;
    while !ready() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn kill(child: &mut Child) {
    let _ = child.kill();
    let _ = child.wait();
}

/// A private dbus-daemon configured like the system bus, with gearshiftd's policy file.
pub struct TestBus {
    dir: TempDir,
    address: String,
    daemon: Child,
    /// Doubles of other services, by the bus name they own.
    doubles: Vec<(String, Child)>,
}

impl TestBus {
    pub fn start() -> Self {
        Self::start_with(None)
    }

    /// A bus that can start (activate) the services described in `services` (`.service`
    /// files), as the system bus does with /usr/share/dbus-1/system-services.
    pub fn start_with_services(services: &Path) -> Self {
        Self::start_with(Some(services))
    }

    fn start_with(services: Option<&Path>) -> Self {
        let dir = open_tempdir();
        let socket = dir.path().join("system_bus_socket");
        let config = match services {
            None => system_bus_config(&socket),
            Some(services) => gearshift_testkit::bus::bus_config(
                &format!("unix:path={}", socket.display()),
                Some(services),
            ),
        };
        let config_path = dir.path().join("bus.conf");
        std::fs::write(&config_path, config).expect("write bus config");
        let mut daemon = Command::new("dbus-daemon")
            .arg(format!("--config-file={}", config_path.display()))
            .args(["--nofork", "--print-address"])
            .stdout(Stdio::piped())
            .spawn()
            .expect("dbus-daemon (apt package dbus, see tools/bootstrap.sh)");
        let mut line = String::new();
        BufReader::new(daemon.stdout.take().expect("stdout"))
            .read_line(&mut line)
            .expect("bus address");
        let address = line.trim().to_owned();
        assert!(!address.is_empty(), "dbus-daemon printed no address");
        Self {
            dir,
            address,
            daemon,
            doubles: Vec::new(),
        }
    }

    pub fn address(&self) -> &str {
        &self.address
    }

    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// Points `cmd`'s system bus here.
    pub fn env<'a>(&self, cmd: &'a mut Command) -> &'a mut Command {
        cmd.env("DBUS_SYSTEM_BUS_ADDRESS", &self.address)
    }

    /// A connection as the test's own user (root in CI).
    pub async fn connect(&self) -> zbus::Connection {
        zbus::connection::Builder::address(self.address.as_str())
            .expect("address")
            .build()
            .await
            .expect("connect to the private bus")
    }

    /// Starts a python-dbusmock template (e.g. "polkitd", "upower") on this bus and waits
    /// until it owns `name`.
    pub fn start_template(&mut self, template: &str, name: &str) {
        let mut cmd = Command::new("/usr/bin/python3");
        cmd.args(["-m", "dbusmock", "--system", "--template", template])
            .stdout(Stdio::null());
        self.spawn_double(cmd, name);
    }

    /// Starts an empty python-dbusmock object `path` with `interface` owning `name`; give it
    /// properties with [`TestBus::mock_add_property`].
    pub fn start_mock(&mut self, name: &str, path: &str, interface: &str) {
        let mut cmd = Command::new("/usr/bin/python3");
        cmd.args(["-m", "dbusmock", "--system", name, path, interface])
            .stdout(Stdio::null());
        self.spawn_double(cmd, name);
    }

    fn spawn_double(&mut self, mut cmd: Command, name: &str) {
        let child = self.env(&mut cmd).spawn().expect("python3-dbusmock");
        self.doubles.push((name.to_owned(), child));
        wait_until(
            &format!("{name} on the bus"),
            Duration::from_secs(20),
            || self.has_owner(name),
        );
    }

    /// Stops the double owning `name` (the service leaves the bus).
    pub fn stop_double(&mut self, name: &str) {
        self.doubles.retain_mut(|(owned, child)| {
            if owned == name {
                kill(child);
            }
            owned != name
        });
        wait_until(&format!("{name} gone"), Duration::from_secs(10), || {
            !self.has_owner(name)
        });
    }

    /// Adds a property to a dbusmock object (`signature` and `value` as busctl takes them).
    pub fn mock_add_property(&self, target: Target, property: &str, signature: &str, value: &str) {
        self.property_call(
            target,
            ("org.freedesktop.DBus.Mock", "AddProperty"),
            property,
            signature,
            value,
        );
    }

    /// Sets a property of another service's double, which emits PropertiesChanged.
    pub fn set_property(&self, target: Target, property: &str, signature: &str, value: &str) {
        self.property_call(
            target,
            ("org.freedesktop.DBus.Properties", "Set"),
            property,
            signature,
            value,
        );
    }

    /// Calls `method` (interface, member) with (target's interface, property, value).
    fn property_call(
        &self,
        target: Target,
        method: (&str, &str),
        property: &str,
        signature: &str,
        value: &str,
    ) {
        let (name, path, interface) = target;
        let args = [
            name, path, method.0, method.1, "ssv", interface, property, signature, value,
        ];
        let out = self.busctl_call(None, &args);
        assert!(
            out.status.success(),
            "{} {property}: {}",
            method.1,
            String::from_utf8_lossy(&out.stderr)
        );
    }

    /// polkit's double; allows nothing until [`TestBus::polkit_allow`].
    pub fn start_polkit(&mut self) {
        self.start_template("polkitd", "org.freedesktop.PolicyKit1");
    }

    /// The polkit actions the double grants from now on.
    pub fn polkit_allow(&self, actions: &[&str]) {
        let mut args = vec![
            "org.freedesktop.PolicyKit1",
            "/org/freedesktop/PolicyKit1/Authority",
            "org.freedesktop.DBus.Mock",
            "SetAllowed",
            "as",
        ];
        let n = actions.len().to_string();
        args.push(&n);
        args.extend_from_slice(actions);
        let out = self.busctl_call(None, &args);
        assert!(
            out.status.success(),
            "SetAllowed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    pub fn has_owner(&self, name: &str) -> bool {
        let out = self.busctl(None, &["status", name]);
        out.status.success()
    }

    /// `busctl --address=<bus> <args>`, as `uid` (both uid and gid) when given.
    pub fn busctl(&self, uid: Option<u32>, args: &[&str]) -> Output {
        let mut cmd = Command::new("busctl");
        cmd.arg(format!("--address={}", self.address)).args(args);
        run_as(&mut cmd, uid);
        cmd.output().expect("busctl")
    }

    /// `busctl call` (the arguments after `call`).
    pub fn busctl_call(&self, uid: Option<u32>, args: &[&str]) -> Output {
        let mut all = vec!["call"];
        all.extend_from_slice(args);
        self.busctl(uid, &all)
    }
}

/// A service's object: (bus name, object path, interface).
pub type Target<'a> = (&'a str, &'a str, &'a str);

pub const UPOWER: Target<'static> = (
    "org.freedesktop.UPower",
    "/org/freedesktop/UPower",
    "org.freedesktop.UPower",
);
/// UPower's display device: the charge the desktop shows (`Percentage`, 0 without a battery).
pub const UPOWER_DISPLAY: Target<'static> = (
    "org.freedesktop.UPower",
    "/org/freedesktop/UPower/devices/DisplayDevice",
    "org.freedesktop.UPower.Device",
);
pub const PPD: Target<'static> = (
    "org.freedesktop.UPower.PowerProfiles",
    "/org/freedesktop/UPower/PowerProfiles",
    "org.freedesktop.UPower.PowerProfiles",
);
pub const PPD_LEGACY: Target<'static> = (
    "net.hadess.PowerProfiles",
    "/net/hadess/PowerProfiles",
    "net.hadess.PowerProfiles",
);

/// The outcome of [`TestBus::call_as`]: the reply as JSON, or the error's name and message.
pub type CallResult = Result<String, (String, String)>;

impl TestBus {
    /// Calls `method` of gearshiftd's interface as `uid` (python3-dbus, so the caller really
    /// is another process of that user). `args` is a JSON array matching `signature`.
    pub fn call_as(
        &self,
        uid: Option<u32>,
        method: &str,
        signature: &str,
        args: &str,
    ) -> CallResult {
        self.call_iface_as(uid, gearshift_dbus::INTERFACE, method, signature, args)
    }

    /// Calls `method` of another object on this bus as `uid` (see [`TestBus::call_as`]).
    pub fn call_target_as(
        &self,
        uid: Option<u32>,
        target: Target,
        method: &str,
        signature: &str,
        args: &str,
    ) -> CallResult {
        self.call_python(uid, target, method, signature, args)
    }

    /// Writes a property of gearshiftd as `uid`.
    pub fn set_property_as(&self, uid: Option<u32>, name: &str, json_value: &str) -> CallResult {
        let args = format!("[{:?}, {name:?}, {json_value}]", gearshift_dbus::INTERFACE);
        self.call_iface_as(uid, "org.freedesktop.DBus.Properties", "Set", "ssv", &args)
    }

    fn call_iface_as(
        &self,
        uid: Option<u32>,
        interface: &str,
        method: &str,
        signature: &str,
        args: &str,
    ) -> CallResult {
        let target = (
            gearshift_dbus::BUS_NAME,
            gearshift_dbus::OBJECT_PATH,
            interface,
        );
        self.call_python(uid, target, method, signature, args)
    }

    fn call_python(
        &self,
        uid: Option<u32>,
        (name, path, interface): Target,
        method: &str,
        signature: &str,
        args: &str,
    ) -> CallResult {
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("dbus_call.py");
        let mut cmd = Command::new("/usr/bin/python3");
        cmd.arg(script)
            .args([name, path, interface, method, signature, args]);
        run_as(self.env(&mut cmd), uid);
        let out = cmd.output().expect("python3 dbus_call.py");
        let text = String::from_utf8_lossy(&out.stdout);
        let reply: serde_json::Value = serde_json::from_str(text.trim()).unwrap_or_else(|e| {
            panic!(
                "dbus_call.py: {e}: {text} {}",
                String::from_utf8_lossy(&out.stderr)
            )
        });
        match reply.get("ok") {
            Some(ok) => Ok(ok.to_string()),
            None => Err((
                reply["error"].as_str().unwrap_or_default().to_owned(),
                reply["message"].as_str().unwrap_or_default().to_owned(),
            )),
        }
    }
}

impl Drop for TestBus {
    fn drop(&mut self) {
        for (_, child) in &mut self.doubles {
            kill(child);
        }
        kill(&mut self.daemon);
    }
}

/// Makes `cmd` run as `uid` (gid the same) when given.
pub fn run_as(cmd: &mut Command, uid: Option<u32>) -> &mut Command {
    if let Some(uid) = uid {
        // std drops supplementary groups when root changes uid.
        cmd.uid(uid).gid(uid);
    }
    cmd
}

mod daemon;
pub use daemon::{DaemonUnderTest, Double, Setup};
