// Tests how the extension's D-Bus client (src/gearshift.js) tells gearshiftd which process has
// the focus, against a fake gearshiftd with SetForeground that this script serves itself on
// the private system bus of the Rust test that runs it (crates/gearshift-tray/tests/
// shell_extension.rs): it can vanish and come back, refuse, and tell how it was called. Also
// the pure parts: appName() and the menu's "Favouring" line.
//
// usage: gjs -m foreground.test.js            the ES module (GNOME 45+ build)
//        gjs -m foreground.test.js BUILD_DIR  the converted legacy module of the 43-44 build
//
// Prints "ok" at the end.

import Gio from 'gi://Gio';
import GLib from 'gi://GLib';

import {assertEqual, loadModule, run, sleep} from './harness.js';

const TIMEOUT_MS = 10000;
const DELAY_MS = 100; // the client's coalescing delay here
const QUIET_MS = 400; // long enough for a call that should not come
const NO_SUCH_PROCESS = 9999;
const DENIED = 7777;

async function eventually(what, predicate, last) {
    const deadline = GLib.get_monotonic_time() + TIMEOUT_MS * 1000;
    while (!predicate()) {
        if (GLib.get_monotonic_time() > deadline)
            throw new Error(`timed out waiting for ${what}; last: ${JSON.stringify(last())}`);
        // eslint-disable-next-line no-await-in-loop
        await sleep(20);
    }
}

// The part of the contract the fake serves.
function fakeXml(iface) {
    return `<node>
  <interface name="${iface}">
    <property name="State" type="s" access="read"/>
    <property name="ForegroundApp" type="s" access="read"/>
    <property name="ForegroundBoost" type="b" access="read"/>
    <method name="SetForeground"><arg name="pid" type="u" direction="in"/></method>
  </interface>
</node>`;
}

// A fake gearshiftd on a connection of its own: start() takes the name, stop() drops the
// connection (as a crash does). Every SetForeground lands in `calls` as [pid, interactive
// authorization allowed]; NO_SUCH_PROCESS and DENIED fail as gearshiftd would.
class FakeDaemon {
    constructor(G) {
        this._G = G;
        this.calls = [];
        this._connection = null;
        this._object = null;
    }

    get State() {
        return 'running';
    }

    get ForegroundApp() {
        return 'app-gnome-org.gnome.Terminal-4242.scope';
    }

    get ForegroundBoost() {
        return true;
    }

    SetForegroundAsync([pid], invocation) {
        const flags = invocation.get_message().get_flags();
        this.calls.push([pid, (flags & Gio.DBusMessageFlags.ALLOW_INTERACTIVE_AUTHORIZATION) !== 0]);
        if (pid === NO_SUCH_PROCESS) {
            invocation.return_dbus_error('org.freedesktop.DBus.Error.InvalidArgs',
                `no process ${pid}`);
        } else if (pid === DENIED) {
            invocation.return_dbus_error('org.freedesktop.DBus.Error.AccessDenied', 'not allowed');
        } else {
            invocation.return_value(null);
        }
    }

    start() {
        this.calls = [];
        this._connection = Gio.DBusConnection.new_for_address_sync(
            GLib.getenv('DBUS_SYSTEM_BUS_ADDRESS'),
            Gio.DBusConnectionFlags.AUTHENTICATION_CLIENT |
            Gio.DBusConnectionFlags.MESSAGE_BUS_CONNECTION, null, null);
        this._object = Gio.DBusExportedObject.wrapJSObject(fakeXml(this._G.INTERFACE), this);
        this._object.export(this._connection, this._G.OBJECT_PATH);
        const DO_NOT_QUEUE = 4, PRIMARY_OWNER = 1;
        const [reply] = this._connection.call_sync('org.freedesktop.DBus', '/org/freedesktop/DBus',
            'org.freedesktop.DBus', 'RequestName',
            new GLib.Variant('(su)', [this._G.BUS_NAME, DO_NOT_QUEUE]), null,
            Gio.DBusCallFlags.NONE, -1, null).deepUnpack();
        assertEqual(reply, PRIMARY_OWNER, `owning ${this._G.BUS_NAME}`);
    }

    stop() {
        this._object.unexport();
        this._connection.close_sync(null);
        this._connection = null;
    }
}

function pureParts(G) {
    for (const [cgroup, name] of [
        ['app-gnome-org.gnome.Terminal-4242.scope', 'org.gnome.Terminal'],
        ['app-flatpak-org.mozilla.firefox-12345.scope', 'org.mozilla.firefox'],
        ['app-gnome-firefox\\x2desr-7.scope', 'firefox-esr'],
        ['app-org.gnome.Calculator-3.scope', 'org.gnome.Calculator'],
        ['app-gnome-org.gnome.Nautilus@a1b2c3.service', 'org.gnome.Nautilus'],
        ['/user.slice/user-1000.slice/user@1000.service/app.slice/app-kde-org.kde.konsole-99.scope',
            'org.kde.konsole'],
        ['app-gnome-.scope', 'gnome-'],
        ['session-2.scope', 'session'],
        ['steam', 'steam'],
    ])
        assertEqual(G.appName(cgroup), name, `appName(${cgroup})`);

    const snapshot = {
        available: true, state: 'running', stateReason: '', profile: 'interactive',
        profileReason: 'user', profiles: [], mode: 'interactive', preemption: false,
        foregroundApp: 'app-gnome-org.gnome.Terminal-4242.scope', foregroundBoost: true,
    };
    assertEqual(G.describe(snapshot).favouring, 'Favouring: org.gnome.Terminal', 'favouring');
    for (const [change, what] of [
        [{foregroundBoost: false}, 'a profile without the boost'],
        [{foregroundApp: ''}, 'no foreground app'],
        [{state: 'stopped'}, 'the scheduler off'],
    ]) {
        assertEqual(G.describe({...snapshot, ...change}).favouring, '',
            `no Favouring line with ${what}`);
    }
}

