//! Shared set-up of the app's tests: an X server (Xvfb), the app in this process on the test's
//! thread, gearshiftd on a private system bus (gearshift-testbus, with the scheduler double),
//! and helpers that look at the window the way a person does: the text it shows, its rows and
//! buttons, a screenshot.
#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use adw::prelude::*;
use gearshift_app::Window;
use gearshift_testbus::{DaemonUnderTest, Setup, TestBus};
use gtk::glib;

pub const TIMEOUT: Duration = Duration::from_secs(20);

/// An Xvfb server; killed on drop.
pub struct Xvfb {
    child: Child,
    pub display: String,
}

impl Xvfb {
    pub fn start() -> Self {
        let mut child = Command::new("Xvfb")
            .args([
                "-displayfd",
                "1",
                "-screen",
                "0",
                "1280x1024x24",
                "-nolisten",
                "tcp",
            ])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("Xvfb (apt package xvfb, see tools/bootstrap.sh)");
        let mut line = String::new();
        BufReader::new(child.stdout.take().expect("stdout"))
            .read_line(&mut line)
            .expect("display number");
        let display = format!(":{}", line.trim());
        assert!(display.len() > 1, "Xvfb printed no display");
        Self { child, display }
    }
}

impl Drop for Xvfb {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The world of one test: X, the bus, gearshiftd, and the app.
pub struct World {
    pub app: adw::Application,
    pub window: Window,
    pub daemon: Option<DaemonUnderTest>,
    pub bus: TestBus,
    _x: Xvfb,
}

/// The environment the app runs in; call before anything starts a thread that reads it.
fn set_env(x: &Xvfb, bus: &TestBus) {
    let vars = [
        ("DISPLAY", x.display.as_str()),
        ("GDK_BACKEND", "x11"),
        ("GSK_RENDERER", "cairo"),
        ("GSETTINGS_BACKEND", "memory"),
        ("GTK_A11Y", "none"),
        ("NO_AT_BRIDGE", "1"),
        // No session bus: the app is not unique, and GLib must not try to launch one.
        (
            "DBUS_SESSION_BUS_ADDRESS",
            "unix:path=/nonexistent/gearshift-test",
        ),
        ("DBUS_SYSTEM_BUS_ADDRESS", bus.address()),
        ("GEARSHIFT_LOCALEDIR", gearshift_app::i18n::BUILD_LOCALEDIR),
    ];
    for (k, v) in vars {
        std::env::set_var(k, v);
    }
}

/// Starts everything: `lang` is a LANGUAGE value (None: English).
pub fn world_with(setup: Setup, lang: Option<&str>) -> World {
    let x = Xvfb::start();
    let mut bus = TestBus::start();
    bus.start_polkit();
    let daemon = DaemonUnderTest::start(&bus, setup);
    set_env(&x, &bus);
    match lang {
        Some(lang) => {
            std::env::set_var("LANG", "C.UTF-8");
            std::env::set_var("LANGUAGE", lang);
        }
        None => {
            std::env::set_var("LANG", "C.UTF-8");
            std::env::remove_var("LANGUAGE");
            std::env::remove_var("LC_ALL");
            std::env::remove_var("LC_MESSAGES");
        }
    }
    gearshift_app::i18n::init();
    gearshift_app::runtime::start().expect("runtime");
    gtk::init().expect("gtk::init (is Xvfb running?)");
    adw::init().expect("adw::init");
    let app = gearshift_app::build_app();
    app.set_flags(gtk::gio::ApplicationFlags::NON_UNIQUE);
    app.register(None::<&gtk::gio::Cancellable>)
        .expect("register the application");
    app.activate();
    let window = gearshift_app::main_window(&app).expect("the window opens");
    let world = World {
        app,
        window,
        daemon: Some(daemon),
        bus,
        _x: x,
    };
    world.wait("the window is mapped", || world.window.is_mapped());
    world
}

pub fn world(setup: Setup) -> World {
    world_with(setup, None)
}

impl World {
    /// Runs the main loop until `ready` holds; fails the test after [`TIMEOUT`].
    pub fn wait(&self, what: &str, mut ready: impl FnMut() -> bool) {
        let deadline = Instant::now() + TIMEOUT;
        let ctx = glib::MainContext::default();
        loop {
            while ctx.iteration(false) {}
            if ready() {
                return;
            }
            if Instant::now() > deadline {
                panic!(
                    "timed out waiting for {what}; the window shows:\n{}",
                    self.text().join("\n")
                );
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Keeps the UI running for a while (animations, graphs).
    pub fn run_for(&self, time: Duration) {
        let end = Instant::now() + time;
        let ctx = glib::MainContext::default();
        while Instant::now() < end {
            while ctx.iteration(false) {}
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// Every text a person sees in the window (labels of mapped widgets).
    pub fn text(&self) -> Vec<String> {
        visible_text(self.window.upcast_ref())
    }

    pub fn shows(&self, needle: &str) -> bool {
        self.text().iter().any(|t| t.contains(needle))
    }

    pub fn wait_shows(&self, needle: &str) {
        self.wait(&format!("the window to show {needle:?}"), || {
            self.shows(needle)
        });
    }

    /// A property of gearshiftd as busctl prints it (`s "running"`, `b true`).
    pub fn property(&self, name: &str) -> String {
        let out = self.bus.busctl(
            None,
            &[
                "get-property",
                gearshift_dbus::BUS_NAME,
                gearshift_dbus::OBJECT_PATH,
                gearshift_dbus::INTERFACE,
                name,
            ],
        );
        String::from_utf8_lossy(&out.stdout).trim().to_owned()
    }

    pub fn wait_property(&self, name: &str, want: &str) {
        self.wait(&format!("{name} = {want}"), || self.property(name) == want);
    }

    /// Runs gearshiftctl against the private bus.
    pub fn ctl(&self, args: &[&str]) {
        let mut cmd = Command::new(gearshift_testbus::workspace_bin("gearshiftctl"));
        cmd.args(args);
        self.bus.env(&mut cmd);
        let out = cmd.output().expect("gearshiftctl");
        assert!(
            out.status.success(),
            "gearshiftctl {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    /// The profile row whose title a person reads.
    pub fn profile_row(&self, title: &str) -> adw::ActionRow {
        self.window
            .profile_rows()
            .into_iter()
            .find(|r| r.row.title() == title)
            .map(|r| r.row)
            .unwrap_or_else(|| panic!("no profile row {title:?}: {:?}", self.text()))
    }

    /// The title of the profile whose check mark shows.
    pub fn checked_profile(&self) -> Option<String> {
        self.window
            .profile_rows()
            .into_iter()
            .find(|r| r.check.opacity() > 0.5)
            .map(|r| r.row.title().to_string())
    }

    /// Activates the row with this title, as Enter on it would (a switch row toggles).
    pub fn activate_row(&self, title: &str) {
        let row = find_row(self.window.upcast_ref(), title)
            .unwrap_or_else(|| panic!("no row {title:?}: {:?}", self.text()));
        assert!(row.is_sensitive(), "row {title:?} is insensitive");
        WidgetExt::activate(&row);
    }

    /// Presses the button with this label, as a person would.
    pub fn press(&self, label: &str) {
        let button = find_button(self.window.upcast_ref(), label)
            .unwrap_or_else(|| panic!("no button {label:?}: {:?}", self.text()));
        assert!(button.is_sensitive(), "button {label:?} is insensitive");
        button.emit_clicked();
    }

    /// Saves the window as a PNG: into the test's artifacts, and into data/screenshots when
    /// GEARSHIFT_UPDATE_SCREENSHOTS is set.
    pub fn screenshot(&self, name: &str) -> PathBuf {
        // Messages go after a few seconds (dismissing them by hand crashes libadwaita 1.2).
        self.wait("no messages over the window", || {
            self.window.toasts_shown() == 0
        });
        // Let a frame be drawn with the latest state.
        self.run_for(Duration::from_millis(300));
        let path = save_png(self.window.upcast_ref(), name);
        if std::env::var_os("GEARSHIFT_UPDATE_SCREENSHOTS").is_some() {
            let dest = gearshift_testbus::repo_root()
                .join("data/screenshots")
                .join(format!("{name}.png"));
            std::fs::create_dir_all(dest.parent().expect("parent")).expect("mkdir");
            std::fs::copy(&path, &dest).expect("copy screenshot");
        }
        path
    }
}

impl Drop for World {
    fn drop(&mut self) {
        self.window.close();
        // The daemon goes before the bus.
        self.daemon.take();
    }
}

/// Renders `widget` to target/tmp/gearshift-app-screenshots/<name>.png.
pub fn save_png(widget: &gtk::Widget, name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("gearshift-app-screenshots");
    std::fs::create_dir_all(&dir).expect("screenshot dir");
    let path = dir.join(format!("{name}.png"));
    let paintable = gtk::WidgetPaintable::new(Some(widget));
    let (w, h) = (widget.width(), widget.height());
    let snapshot = gtk::Snapshot::new();
    paintable.snapshot(&snapshot, f64::from(w), f64::from(h));
    let node = snapshot.to_node().expect("the window drew something");
    let renderer = widget
        .native()
        .and_then(|n| n.renderer())
        .expect("the window's renderer");
    let texture = renderer.render_texture(
        &node,
        Some(&gtk::graphene::Rect::new(0.0, 0.0, w as f32, h as f32)),
    );
    texture.save_to_png(&path).expect("save PNG");
    eprintln!("screenshot: {}", path.display());
    path
}

/// The row (AdwActionRow) with this title.
pub fn find_row(widget: &gtk::Widget, title: &str) -> Option<adw::ActionRow> {
    if let Some(row) = widget.downcast_ref::<adw::ActionRow>() {
        if row.title() == title {
            return Some(row.clone());
        }
    }
    children(widget).iter().find_map(|c| find_row(c, title))
}

/// Scrolls the window's page to the top (0.0) or the bottom (1.0).
pub fn scroll(widget: &gtk::Widget, fraction: f64) {
    if let Some(sw) = widget.downcast_ref::<gtk::ScrolledWindow>() {
        let adj = sw.vadjustment();
        adj.set_value(adj.lower() + fraction * (adj.upper() - adj.page_size() - adj.lower()));
        return;
    }
    for child in children(widget) {
        scroll(&child, fraction);
    }
}

fn children(widget: &gtk::Widget) -> Vec<gtk::Widget> {
    let mut out = Vec::new();
    let mut child = widget.first_child();
    while let Some(c) = child {
        child = c.next_sibling();
        out.push(c);
    }
    out
}

pub fn visible_text(widget: &gtk::Widget) -> Vec<String> {
    let mut out = Vec::new();
    if !widget.is_mapped() {
        return out;
    }
    if let Some(label) = widget.downcast_ref::<gtk::Label>() {
        let text = label.text().to_string();
        if !text.is_empty() {
            out.push(text);
        }
    }
    for child in children(widget) {
        out.extend(visible_text(&child));
    }
    out
}

pub fn find_button(widget: &gtk::Widget, label: &str) -> Option<gtk::Button> {
    if let Some(button) = widget.downcast_ref::<gtk::Button>() {
        if widget.is_mapped() && button.label().is_some_and(|l| l == label) {
            return Some(button.clone());
        }
    }
    children(widget).iter().find_map(|c| find_button(c, label))
}
