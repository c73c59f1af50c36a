// The quick-settings toggle: on while the Gearshift scheduler runs, a menu of profiles and
// the preemption switch, the active profile as subtitle; hidden while gearshiftd is absent.
// It also tells gearshiftd which process has the focus, for the profiles' foreground boost,
// and names the favoured app in the menu.
// Feature checks cover the API differences between GNOME 43, 44 and 45+ (title/subtitle,
// adding the indicator); the build script turns the imports into legacy ones for 43-44.

import Gio from 'gi://Gio';
import GObject from 'gi://GObject';

import * as Main from 'resource:///org/gnome/shell/ui/main.js';
import * as PopupMenu from 'resource:///org/gnome/shell/ui/popupMenu.js';
import {QuickMenuToggle, SystemIndicator} from 'resource:///org/gnome/shell/ui/quickSettings.js';

import {SchedulerClient, describe} from './gearshift.js';

const APP_ID = 'io.github.gearshift.Gearshift.desktop';

function modeIcon(snapshot) {
    const kind = snapshot.state !== 'running' ? 'stopped'
        : ['fifo', 'low-power'].includes(snapshot.mode) ? snapshot.mode : 'interactive';
    return Gio.ThemedIcon.new_from_names([
        `io.github.gearshift.Gearshift-${kind}-symbolic`,
        'power-profile-performance-symbolic',
    ]);
}

function warn(error, what) {
    if (!error.matches?.(Gio.IOErrorEnum, Gio.IOErrorEnum.CANCELLED))
        console.warn(`Gearshift: ${what}: ${error.message}`);
}

export const GearshiftToggle = GObject.registerClass(
class GearshiftToggle extends QuickMenuToggle {
    _init() {
        super._init({toggleMode: false});
        if ('title' in this)
            this.title = 'Gearshift';
        else
            this.label = 'Gearshift';
        this.visible = false;
        this._snapshot = null;

        this._reason = new PopupMenu.PopupMenuItem('', {reactive: false});
        this.menu.addMenuItem(this._reason);
        this._favouring = new PopupMenu.PopupMenuItem('', {reactive: false});
        this.menu.addMenuItem(this._favouring);
        this._profiles = new PopupMenu.PopupMenuSection();
        this.menu.addMenuItem(this._profiles);
        this.menu.addMenuItem(new PopupMenu.PopupSeparatorMenuItem());
        this._preemption = new PopupMenu.PopupSwitchMenuItem('Preemption', false);
        this._preemption.connect('toggled', (_item, on) => {
            this._client.setPreemption(on).catch(e => warn(e, 'preemption'));
        });
        this.menu.addMenuItem(this._preemption);
        this.menu.addAction('Open Gearshift', () => {
            Gio.DesktopAppInfo.new(APP_ID)?.launch([], null);
        });

        this.connect('clicked', () => {
            const running = this._snapshot?.state === 'running';
            this._client.setRunning(!running).catch(e => warn(e, 'start/stop'));
        });

        this._client = new SchedulerClient(snapshot => this._sync(snapshot));
        this._client.init().catch(e => warn(e, 'connecting to gearshiftd'));

        // The client coalesces bursts and repeats and waits for gearshiftd.
        this._focusId = global.display.connect('notify::focus-window', () => this._followFocus());
        this._followFocus();
    }

    // The focused window's process; 0 when nothing has the focus (-1, unknown, counts as 0).
    _followFocus() {
        this._client?.setForeground(global.display.focus_window?.get_pid() ?? 0);
    }

    _sync(snapshot) {
        this._snapshot = snapshot;
        const view = describe(snapshot);
        this.visible = view.visible;
        if (!view.visible)
            return;
        this.checked = view.checked;
        this.gicon = modeIcon(snapshot);
        if ('subtitle' in this)
            this.subtitle = view.subtitle;
        this.menu.setHeader(this.gicon, view.title, view.subtitle);
        this._reason.label.text = view.reason;
        this._reason.visible = view.reason !== '';
        this._favouring.label.text = view.favouring;
        this._favouring.visible = view.favouring !== '';
        this._preemption.setToggleState(view.preemption);

        this._profiles.removeAll();
        for (const profile of view.profiles) {
            const item = new PopupMenu.PopupMenuItem(profile.name);
            item.setOrnament(profile.active ? PopupMenu.Ornament.DOT : PopupMenu.Ornament.NONE);
            item.connect('activate', () => {
                this._client.setProfile(profile.name).catch(e => warn(e, 'profile'));
            });
            this._profiles.addMenuItem(item);
        }
    }

    destroy() {
        if (this._focusId)
            global.display.disconnect(this._focusId);
        this._focusId = 0;
        this._client?.destroy();
        this._client = null;
        super.destroy();
    }
});

export const GearshiftIndicator = GObject.registerClass(
class GearshiftIndicator extends SystemIndicator {
    _init() {
        super._init();
        this.quickSettingsItems.push(new GearshiftToggle());
    }

    destroy() {
        this.quickSettingsItems.forEach(item => item.destroy());
        super.destroy();
    }
});

// Adds the indicator to the quick settings (addExternalIndicator on 45+, the internal calls
// 43-44 extensions use otherwise); returns the function that removes it again.
export function enableGearshift() {
    const indicator = new GearshiftIndicator();
    const quickSettings = Main.panel.statusArea.quickSettings;
    if (quickSettings.addExternalIndicator) {
        quickSettings.addExternalIndicator(indicator);
    } else {
        quickSettings._indicators.insert_child_at_index(indicator, 0);
        quickSettings._addItems(indicator.quickSettingsItems);
    }
    return () => indicator.destroy();
}
