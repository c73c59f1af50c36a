// Tests the extension's D-Bus client (src/gearshift.js) against the real gearshiftd on the
// private system bus of the Rust test that runs this (crates/gearshift-tray/tests/
// shell_extension.rs): DBUS_SYSTEM_BUS_ADDRESS points there.
//
// usage: gjs -m client.test.js            the ES module (GNOME 45+ build)
//        gjs -m client.test.js BUILD_DIR  the converted legacy module of the 43-44 build
//
// Prints "restart-now" when the test should restart gearshiftd, "fail-fifo-now" when the
// scheduler should start failing in fifo mode, "ok" at the end.
//
// With GEARSHIFT_TEST_FOREGROUND_PID (a process the Rust test made known to gearshiftd) it also
// checks the focus reports: SetForeground with that pid, once, and again after gearshiftd's
// restart. tests/foreground.test.js covers the same against a fake.

import Gio from 'gi://Gio';
import GLib from 'gi://GLib';

import {assertEqual, loadModule, run, sleep} from './harness.js';

const TIMEOUT_MS = 20000;

// Collects snapshots and lets the test wait for one that satisfies a predicate.
class Recorder {
    constructor() {
        this.latest = null;
        this._waiters = [];
    }

    onChange(snapshot) {
        this.latest = snapshot;
        for (const waiter of [...this._waiters]) {
            if (waiter.predicate(snapshot)) {
                this._waiters.splice(this._waiters.indexOf(waiter), 1);
                GLib.source_remove(waiter.timeout);
                waiter.resolve(snapshot);
            }
        }
    }

    waitFor(what, predicate) {
        if (this.latest && predicate(this.latest))
            return Promise.resolve(this.latest);
        return new Promise((resolve, reject) => {
            const waiter = {predicate, resolve};
            waiter.timeout = GLib.timeout_add(GLib.PRIORITY_DEFAULT, TIMEOUT_MS, () => {
                this._waiters.splice(this._waiters.indexOf(waiter), 1);
                reject(new Error(`timed out waiting for ${what}; last: ${JSON.stringify(this.latest)}`));
                return GLib.SOURCE_REMOVE;
            });
            this._waiters.push(waiter);
        });
    }
}

function otherConnection() {
    const address = GLib.getenv('DBUS_SYSTEM_BUS_ADDRESS');
    return Gio.DBusConnection.new_for_address_sync(address,
        Gio.DBusConnectionFlags.AUTHENTICATION_CLIENT |
        Gio.DBusConnectionFlags.MESSAGE_BUS_CONNECTION, null, null);
}

async function main() {
    const G = await loadModule();
    const absent = G.describe({
        available: false, state: '', stateReason: '', profile: '', profiles: [],
        mode: '', preemption: false,
    });
    assertEqual(absent.visible, false, 'hidden without gearshiftd');

    const recorder = new Recorder();
    const focusedPid = Number(GLib.getenv('GEARSHIFT_TEST_FOREGROUND_PID') ?? 0);
    const foreground = focusedPid > 0;
    const sent = []; // [pid, error message or null] of each SetForeground call
    const sentCalls = new Recorder();
    const client = new G.SchedulerClient(s => recorder.onChange(s), null, {
        foregroundDelayMs: 50,
        onForeground: (pid, error) => {
            sent.push([pid, error?.message ?? null]);
            sentCalls.onChange([...sent]);
        },
    });
    await client.init();
    let s = await recorder.waitFor('gearshiftd', x => x.available);
    assertEqual(s.state, 'stopped', 'state at start');
    assertEqual(s.profile, 'interactive', 'default profile');
    assertEqual(s.profiles.map(p => p.name), ['interactive', 'throughput', 'low-power', 'fifo'],
        'profiles');
    let view = G.describe(s);
    assertEqual([view.visible, view.checked, view.subtitle], [true, false, 'Off (interactive)'],
        'stopped toggle');
    assertEqual(view.profiles.filter(p => p.active).map(p => p.name), ['interactive'], 'active');

    await client.setRunning(true);
    s = await recorder.waitFor('running', x => x.state === 'running');
    view = G.describe(s);
    assertEqual([view.checked, view.subtitle, view.reason], [true, 'interactive', ''],
        'running toggle');

    await client.setProfile('low-power');
    s = await recorder.waitFor('low-power', x => x.profile === 'low-power' && !x.preemption);
    assertEqual(s.mode, 'low-power', 'mode follows the profile');

    await client.setPreemption(true);
    await recorder.waitFor('preemption on', x => x.preemption);

    // A change made by another client arrives through PropertiesChanged.
    otherConnection().call_sync(G.BUS_NAME, G.OBJECT_PATH, G.INTERFACE, 'SetProfile',
        new GLib.Variant('(s)', ['fifo']), null, Gio.DBusCallFlags.NONE, -1, null);
    s = await recorder.waitFor('fifo from elsewhere', x => x.profile === 'fifo');
    assertEqual(G.describe(s).profiles.filter(p => p.active).map(p => p.name), ['fifo'],
        'menu follows');

    await client.setRunning(false);
    await recorder.waitFor('stopped', x => x.state === 'stopped');

    // The focus: the focused app's pid, accepted; a repeat is not sent.
    const pid = focusedPid;
    if (foreground) {
        client.setForeground(pid);
        await sentCalls.waitFor('SetForeground', x => x.length === 1);
        assertEqual(sent, [[pid, null]], 'SetForeground(pid) accepted');
        client.setForeground(pid);
        await sleep(500);
        assertEqual(sent.length, 1, 'a repeat is not sent');
    }

    // gearshiftd goes away (hidden) and comes back (shown, properties read again).
    print('restart-now');
    await recorder.waitFor('gearshiftd gone', x => !x.available);
    assertEqual(G.describe(recorder.latest).visible, false, 'hidden while absent');
    s = await recorder.waitFor('gearshiftd back', x => x.available && x.profile !== '');
    assertEqual(G.describe(s).visible, true, 'shown again');
    assertEqual(s.profile, 'fifo', 'the daemon kept the profile');
    if (foreground) {
        // The restarted gearshiftd forgot the foreground: it hears of it again, unasked.
        await sentCalls.waitFor('SetForeground after the restart', x => x.length === 2);
        assertEqual(sent[1], [pid, null], 'SetForeground(pid) again after the restart');
        client.setForeground(0);
        await sentCalls.waitFor('SetForeground(0)', x => x.length === 3);
        assertEqual(sent[2], [0, null], 'SetForeground(0): nothing has the focus');
    }

    // A profile that keeps failing: gearshiftd goes back to the last one that worked, and
    // the toggle says so, with the daemon's words on what failed.
    await client.setProfile('interactive');
    await client.setRunning(true);
    await recorder.waitFor('interactive running', x => x.state === 'running' &&
        x.profile === 'interactive');
    await sleep(2000); // known good after 1 s of clean running (the Rust side's config)
    print('fail-fifo-now');
    await sleep(500);
    await client.setProfile('fifo');
    // Each property comes in a signal of its own: wait for the whole picture.
    s = await recorder.waitFor('the fallback', x => x.state === 'running' &&
        x.profileReason === 'fallback' && x.profile === 'interactive' &&
        x.stateReason.startsWith('Fell back'));
    view = G.describe(s);
    assertEqual([view.checked, view.subtitle], [true, 'interactive (fallback)'], 'fallback');
    if (!view.reason.includes('profile fifo failed'))
        throw new Error(`fallback reason: got ${JSON.stringify(view.reason)}`);
    client.destroy();
}

run(main);
