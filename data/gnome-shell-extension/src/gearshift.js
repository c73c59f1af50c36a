// Gearshift's D-Bus client for the shell extension: follows gearshiftd
// (io.github.gearshift.Scheduler1 on the system bus) and calls it. No Shell imports, so gjs
// runs it alone in the tests. Written as an ES module (GNOME 45+); the build script turns it
// into a legacy module for GNOME 43-44.

import Gio from 'gi://Gio';
import GLib from 'gi://GLib';

export const BUS_NAME = 'io.github.gearshift.Scheduler1';
export const OBJECT_PATH = '/io/github/gearshift/Scheduler1';
export const INTERFACE = 'io.github.gearshift.Scheduler1';

// The part of dbus/io.github.gearshift.Scheduler1.xml the extension uses.
const INTERFACE_XML = `<node>
  <interface name="${INTERFACE}">
    <property name="State" type="s" access="read"/>
    <property name="StateReason" type="s" access="read"/>
    <property name="Profile" type="s" access="readwrite"/>
    <property name="ProfileReason" type="s" access="read"/>
    <property name="Profiles" type="aa{sv}" access="read"/>
    <property name="Mode" type="s" access="read"/>
    <property name="Preemption" type="b" access="readwrite"/>
    <property name="ForegroundApp" type="s" access="read"/>
    <property name="ForegroundBoost" type="b" access="read"/>
    <method name="SetProfile"><arg name="profile" type="s" direction="in"/></method>
    <method name="SetPreemption"><arg name="enabled" type="b" direction="in"/></method>
    <method name="SetForeground"><arg name="pid" type="u" direction="in"/></method>
    <method name="Start"/>
    <method name="Stop"/>
  </interface>
</node>`;

// How long the focus must stay put before gearshiftd hears of it: alt-tabbing through windows
// sends only the one it stops at.
export const FOREGROUND_DELAY_MS = 150;

// Desktop launchers that name the units of the apps they start (app-<launcher>-<id>…).
const LAUNCHERS = ['gnome', 'flatpak', 'kde', 'xfce', 'snap'];

Gio._promisify(Gio.DBusProxy, 'new', 'new_finish');
Gio._promisify(Gio.DBusProxy.prototype, 'call', 'call_finish');
Gio._promisify(Gio.DBusConnection.prototype, 'call', 'call_finish');

function unpack(proxy, name, fallback) {
    const value = proxy.get_cached_property(name);
    return value ? value.recursiveUnpack() : fallback;
}

// A readable name for gearshiftd's ForegroundApp, the cgroup the focused app runs in. Desktops
// name it after systemd's app[-<launcher>]-<id>[-<n>.scope|@<x>.service]:
// app-gnome-org.gnome.Terminal-4242.scope is org.gnome.Terminal. Anything else stays as it is,
// less a .scope/.service/.slice suffix.
export function appName(cgroup) {
    let name = cgroup.slice(cgroup.lastIndexOf('/') + 1)
        .replace(/(-\d+)?\.scope$/, '')
        .replace(/(@[^@]*)?\.service$/, '')
        .replace(/\.slice$/, '');
    if (name.startsWith('app-') && name.length > 4) {
        name = name.slice(4);
        const launcher = LAUNCHERS.find(l => name.startsWith(`${l}-`) && name.length > l.length + 1);
        if (launcher)
            name = name.slice(launcher.length + 1);
    }
    // systemd escapes '-' (and a few other bytes) in unit names as \xNN.
    return name.replace(/\\x([0-9a-fA-F]{2})/g, (_m, hex) => String.fromCharCode(parseInt(hex, 16)));
}

// What the toggle shows for a snapshot: pure, so tests check it without a shell. While a
// fallback runs (the chosen profile kept failing), the subtitle says so and the menu shows
// gearshiftd's words on what failed, as while the scheduler is off. While the running profile
// favours the focused app, the menu names it.
export function describe(snapshot) {
    const running = snapshot.state === 'running';
    const fellBack = running && snapshot.profileReason === 'fallback';
    const favoured = running && snapshot.foregroundBoost && snapshot.foregroundApp
        ? appName(snapshot.foregroundApp) : '';
    let subtitle = fellBack ? `${snapshot.profile} (fallback)` : snapshot.profile;
    if (!running)
        subtitle = snapshot.state === 'unsupported' ? 'Not supported' : `Off (${snapshot.profile})`;
    return {
        visible: snapshot.available,
        checked: running,
        title: 'Gearshift',
        subtitle,
        profiles: snapshot.profiles.map(p => ({
            name: p.name,
            description: p.description,
            active: p.name === snapshot.profile,
        })),
        preemption: snapshot.preemption,
        reason: running && !fellBack ? '' : snapshot.stateReason,
        favouring: favoured ? `Favouring: ${favoured}` : '',
    };
}

