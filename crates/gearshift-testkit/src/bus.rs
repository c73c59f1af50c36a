//! A private system bus for tests and the demo: a dbus-daemon configuration like Debian's
//! system bus, with gearshiftd's own policy file, so policy mistakes show.

use std::path::{Path, PathBuf};

/// The repository root.
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// A dbus-daemon config like Debian's system bus listening on the Unix socket `socket`.
pub fn system_bus_config(socket: &Path) -> String {
    bus_config(&format!("unix:path={}", socket.display()), None)
}

fn xml_escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// A dbus-daemon config like Debian's system bus (default deny; root may own only the service
/// names the tests double) listening on the address `listen`, activating services from
/// `servicedir` if given, with gearshiftd's policy file included.
pub fn bus_config(listen: &str, servicedir: Option<&Path>) -> String {
    let policy = repo_root().join("data/dbus-1/system.d/io.github.gearshift.Scheduler1.conf");
    let policy = std::fs::canonicalize(&policy).unwrap_or(policy);
    let servicedir = servicedir.map_or_else(String::new, |d| {
        format!(
            "<servicedir>{}</servicedir>",
            xml_escape(&d.to_string_lossy())
        )
    });
    format!(
        r#"<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>system</type>
  <listen>{listen}</listen>
  {servicedir}
  <auth>EXTERNAL</auth>
  <policy context="default">
<allow user="*"/>
<deny own="*"/>
<deny send_type="method_call"/>
<allow send_type="signal"/>
<allow send_requested_reply="true" send_type="method_return"/>
<allow send_requested_reply="true" send_type="error"/>
<allow receive_type="method_call"/>
<allow receive_type="method_return"/>
<allow receive_type="error"/>
<allow receive_type="signal"/>
<allow send_destination="org.freedesktop.DBus" send_interface="org.freedesktop.DBus"/>
<allow send_destination="org.freedesktop.DBus" send_interface="org.freedesktop.DBus.Introspectable"/>
<allow send_destination="org.freedesktop.DBus" send_interface="org.freedesktop.DBus.Properties"/>
  </policy>
  <!-- The doubles of other system services, as their own policy files would allow. -->
  <policy user="root">
<allow own="org.freedesktop.PolicyKit1"/>
<allow own="org.freedesktop.UPower"/>
<allow own="org.freedesktop.UPower.PowerProfiles"/>
<allow own="net.hadess.PowerProfiles"/>
<allow own="org.freedesktop.login1"/>
<allow send_destination="org.freedesktop.PolicyKit1"/>
<allow send_destination="org.freedesktop.login1"/>
<allow send_destination="org.freedesktop.UPower"/>
<allow send_destination="org.freedesktop.UPower.PowerProfiles"/>
<allow send_destination="net.hadess.PowerProfiles"/>
<allow send_destination="org.freedesktop.DBus" send_interface="org.freedesktop.DBus.Monitoring"/>
  </policy>
  <policy context="default">
<allow send_destination="org.freedesktop.UPower"/>
<allow send_destination="org.freedesktop.UPower.PowerProfiles"/>
<allow send_destination="net.hadess.PowerProfiles"/>
  </policy>
  <include>{policy}</include>
</busconfig>
"#,
        listen = xml_escape(listen),
        policy = xml_escape(&policy.to_string_lossy())
    )
}

/// Where guest scripts find the private system bus (a socket in the guest's own /tmp).
pub const GUEST_BUS_SOCKET: &str = "/tmp/gs-bus.sock";

/// The start of every guest script that runs gearshiftd on the private bus (daemon_guest.sh):
/// `start_daemon`, `wait_state`, `prop`, `stat`, `now_ms`, `$B` and `$DEST`.
pub fn daemon_guest_prelude() -> String {
    format!(
        "export DBUS_SYSTEM_BUS_ADDRESS=unix:path={GUEST_BUS_SOCKET}\n{}",
        include_str!("daemon_guest.sh")
    )
}

/// Writes what a guest needs to run gearshiftd on a private system bus into `run` (a directory
/// the guest sees): `bus.conf`, and `config.toml` made of `config` (top-level keys and tables
/// other than [scheduler]) plus the scheduler's path and arguments. The start timeout is long:
/// under TCG, with CPU hogs on every vCPU, loading and verifying the BPF program takes 30-40 s
/// when the host is busy too (a real machine: well under a second).
pub fn write_daemon_run_dir(
    run: &Path,
    config: &str,
    scheduler: &Path,
    scheduler_args: &[&str],
) -> std::io::Result<()> {
    std::fs::create_dir_all(run)?;
    std::fs::write(
        run.join("bus.conf"),
        system_bus_config(Path::new(GUEST_BUS_SOCKET)),
    )?;
    std::fs::write(
        run.join("config.toml"),
        format!(
            "{config}\n[scheduler]\npath = {:?}\nargs = {:?}\nstart_timeout_ms = 120000\n",
            scheduler.display().to_string(),
            scheduler_args
        ),
    )
}
