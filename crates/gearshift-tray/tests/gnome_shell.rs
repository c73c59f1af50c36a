//! The GNOME Shell extension inside a real gnome-shell: Debian 12's gnome-shell 43, headless
//! with a virtual monitor (`--headless --virtual-monitor`, mutter's native backend drawing
//! with Mesa's software renderer), on a private session bus and gearshift-testbus's private
//! system bus with gearshiftd and its scheduler double. Its home and data directories are
//! private, its settings in memory (`GSETTINGS_BACKEND=memory`).
//!
//! The extension is enabled the way the Extensions app and `gnome-extensions enable` do it
//! (org.gnome.Shell.Extensions) and must reach ENABLED. The shell is driven from inside by a
//! test-only extension (data/gnome-shell-extension/tests/shell-driver/), whose virtual
//! pointer clicks the panel and the toggle through Clutter's input path. The screenshot comes
//! from org.gnome.Shell.Screenshot, which gnome-shell 43 serves to a few well-known names:
//! the test takes `org.gnome.Screenshot` (GNOME Screenshot's) on its private session bus.

mod support;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use support::{eventually, SessionBus, World};
use zbus::zvariant::OwnedValue;

const UUID: &str = "gearshift@gearshift.github.io";
const DRIVER_UUID: &str = "gearshift-shell-test@gearshift.github.io";
/// The toggle's title, as a JavaScript string.
const TOGGLE: &str = "'Gearshift'";

/// org.gnome.Shell.Extensions' ExtensionState (js/misc/extensionUtils.js in 43).
const ENABLED: f64 = 1.0;
const DISABLED: f64 = 2.0;
const ERROR: f64 = 3.0;
const OUT_OF_DATE: f64 = 4.0;
const INITIALIZED: f64 = 6.0;

/// gnome-shell starts in a second or two here (software rendering); CI machines are slower
/// and shared.
const STARTUP: Duration = Duration::from_secs(60);
/// How long a click's effect may take to show before the click counts as dropped.
const CLICK_EFFECT: Duration = Duration::from_secs(5);

fn repo() -> PathBuf {
    gearshift_testbus::repo_root()
}

/// gnome-shell's major version (`GNOME Shell 43.9`).
fn shell_major() -> u32 {
    let out = Command::new("gnome-shell")
        .arg("--version")
        .output()
        .expect("gnome-shell (apt package gnome-shell, installed by tools/bootstrap.sh)");
    let text = String::from_utf8_lossy(&out.stdout);
    text.trim()
        .rsplit(' ')
        .next()
        .and_then(|v| v.split('.').next())
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("unexpected gnome-shell --version: {text:?}"))
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("mkdir");
    for entry in std::fs::read_dir(from).expect("read_dir") {
        let entry = entry.expect("entry");
        std::fs::copy(entry.path(), to.join(entry.file_name())).expect("copy");
    }
}

/// A headless gnome-shell and a connection to its session bus.
struct Shell {
    dir: tempfile::TempDir,
    child: Child,
    conn: zbus::Connection,
    session_address: String,
}

