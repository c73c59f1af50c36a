// GNOME 43-44 entry point (legacy imports, ExtensionUtils). The build script puts it at the
// root of the 43-44 build, next to the converted ui.js and gearshift.js.

const ExtensionUtils = imports.misc.extensionUtils;

/* exported init */
function init() {
    const {enableGearshift} = ExtensionUtils.getCurrentExtension().imports.ui;
    let disableGearshift = null;
    return {
        enable: () => (disableGearshift = enableGearshift()),
        disable: () => {
            disableGearshift?.();
            disableGearshift = null;
        },
    };
}