export const SchedulerClient = class SchedulerClient {
    // onChange(snapshot) runs whenever gearshiftd's properties change or it comes or goes.
    // connection: a Gio.DBusConnection (the system bus unless given). options (for tests):
    // foregroundDelayMs (FOREGROUND_DELAY_MS unless given), onForeground(pid, error) after
    // each SetForeground call, log(message) for what goes wrong (console.warn unless given).
    constructor(onChange, connection = null, options = {}) {
        this._onChange = onChange;
        this._connection = connection;
        this._proxy = null;
        this._owner = null;
        this._signals = [];
        this._cancellable = new Gio.Cancellable();
        this._foregroundDelay = options.foregroundDelayMs ?? FOREGROUND_DELAY_MS;
        this._onForeground = options.onForeground ?? null;
        this._log = options.log ?? (message => console.warn(message));
        this._wantedPid = null; // the focused process; null: not known yet
        this._sentPid = null; // what this gearshiftd last heard; null: nothing
        this._foregroundSource = 0;
        this._loggedErrors = new Set();
    }

    async init() {
        const info = Gio.DBusNodeInfo.new_for_xml(INTERFACE_XML).interfaces[0];
        const connection = this._connection ?? Gio.DBus.system;
        // DO_NOT_AUTO_START: the toggle stays hidden while gearshiftd is not running
        // instead of starting it at login.
        this._proxy = await Gio.DBusProxy.new(connection,
            Gio.DBusProxyFlags.DO_NOT_AUTO_START, info, BUS_NAME, OBJECT_PATH, INTERFACE,
            this._cancellable);
        this._signals.push(
            this._proxy.connect('g-properties-changed', () => this._changed()),
            this._proxy.connect('notify::g-name-owner', () => {
                this._ownerChanged();
                this._changed();
            }));
        this._ownerChanged();
        this._changed();
    }

    // A gearshiftd that just appeared (started, or restarted: it forgets the foreground) has
    // not heard of the focused app yet.
    _ownerChanged() {
        const owner = this._proxy?.g_name_owner ?? null;
        if (owner === this._owner)
            return;
        this._owner = owner;
        this._sentPid = null;
        this._scheduleForeground();
    }

    _changed() {
        this._onChange?.(this.snapshot());
    }

    snapshot() {
        const proxy = this._proxy;
        if (!proxy || proxy.g_name_owner === null) {
            return {
                available: false, state: '', stateReason: '', profile: '', profileReason: '',
                profiles: [], mode: '', preemption: false, foregroundApp: '',
                foregroundBoost: false,
            };
        }
        return {
            available: true,
            state: unpack(proxy, 'State', ''),
            stateReason: unpack(proxy, 'StateReason', ''),
            profile: unpack(proxy, 'Profile', ''),
            profileReason: unpack(proxy, 'ProfileReason', ''),
            profiles: unpack(proxy, 'Profiles', []),
            mode: unpack(proxy, 'Mode', ''),
            preemption: unpack(proxy, 'Preemption', false),
            foregroundApp: unpack(proxy, 'ForegroundApp', ''),
            foregroundBoost: unpack(proxy, 'ForegroundBoost', false),
        };
    }

    _call(method, parameters = null) {
        return this._proxy.call(method, parameters,
            Gio.DBusCallFlags.ALLOW_INTERACTIVE_AUTHORIZATION, -1, this._cancellable);
    }

    setProfile(name) {
        return this._call('SetProfile', new GLib.Variant('(s)', [name]));
    }

    // Starts (true) or stops (false) the scheduler.
    setRunning(on) {
        return this._call(on ? 'Start' : 'Stop');
    }

    setPreemption(on) {
        return this._call('SetPreemption', new GLib.Variant('(b)', [on]));
    }

    // Tells gearshiftd that process `pid` has the focus (0 or less: nothing has, or it is not
    // known). Sent once the focus has stayed put for the delay, only when it differs from
    // what gearshiftd last heard, never while gearshiftd is absent, and again when it
    // (re)appears. Never asks for a password: a focus change is no time for a dialog, and
    // polkit allows it to active sessions without one.
    setForeground(pid) {
        this._wantedPid = pid > 0 ? pid : 0;
        this._scheduleForeground();
    }

    _scheduleForeground() {
        if (this._foregroundSource)
            GLib.source_remove(this._foregroundSource);
        this._foregroundSource = GLib.timeout_add(GLib.PRIORITY_DEFAULT, this._foregroundDelay,
            () => {
                this._foregroundSource = 0;
                this._sendForeground();
                return GLib.SOURCE_REMOVE;
            });
    }

    async _sendForeground() {
        const pid = this._wantedPid;
        if (pid === null || pid === this._sentPid || !this._proxy?.g_name_owner)
            return;
        this._sentPid = pid;
        let error = null;
        try {
            await this._proxy.call('SetForeground', new GLib.Variant('(u)', [pid]),
                Gio.DBusCallFlags.NO_AUTO_START, -1, this._cancellable);
        } catch (e) {
            if (e.matches?.(Gio.IOErrorEnum, Gio.IOErrorEnum.CANCELLED))
                return;
            error = e;
            this._logOnce(e);
        }
        this._onForeground?.(pid, error);
    }

    // Each kind of failure (denied, no such process, …) once: focus changes would repeat it.
    _logOnce(error) {
        const kind = Gio.DBusError.get_remote_error(error) ?? error.message;
        if (this._loggedErrors.has(kind))
            return;
        this._loggedErrors.add(kind);
        this._log(`Gearshift: telling gearshiftd the focused app: ${error.message}`);
    }

    destroy() {
        if (this._foregroundSource)
            GLib.source_remove(this._foregroundSource);
        this._foregroundSource = 0;
        this._cancellable.cancel();
        for (const id of this._signals)
            this._proxy?.disconnect(id);
        this._signals = [];
        this._proxy = null;
        this._onChange = null;
    }
};
