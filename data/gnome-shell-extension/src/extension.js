// GNOME 45+ entry point (ES modules, the Extension class).

import {Extension} from 'resource:///org/gnome/shell/extensions/extension.js';

import {enableGearshift} from './ui.js';

export default class GearshiftExtension extends Extension {
    enable() {
        this._disable = enableGearshift();
    }

    disable() {
        this._disable?.();
        this._disable = null;
    }
}
