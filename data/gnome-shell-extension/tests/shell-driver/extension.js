// Test-only GNOME Shell 43-44 extension (crates/gearshift-tray/tests/gnome_shell.rs installs it
// next to Gearshift's in a private data directory; no package ships it). It serves
// io.github.gearshift.ShellTest on the session bus: Eval(code) evaluates a JavaScript
// expression inside the shell, with the helpers below as `t`, and returns its value as JSON.
//
// Why not org.gnome.Shell.Eval: gnome-shell 43 answers it only in unsafe mode, which has no
// command-line switch in 43 and, once set (by Looking Glass or an extension), shows a
// notification and a panel icon that would end up in the screenshot.

const {Clutter, Gio, GLib, St} = imports.gi;
const Main = imports.ui.main;
const PopupMenu = imports.ui.popupMenu;
const {QuickToggle} = imports.ui.quickSettings;

const BUS_NAME = 'io.github.gearshift.ShellTest';
const OBJECT_PATH = '/io/github/gearshift/ShellTest';
const INTERFACE_XML = `<node>
  <interface name="${BUS_NAME}">
    <method name="Eval">
      <arg name="code" type="s" direction="in"/>
      <arg name="json" type="s" direction="out"/>
    </method>
  </interface>
</node>`;

function descendants(actor) {
    return actor.get_children().flatMap(child => [child, ...descendants(child)]);
}

// What Eval's code gets as `t`.
class Helpers {
    constructor() {
        this.Main = Main;
        // A pointer of its own, moved and clicked through Clutter's input path as a mouse is
        // (picking, crossing events, grabs), so the shell handles the click as a person's.
        const seat = Clutter.get_default_backend().get_default_seat();
        this._pointer = seat.create_virtual_device(Clutter.InputDeviceType.POINTER_DEVICE);
    }

    get quickSettings() {
        return Main.panel.statusArea.quickSettings;
    }

    // The quick-settings toggle titled `title` (43: label; 44+: title), or null.
    toggle(title) {
        return descendants(this.quickSettings.menu.box).find(actor =>
            actor instanceof QuickToggle && (actor.title ?? actor.label) === title) ?? null;
    }

    // The button that opens a QuickMenuToggle's menu (the arrow at its end).
    menuButton(toggle) {
        return descendants(toggle).find(actor => actor instanceof St.Button &&
            actor.child?.style_class === 'quick-toggle-arrow') ?? null;
    }

    // The items of `menu` that have a label, in order.
    menuItems(menu) {
        return descendants(menu.box).filter(actor => actor instanceof PopupMenu.PopupBaseMenuItem &&
            actor.label instanceof St.Label);
    }

    // What a person sees of an item: its text, whether it shows, whether it has the dot.
    describeItem(item) {
        return {
            label: item.label.text,
            visible: item.visible,
            dot: item._ornament === PopupMenu.Ornament.DOT,
        };
    }

    // Clicks the middle of `actor` with the primary button; returns where. Throws, without
    // clicking, while the actor is not on screen yet, its layout is pending (a toggle that
    // just appeared moves the others) or something else would take the click there: the
    // caller tries again.
    click(actor) {
        if (!actor?.mapped)
            throw new Error(`cannot click ${actor}: not on screen`);
        for (let a = actor; a && a !== global.stage; a = a.get_parent()) {
            if (!a.has_allocation())
                throw new Error(`cannot click ${actor}: ${a} is not laid out yet`);
        }
        const [x, y] = actor.get_transformed_position();
        const [width, height] = actor.get_transformed_size();
        const at = [Math.round(x + width / 2), Math.round(y + height / 2)];
        const picked = global.stage.get_actor_at_pos(Clutter.PickMode.REACTIVE, ...at);
        if (picked !== actor && !actor.contains(picked))
            throw new Error(`cannot click ${actor}: ${picked} is at ${at}`);
        const now = GLib.get_monotonic_time();
        this._pointer.notify_absolute_motion(now, ...at);
        this._pointer.notify_button(now, Clutter.BUTTON_PRIMARY, Clutter.ButtonState.PRESSED);
        this._pointer.notify_button(now, Clutter.BUTTON_PRIMARY, Clutter.ButtonState.RELEASED);
        return at;
    }

    // The on-screen box of `actor`: [x, y, width, height].
    box(actor) {
        const [x, y] = actor.get_transformed_position();
        const [width, height] = actor.get_transformed_size();
        return [x, y, width, height].map(Math.round);
    }
}

class Driver {
    constructor() {
        this._helpers = new Helpers();
        this._object = Gio.DBusExportedObject.wrapJSObject(INTERFACE_XML, this);
        this._object.export(Gio.DBus.session, OBJECT_PATH);
        this._nameId = Gio.bus_own_name_on_connection(Gio.DBus.session, BUS_NAME,
            Gio.BusNameOwnerFlags.NONE, null, null);
    }

    // A thrown exception becomes the D-Bus error reply (GJS does that for exported objects).
    Eval(code) {
        const value = new Function('t', `return (${code});`)(this._helpers);
        return JSON.stringify(value) ?? 'null';
    }

    destroy() {
        Gio.bus_unown_name(this._nameId);
        this._object.unexport();
    }
}

/* exported init */
function init() {
    let driver = null;
    return {
        enable: () => (driver = new Driver()),
        disable: () => {
            driver?.destroy();
            driver = null;
        },
    };
}