impl Shell {
    /// Installs Gearshift's extension (the build for this gnome-shell) and the driver into a
    /// private data directory, starts gnome-shell and waits until it lists both.
    async fn start(w: &World) -> Self {
        let major = shell_major();
        // The driver and the 43-44 build use legacy imports; 45+ needs ES modules for both.
        assert!(
            (43..=44).contains(&major),
            "this test is written for gnome-shell 43-44 (Debian 12), found {major}"
        );
        let dir = tempfile::tempdir().expect("tempdir");
        let build = dir.path().join("build");
        let status = Command::new("python3")
            .arg(repo().join("tools/build-shell-extension.py"))
            .arg("--no-pack")
            .arg(&build)
            .status()
            .expect("python3");
        assert!(status.success(), "build-shell-extension.py failed");
        let extensions = dir.path().join("data/gnome-shell/extensions");
        copy_dir(&build.join("43"), &extensions.join(UUID));
        copy_dir(
            &repo().join("data/gnome-shell-extension/tests/shell-driver"),
            &extensions.join(DRIVER_UUID),
        );
        // The Wayland socket goes here; it must be private to the user.
        let runtime = dir.path().join("runtime");
        std::fs::create_dir(&runtime).expect("runtime dir");
        std::fs::set_permissions(
            &runtime,
            std::os::unix::fs::PermissionsExt::from_mode(0o700),
        )
        .expect("chmod");
        let log = std::fs::File::create(dir.path().join("shell.log")).expect("log");
        let child = Command::new("gnome-shell")
            .args(["--headless", "--virtual-monitor", "1280x800", "--no-x11"])
            .args(["--wayland-display", "gearshift-test-wayland"])
            .env("HOME", dir.path())
            .env("XDG_RUNTIME_DIR", &runtime)
            .env("XDG_DATA_HOME", dir.path().join("data"))
            .env("XDG_CONFIG_HOME", dir.path().join("config"))
            .env("XDG_CACHE_HOME", dir.path().join("cache"))
            .env("GSETTINGS_BACKEND", "memory")
            .env("DBUS_SESSION_BUS_ADDRESS", w.session.address())
            .env("DBUS_SYSTEM_BUS_ADDRESS", w.system.address())
            .env_remove("DISPLAY")
            .env_remove("WAYLAND_DISPLAY")
            .stdin(Stdio::null())
            .stdout(log.try_clone().expect("log"))
            .stderr(log)
            .spawn()
            .expect("start gnome-shell");
        let mut shell = Self {
            dir,
            child,
            conn: w.session.connect().await,
            session_address: w.session.address().to_owned(),
        };
        let deadline = Instant::now() + STARTUP;
        while !shell.lists_extensions().await {
            if let Ok(Some(status)) = shell.child.try_wait() {
                panic!("gnome-shell exited ({status})");
            }
            assert!(Instant::now() < deadline, "gnome-shell did not start");
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        shell
    }

    fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("shell.log")).unwrap_or_default()
    }

    /// A method of org.gnome.Shell.Extensions taking an extension's uuid.
    async fn extensions_call(&self, method: &str, uuid: &str) -> zbus::Message {
        self.conn
            .call_method(
                Some("org.gnome.Shell"),
                "/org/gnome/Shell",
                Some("org.gnome.Shell.Extensions"),
                method,
                &uuid,
            )
            .await
            .unwrap_or_else(|e| panic!("{method} {uuid}: {e}"))
    }

    /// Whether the shell has loaded the extensions (both are listed).
    async fn lists_extensions(&self) -> bool {
        let Ok(reply) = self
            .conn
            .call_method(
                Some("org.gnome.Shell"),
                "/org/gnome/Shell",
                Some("org.gnome.Shell.Extensions"),
                "ListExtensions",
                &(),
            )
            .await
        else {
            return false;
        };
        let all: HashMap<String, HashMap<String, OwnedValue>> =
            reply.body().deserialize().expect("a{sa{sv}}");
        all.contains_key(UUID) && all.contains_key(DRIVER_UUID)
    }

    /// GetExtensionInfo: (state, error).
    async fn extension(&self, uuid: &str) -> (f64, String) {
        let reply = self.extensions_call("GetExtensionInfo", uuid).await;
        let info: HashMap<String, OwnedValue> = reply.body().deserialize().expect("a{sv}");
        let state = info.get("state").and_then(|v| f64::try_from(v).ok());
        let error = info
            .get("error")
            .and_then(|v| String::try_from(v.clone()).ok());
        (
            state.unwrap_or_else(|| panic!("{uuid}: no state in {info:?}")),
            error.unwrap_or_default(),
        )
    }

    /// EnableExtension or DisableExtension; the shell's answer.
    async fn set_enabled(&self, uuid: &str, enabled: bool) -> bool {
        let method = if enabled {
            "EnableExtension"
        } else {
            "DisableExtension"
        };
        let reply = self.extensions_call(method, uuid).await;
        reply.body().deserialize().expect("b")
    }

    /// Waits until `uuid` is in `state` with no error; ERROR and OUT_OF_DATE fail at once.
    async fn wait_state(&self, uuid: &str, state: f64) {
        let deadline = Instant::now() + support::TIMEOUT;
        loop {
            let (now, error) = self.extension(uuid).await;
            if now == state && error.is_empty() {
                return;
            }
            assert!(
                now != ERROR && now != OUT_OF_DATE && Instant::now() < deadline,
                "{uuid}: state {now}, error {error:?}, expected state {state}"
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// The value of a JavaScript expression evaluated in the shell by the driver (`t`: its
    /// helpers), or the exception it threw.
    async fn try_eval(&self, code: &str) -> zbus::Result<Value> {
        let reply = self
            .conn
            .call_method(
                Some("io.github.gearshift.ShellTest"),
                "/io/github/gearshift/ShellTest",
                Some("io.github.gearshift.ShellTest"),
                "Eval",
                &code,
            )
            .await?;
        let text: String = reply.body().deserialize()?;
        Ok(serde_json::from_str(&text).expect("JSON from Eval"))
    }

    async fn eval(&self, code: &str) -> Value {
        self.try_eval(code)
            .await
            .unwrap_or_else(|e| panic!("Eval {code}: {e}"))
    }

    /// Clicks the actor `code` evaluates to, once it is on screen where a click reaches it.
    async fn click(&self, code: &str) {
        let click = format!("t.click({code})");
        let deadline = Instant::now() + support::TIMEOUT;
        loop {
            match self.try_eval(&click).await {
                Ok(_) => return,
                Err(e) => assert!(Instant::now() < deadline, "{click}: {e}"),
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// Clicks the actor `code` evaluates to until `effect` holds. On a loaded machine the
    /// shell now and then drops a virtual click that its pick said would land (2 runs of 5
    /// under `stress-ng --cpu 3` on 2 cores); a click that did land is not sent again,
    /// because the effect shows first. `effect` must hold as soon as the click is handled
    /// (gearshiftd's "starting", not "running").
    async fn click_until<F, Fut>(&self, code: &str, what: &str, mut effect: F)
    where
        F: FnMut() -> Fut,
        Fut: std::future::Future<Output = bool>,
    {
        let deadline = Instant::now() + 2 * support::TIMEOUT;
        loop {
            self.click(code).await;
            if support::holds_within(CLICK_EFFECT, &mut effect).await {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "clicking {code} never led to {what}"
            );
        }
    }

    /// Clicks `code` until the JavaScript `check` is true.
    async fn click_until_shell(&self, code: &str, check: &str) {
        self.click_until(code, check, || async {
            self.eval(check).await == json!(true)
        })
        .await;
    }

    /// Polls `code` until it evaluates to `expected`.
    async fn eval_until(&self, code: &str, expected: Value) {
        let deadline = Instant::now() + support::TIMEOUT;
        loop {
            let value = self.eval(code).await;
            if value == expected {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "{code} is {value}, expected {expected}"
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// Saves the screen area `[x, y, width, height]` as a PNG with org.gnome.Shell.Screenshot.
    async fn screenshot_area(&self, area: [i32; 4], path: &Path) {
        // gnome-shell 43 serves the Screenshot interface to these names only (unsafe mode
        // aside); GNOME Screenshot's is free on this private bus.
        let conn = zbus::connection::Builder::address(self.session_address.as_str())
            .expect("address")
            .name("org.gnome.Screenshot")
            .expect("name")
            .build()
            .await
            .expect("connect as org.gnome.Screenshot");
        let [x, y, width, height] = area;
        let path_text = path.to_str().expect("UTF-8 path");
        let reply = conn
            .call_method(
                Some("org.gnome.Shell.Screenshot"),
                "/org/gnome/Shell/Screenshot",
                Some("org.gnome.Shell.Screenshot"),
                "ScreenshotArea",
                &(x, y, width, height, false, path_text),
            )
            .await
            .unwrap_or_else(|e| panic!("ScreenshotArea: {e}"));
        let (ok, used): (bool, String) = reply.body().deserialize().expect("(bs)");
        assert!(ok, "ScreenshotArea failed ({used})");
        assert_eq!(Path::new(&used), path);
    }
}

impl Drop for Shell {
    /// A failing test shows the shell's log (the extension's exceptions are in it).
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        if std::thread::panicking() {
            eprintln!("---- gnome-shell log ----\n{}", self.log());
        }
    }
}

/// Width and height from a PNG's IHDR chunk.
fn png_size(path: &Path) -> (u32, u32) {
    let bytes = std::fs::read(path).expect("read screenshot");
    assert!(
        bytes.len() > 24 && bytes.starts_with(b"\x89PNG\r\n\x1a\n") && &bytes[12..16] == b"IHDR",
        "{} is not a PNG",
        path.display()
    );
    let be = |at: usize| u32::from_be_bytes(bytes[at..at + 4].try_into().expect("4 bytes"));
    (be(16), be(20))
}

/// Saves the screenshot under target/tmp, and into data/screenshots when
/// GEARSHIFT_UPDATE_SCREENSHOTS is set (as the app's tests do).
fn keep_screenshot(path: &Path, name: &str) {
    if std::env::var_os("GEARSHIFT_UPDATE_SCREENSHOTS").is_some() {
        let dest = repo().join("data/screenshots").join(name);
        std::fs::copy(path, &dest).expect("copy screenshot");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn extension_runs_in_gnome_shell_and_its_toggle_drives_gearshiftd() {
    let w = World::start_with(SessionBus::start_without_activation()).await;
    let shell = Shell::start(&w).await;
    assert_eq!(w.proxy.state().await.expect("State"), "stopped");

    // Installed but not enabled: loaded without complaint about its metadata or version.
    assert_eq!(shell.extension(UUID).await, (INITIALIZED, String::new()));
    assert!(shell.set_enabled(DRIVER_UUID, true).await);
    shell.wait_state(DRIVER_UUID, ENABLED).await;
    assert!(shell.set_enabled(UUID, true).await);
    // A wrong import or API turns it into ERROR (3) with the exception as error.
    shell.wait_state(UUID, ENABLED).await;

    // Animations off: every check and the screenshot see the end of each transition.
    shell
        .eval(
            "new imports.gi.Gio.Settings({schema_id: 'org.gnome.desktop.interface'})\
             .set_boolean('enable-animations', false)",
        )
        .await;
    // The shell starts in the overview, and its startup animation may show it again after an
    // early hide(): ask to leave it until it stays left, then open the quick settings.
    shell
        .eval_until(
            "(t.Main.overview.hide(), t.Main.layoutManager._startingUp || t.Main.overview.visible)",
            json!(false),
        )
        .await;
    shell
        .click_until_shell("t.quickSettings", "t.quickSettings.menu.isOpen")
        .await;

    // The toggle: shown (gearshiftd is on the bus), off (the scheduler is stopped).
    let toggle = format!("t.toggle({TOGGLE})");
    let looks = format!("(g => g && [g.visible, g.checked])({toggle})");
    shell.eval_until(&looks, json!([true, false])).await;

    // A click starts the scheduler; the toggle turns on.
    shell
        .click_until(&toggle, "gearshiftd starting", || async {
            w.proxy.state().await.expect("State") != "stopped"
        })
        .await;
    eventually("gearshiftd running", || async {
        w.proxy.state().await.expect("State") == "running"
    })
    .await;
    shell.eval_until(&looks, json!([true, true])).await;

    // Its arrow opens the profiles menu: gearshiftd's profiles, the active one dotted.
    shell
        .click_until_shell(
            &format!("t.menuButton({toggle})"),
            &format!("{toggle}.menu.isOpen"),
        )
        .await;
    let active = w.profile().await;
    let mut names = Vec::new();
    let mut expected = Vec::new();
    for profile in w.proxy.profiles().await.expect("Profiles") {
        let name = String::try_from(profile["name"].clone()).expect("profile name");
        expected.push(json!({"label": name, "visible": true, "dot": name == active}));
        names.push(name);
    }
    assert!(expected.len() >= 2, "{expected:?}");
    // The menu's other items (the state, Preemption, Open Gearshift, …) are not checked here.
    let items = format!(
        "t.menuItems({toggle}.menu).map(i => t.describeItem(i))\
         .filter(i => {}.includes(i.label))",
        json!(names)
    );
    shell.eval_until(&items, Value::Array(expected)).await;

    // The open menu, as a person sees it.
    let shots = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("gnome-shell-screenshots");
    std::fs::create_dir_all(&shots).expect("screenshot dir");
    let path = shots.join("gnome-shell-quick-settings.png");
    let area: [i32; 4] =
        serde_json::from_value(shell.eval("t.box(t.quickSettings.menu.box)").await)
            .expect("[x, y, width, height]");
    shell.screenshot_area(area, &path).await;
    assert_eq!(png_size(&path), (area[2] as u32, area[3] as u32));
    keep_screenshot(&path, "gnome-shell-quick-settings.png");

    // A click on another profile switches gearshiftd.
    let other = if active == "low-power" {
        "throughput"
    } else {
        "low-power"
    };
    let item = format!(
        "t.menuItems({toggle}.menu).find(i => i.label.text === {})",
        json!(other)
    );
    shell
        .click_until(&item, "the other profile", || async {
            w.profile().await == other
        })
        .await;

    // Choosing an item closes the menu; reopened, a click on the toggle stops the scheduler.
    if shell.eval("t.quickSettings.menu.isOpen").await != json!(true) {
        shell
            .click_until_shell("t.quickSettings", "t.quickSettings.menu.isOpen")
            .await;
    }
    shell
        .click_until(&toggle, "gearshiftd stopping", || async {
            w.proxy.state().await.expect("State") != "running"
        })
        .await;
    eventually("gearshiftd stopped", || async {
        w.proxy.state().await.expect("State") == "stopped"
    })
    .await;
    shell.eval_until(&looks, json!([true, false])).await;

    // It follows the focus (for gearshiftd's foreground boost) through a handler on
    // global.display, which must go with it.
    let focus_id = shell.eval(&format!("{toggle}._focusId")).await;
    assert!(focus_id.as_u64().is_some_and(|id| id > 0), "{focus_id}");
    let focus_connected =
        format!("imports.gi.GObject.signal_handler_is_connected(global.display, {focus_id})");
    assert_eq!(shell.eval(&focus_connected).await, json!(true));

    // Disabled, it takes its toggle away cleanly (an exception would mean ERROR).
    assert!(shell.set_enabled(UUID, false).await);
    shell.wait_state(UUID, DISABLED).await;
    shell.eval_until(&toggle, Value::Null).await;
    assert_eq!(shell.eval(&focus_connected).await, json!(false));
}
