// What the gjs tests of src/gearshift.js share (client.test.js, foreground.test.js).

import GLib from 'gi://GLib';
import System from 'system';

// The module under test: the ES module (GNOME 45+ build), or the converted legacy module of
// the 43-44 build when the first argument names that build's directory.
export async function loadModule() {
    const legacyDir = System.programArgs[0];
    if (!legacyDir)
        return import('../src/gearshift.js');
    imports.searchPath.unshift(legacyDir);
    return imports.gearshift;
}

export function assertEqual(actual, expected, what) {
    const a = JSON.stringify(actual), e = JSON.stringify(expected);
    if (a !== e)
        throw new Error(`${what}: got ${a}, expected ${e}`);
}

export function sleep(ms) {
    return new Promise(resolve => {
        GLib.timeout_add(GLib.PRIORITY_DEFAULT, ms, () => {
            resolve();
            return GLib.SOURCE_REMOVE;
        });
    });
}

// Runs main() in a main loop; prints "ok" when it succeeds (what the Rust side waits for) and
// exits with its status.
export function run(main) {
    const loop = new GLib.MainLoop(null, false);
    let status = 1;
    main().then(() => {
        print('ok');
        status = 0;
        loop.quit();
    }, error => {
        printerr(`FAIL: ${error.message}\n${error.stack}`);
        loop.quit();
    });
    loop.run();
    System.exit(status);
}
