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
    <method name="SetProfile"><arg name="profile" type="s" direction="in"/></method>
    <method name="SetPreemption"><arg name="enabled" type="b" direction="in"/></method>
    <method name="Start"/>
    <method name="Stop"/>
  </interface>
</node>`;

Gio._promisify(Gio.DBusProxy, 'new', 'new_finish');
Gio._promisify(Gio.DBusProxy.prototype, 'call', 'call_finish');
Gio._promisify(Gio.DBusConnection.prototype, 'call', 'call_finish');

function unpack(proxy, name, fallback) {
    const value = proxy.get_cached_property(name);
    return value ? value.recursiveUnpack() : fallback;
}

// What the toggle shows for a snapshot: pure, so tests check it without a shell. While a
// fallback runs (the chosen profile kept failing), the subtitle says so and the menu shows
// gearshiftd's words on what failed, as while the scheduler is off.
export function describe(snapshot) {
    const running = snapshot.state === 'running';
    const fellBack = running && snapshot.profileReason === 'fallback';
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
    };
}

export const SchedulerClient = class SchedulerClient {
    // onChange(snapshot) runs whenever gearshiftd's properties change or it comes or goes.
    // connection: a Gio.DBusConnection (the system bus unless given).
    constructor(onChange, connection = null) {
        this._onChange = onChange;
        this._connection = connection;
        this._proxy = null;
        this._signals = [];
        this._cancellable = new Gio.Cancellable();
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
            this._proxy.connect('notify::g-name-owner', () => this._changed()));
        this._changed();
    }

    _changed() {
        this._onChange?.(this.snapshot());
    }

    snapshot() {
        const proxy = this._proxy;
        if (!proxy || proxy.g_name_owner === null) {
            return {
                available: false, state: '', stateReason: '', profile: '', profileReason: '',
                profiles: [], mode: '', preemption: false,
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

    destroy() {
        this._cancellable.cancel();
        for (const id of this._signals)
            this._proxy?.disconnect(id);
        this._signals = [];
        this._proxy = null;
        this._onChange = null;
    }
};
