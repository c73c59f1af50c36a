#!/usr/bin/env python3
"""Writes the seed inputs of every fuzz target into fuzz/target/seeds/<target>/ (not committed:
`tools/fuzz.sh cmin TARGET` merges them into the committed, minimized fuzz/corpus/<target>/)."""
import json
import pathlib
import re

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent
OUT = HERE / "target" / "seeds"


def write(target, name, data):
    d = OUT / target
    d.mkdir(parents=True, exist_ok=True)
    if isinstance(data, str):
        data = data.encode()
    (d / name).write_bytes(data)


# --- config: the shipped example and broken variants of it.
example = (ROOT / "data/gearshift/config.toml").read_text()
configs = {
    "example": example,
    "empty": "",
    "comments": "# nothing\n\n",
    "one-profile": 'default_profile = "quiet"\n[[profile]]\nname = "quiet"\nmode = "low-power"\n',
    "auto": example.replace("# battery_profile", "battery_profile").replace("# power-saver", "power-saver")
    .replace("# balanced", "balanced").replace("# performance", "performance"),
    "args": example.replace("args = []", 'args = ["--slice-max-ns", "4000000", "ünïcödé"]'),
    "unterminated-table": "autostart = true\n\n[scheduler\npath = 1\n",
    "unterminated-string": 'default_profile = "interactive\n',
    "unknown-key": "autostrat = false\n",
    "unknown-mode": '[[profile]]\nname = "x"\nmode = "turbo"\n',
    "wrong-type": "autostart = 1\n[restart]\nmax_failures = -1\n",
    "big-int": "[restart]\nwindow_s = 99999999999999999999999\n",
    "float": "[stats]\nmin_interval_ms = 2.5e400\n",
    "zero": "[scheduler]\nstart_timeout_ms = 0\n",
    "missing-default": 'default_profile = "nope"\n',
    "reserved": '[[profile]]\nname = "custom"\nmode = "fifo"\n',
    "twice": '[[profile]]\nname = "a"\nmode = "fifo"\n[[profile]]\nname = "a"\nmode = "fifo"\n',
    "bad-name": '[[profile]]\nname = "Ä b"\nmode = "fifo"\n',
    "long-name": '[[profile]]\nname = "' + "a" * 65 + '"\nmode = "fifo"\n',
    "auto-missing": '[auto]\nbattery_profile = "nope"\n[auto.power_profiles]\nbalanced = "x"\n',
    "multibyte-error": "# ééé\ndefault_profile = \"é\x01\"\n",
    "table-twice": "[scheduler]\n[scheduler]\n",
    "inline": 'scheduler = { path = "/x", args = ["a"] }\nprofile = [{ name = "a", mode = "fifo" }]\ndefault_profile = "a"\n',
    "nested-arrays": "x = " + "[" * 40 + "]" * 40 + "\n",
    "dotted": "scheduler.path = '/usr/bin/x'\nrestart.'max_failures' = 3\n",
    "datetime": "autostart = 1979-05-27T07:32:00Z\n",
    "crlf": example.replace("\n", "\r\n"),
    "truncated": example[: len(example) // 2],
}
for name, text in configs.items():
    write("config", name + ".toml", text)

# --- state: what StateFile::save writes, and damaged files.
state = {
    "profile": "low-power",
    "mode": "low-power",
    "preemption": False,
    "profile_reason": "user",
    "auto_power_source": True,
    "follow_power_profile": False,
}
saved = json.dumps(state, indent=2) + "\n"
old = dict(state)
del old["profile_reason"]
states = {
    "saved": saved,
    "compact": json.dumps(state),
    "no-reason": json.dumps(old),
    "custom": json.dumps(dict(state, profile="custom", mode="fifo", profile_reason="battery")),
    "extra-field": json.dumps(dict(state, later="x")),
    "truncated": saved[: len(saved) // 2],
    "wrong-type": json.dumps(dict(state, preemption="yes")),
    "unknown-mode": json.dumps(dict(state, mode="warp")),
    "missing": '{"profile": "x"}',
    "empty": "",
    "null": "null",
    "array": "[]",
    "escapes": json.dumps(dict(state, profile="\u00e9\ud83d\ude00\\\"\u0000")),
    "bad-escape": '{"profile": "\\ud800"}',
    "nested": "[" * 200 + "]" * 200,
    "number": "1e999999",
    "bom": "\ufeff" + saved,
    "nul": b"\x00\xff\xfe",
}
for name, text in states.items():
    write("state", name + ".json", text)

# --- control: every request and response wire form (the flag byte first, see control.rs).
stats_src = (ROOT / "crates/gearshift-types/src/stats.rs").read_text()
stats_fields = re.findall(r"pub (\w+): (\w+),", stats_src)
stats = {}
for i, (field, ty) in enumerate(stats_fields):
    stats[field] = {"Mode": "fifo", "bool": True}.get(ty, i * 1000003)
settings = [{"mode": m, "preemption": p} for m in ("interactive", "fifo", "low-power") for p in (True, False)]
requests = [{"request": "set-settings", "settings": s} for s in settings]
requests += [{"request": "set-foreground", "cgroup_id": c} for c in (0, 4242, 18446744073709551615)]
requests += [{"request": "get-settings"}, {"request": "get-stats"}]
responses = [{"response": "settings", "settings": s} for s in settings]
responses += [{"response": "foreground", "cgroup_id": c} for c in (0, 4242)]
responses += [
    {"response": "stats", "stats": stats},
    {"response": "stats", "stats": {}},
    {"response": "stats", "stats": {"nr_queued": 18446744073709551615}},
    {"response": "error", "message": "unknown mode \"warp\""},
]


def line(msg):
    return json.dumps(msg, separators=(",", ":")).encode() + b"\n"


for i, msg in enumerate(requests):
    write("control", f"request-{i:02}", b"\x0c" + line(msg))
for i, msg in enumerate(responses):
    write("control", f"response-{i:02}", b"\x0d" + line(msg))
write("control", "requests-stream", b"\x02" + b"".join(line(m) for m in requests))
write("control", "responses-stream", b"\x07" + b"".join(line(m) for m in responses))
write("control", "no-newline", b"\x0c" + line(requests[0])[:-1])
write("control", "broken", b"\x0c{\"request\":\"set-settings\",\"settings\":{\"mode\":\"warp\",\"preemption\":true}}\n{\"request\":7}\nnot json\n\n")
write("control", "padded", b"\x1c" + line(requests[0]))
write("control", "padded-long", b"\x1d" + b" " * 100 + line(responses[0]))