async function main() {
    const G = await loadModule();
    pureParts(G);

    const fake = new FakeDaemon(G);
    const sent = [];
    const logged = [];
    const snapshots = [];
    const client = new G.SchedulerClient(s => snapshots.push(s), null, {
        foregroundDelayMs: DELAY_MS,
        onForeground: (pid, error) => sent.push([pid, error ? Gio.DBusError.get_remote_error(error) : null]),
        log: message => logged.push(message),
    });
    await client.init();
    const lastSent = () => sent[sent.length - 1];

    // gearshiftd absent: nothing is called.
    client.setForeground(111);
    await sleep(QUIET_MS);
    assertEqual(sent, [], 'no call while gearshiftd is absent');

    // It appears: it hears of the focus, without interactive authorization.
    fake.start();
    await eventually('the focus sent to the new gearshiftd', () => sent.length === 1, lastSent);
    assertEqual(fake.calls, [[111, false]], 'SetForeground(111), not interactive');
    assertEqual(sent, [[111, null]], 'the call succeeded');
    await eventually('its properties', () => snapshots.at(-1)?.foregroundApp !== '',
        () => snapshots.at(-1));
    assertEqual(G.describe(snapshots.at(-1)).favouring, 'Favouring: org.gnome.Terminal',
        'the menu names the favoured app');

    // The same process again: nothing new.
    client.setForeground(111);
    await sleep(QUIET_MS);
    assertEqual(fake.calls.length, 1, 'a repeat is not sent');

    // Alt-tabbing through windows: only where it stops.
    for (const pid of [222, 333, 444])
        client.setForeground(pid);
    await eventually('the end of the burst', () => sent.length === 2, lastSent);
    await sleep(QUIET_MS);
    assertEqual(fake.calls.map(([pid]) => pid), [111, 444], 'a burst coalesces');

    // Back and forth within the delay: where it ends is what gearshiftd already has.
    client.setForeground(555);
    client.setForeground(444);
    await sleep(QUIET_MS);
    assertEqual(fake.calls.length, 2, 'no call when the focus comes back in time');

    // Nothing focused, or a window of unknown pid: 0, once.
    client.setForeground(-1);
    await eventually('none', () => sent.length === 3, lastSent);
    client.setForeground(0);
    await sleep(QUIET_MS);
    assertEqual(fake.calls.map(([pid]) => pid), [111, 444, 0], 'unknown and none are 0, once');

    // gearshiftd restarts: the new one hears of the focus again, unasked.
    client.setForeground(666);
    await eventually('666', () => sent.length === 4, lastSent);
    fake.stop();
    await sleep(QUIET_MS);
    fake.start();
    await eventually('the focus sent again after the restart', () => sent.length === 5, lastSent);
    assertEqual(fake.calls, [[666, false]], 're-sent to the restarted gearshiftd');

    // Refusals are logged once per kind, however often the focus moves.
    for (const pid of [NO_SUCH_PROCESS, 1, NO_SUCH_PROCESS, DENIED, 2, DENIED]) {
        client.setForeground(pid);
        const n = sent.length;
        // eslint-disable-next-line no-await-in-loop
        await eventually(`the call for ${pid}`, () => sent.length === n + 1, lastSent);
    }
    assertEqual(sent.slice(5), [
        [NO_SUCH_PROCESS, 'org.freedesktop.DBus.Error.InvalidArgs'], [1, null],
        [NO_SUCH_PROCESS, 'org.freedesktop.DBus.Error.InvalidArgs'],
        [DENIED, 'org.freedesktop.DBus.Error.AccessDenied'], [2, null],
        [DENIED, 'org.freedesktop.DBus.Error.AccessDenied'],
    ], 'each call and its outcome');
    assertEqual(logged.length, 2, `one log line per kind of error: ${JSON.stringify(logged)}`);

    // Gone: a focus change waits for it.
    fake.stop();
    await sleep(QUIET_MS);
    const before = sent.length;
    client.setForeground(42);
    await sleep(QUIET_MS);
    assertEqual(sent.length, before, 'no call while gearshiftd is gone');
    fake.start();
    await eventually('42 once it is back', () => sent.length === before + 1, lastSent);
    assertEqual(fake.calls, [[42, false]], 'the focus waited for gearshiftd');

    // Destroyed (the extension disabled): a pending change is dropped.
    client.setForeground(43);
    client.destroy();
    await sleep(QUIET_MS);
    assertEqual(fake.calls, [[42, false]], 'nothing after destroy()');
    fake.stop();
}

run(main);
