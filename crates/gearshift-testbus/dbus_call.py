#!/usr/bin/python3
"""One D-Bus call on the system bus, for tests that call as another user.

usage: dbus_call.py DEST PATH INTERFACE METHOD SIGNATURE JSON_ARGS
Variants ("v") take their type from JSON: bool -> b, int -> u, str -> s.
Prints {"ok": <reply>} or {"error": <name>, "message": <text>} and exits 0 either way.
"""
import json
import sys

import dbus

dest, path, iface, method, sig, args = sys.argv[1:7]
args = json.loads(args)


def typed(value):
    if isinstance(value, bool):
        return dbus.Boolean(value)
    if isinstance(value, int):
        return dbus.UInt32(value)
    return dbus.String(value)


if "v" in sig:
    args = [typed(a) if s == "v" else a for s, a in zip(sig, args)]
bus = dbus.SystemBus()
try:
    reply = bus.call_blocking(dest, path, iface, method, sig, args, timeout=30)
    print(json.dumps({"ok": json.loads(json.dumps(reply, default=str))}))
except dbus.exceptions.DBusException as e:
    print(json.dumps({"error": e.get_dbus_name(), "message": e.get_dbus_message()}))
