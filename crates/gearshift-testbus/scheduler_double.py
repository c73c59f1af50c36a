#!/usr/bin/python3
"""Test double of scx_gearshift for gearshiftd's tests (never installed, never used by the product).

Speaks the real control protocol (one JSON object per line on a Unix socket) and plays the
kernel's part by writing the sched_ext sysfs files under $GEARSHIFT_DOUBLE_SYSFS. Behaviour is
steered through files in $GEARSHIFT_DOUBLE_DIR:
  fail-start   exit at once with a kernel-style exit report, never enabled
  crash        (created while running) exit with a kernel-style exit report
  refuse       answer every request with an error
  hang-start   never report enabled
  hotplug      (created while running) re-attach in-process, as on CPU hotplug
  fail-mode    (contains a mode) exit with a kernel-style exit report whenever that mode is
               in effect, at start or after a change: one mode fails, the others work
It answers set-foreground (and shows the cgroup in its stats) and records its pid in "pid", its
arguments in "args" and every request in "requests.log".
"""
import argparse
import json
import os
import signal
import socket
import sys
import time

ap = argparse.ArgumentParser()
ap.add_argument("--mode", default="interactive")
ap.add_argument("--preemption", default="true")
ap.add_argument("--control-socket", required=True)
ap.add_argument("--report-events", action="store_true")
args, _ = ap.parse_known_args()

ctl = os.environ["GEARSHIFT_DOUBLE_DIR"]
sysfs = os.path.join(os.environ["GEARSHIFT_DOUBLE_SYSFS"], "kernel", "sched_ext")
MODES = ("interactive", "fifo", "low-power")


def flag(name):
    return os.path.exists(os.path.join(ctl, name))


def kernel_state(state):
    os.makedirs(os.path.join(sysfs, "root"), exist_ok=True)
    with open(os.path.join(sysfs, "state"), "w") as f:
        f.write(state + "\n")
    with open(os.path.join(sysfs, "root", "ops"), "w") as f:
        f.write("gearshift\n" if state == "enabled" else "")


def event(name):
    if args.report_events:
        print("gearshift-event: " + name, file=sys.stderr, flush=True)


def leave(code, report):
    kernel_state("disabled")
    print(report, file=sys.stderr, flush=True)
    sys.exit(code)


with open(os.path.join(ctl, "pid"), "w") as f:
    f.write(str(os.getpid()))
with open(os.path.join(ctl, "args"), "w") as f:
    f.write(json.dumps(sys.argv[1:]))
print("scheduler double starting", file=sys.stderr, flush=True)
if flag("fail-start"):
    leave(1, "EXIT: runtime error (the double was told to fail at start)")

settings = {"mode": args.mode, "preemption": args.preemption == "true"}
foreground = {"cgroup_id": 0}


def fail_if_in_failing_mode():
    try:
        with open(os.path.join(ctl, "fail-mode")) as f:
            failing = f.read().strip()
    except FileNotFoundError:
        return
    if settings["mode"] == failing:
        leave(1, "EXIT: runtime error (the double was told to fail in " + failing + " mode)")


fail_if_in_failing_mode()
signal.signal(signal.SIGTERM, lambda *_: leave(0, "EXIT: Scheduler unregistered from user space"))
started = time.monotonic()

try:
    os.unlink(args.control_socket)
except FileNotFoundError:
    pass
srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
srv.bind(args.control_socket)
srv.listen(8)
srv.settimeout(0.05)
if not flag("hang-start"):
    kernel_state("enabled")
    event("attached")


def answer(req):
    with open(os.path.join(ctl, "requests.log"), "a") as f:
        f.write(json.dumps(req) + "\n")
    if flag("refuse"):
        return {"response": "error", "message": "the double refuses"}
    kind = req.get("request")
    if kind == "set-settings":
        new = req.get("settings") or {}
        if new.get("mode") not in MODES or not isinstance(new.get("preemption"), bool):
            return {"response": "error", "message": "bad settings"}
        settings.update(mode=new["mode"], preemption=new["preemption"])
    elif kind == "set-foreground":
        cgroup_id = req.get("cgroup_id")
        if not isinstance(cgroup_id, int) or isinstance(cgroup_id, bool) or cgroup_id < 0:
            return {"response": "error", "message": "bad cgroup_id"}
        foreground["cgroup_id"] = cgroup_id
        return {"response": "foreground", "cgroup_id": cgroup_id}
    elif kind == "get-stats":
        up = int((time.monotonic() - started) * 1000)
        stats = {"mode": settings["mode"], "preemption": settings["preemption"],
                 "uptime_ms": up, "nr_online_cpus": os.cpu_count(), "nr_queued": up // 10,
                 "nr_user_dispatches": up // 20, "nr_kernel_dispatches": up // 40,
                 "foreground_cgroup_id": foreground["cgroup_id"]}
        return {"response": "stats", "stats": stats}
    elif kind != "get-settings":
        return {"response": "error", "message": "unknown request"}
    return {"response": "settings", "settings": dict(settings)}


while True:
    if flag("hotplug"):
        os.unlink(os.path.join(ctl, "hotplug"))
        kernel_state("disabled")
        print("EXIT: unregistered from the main kernel (cpu 1 going offline, restarting)",
              file=sys.stderr, flush=True)
        event("restarting")
        time.sleep(0.3)
        kernel_state("enabled")
        event("attached")
    if flag("crash"):
        os.unlink(os.path.join(ctl, "crash"))
        leave(1, "EXIT: runtime error (the double was told to crash)")
    fail_if_in_failing_mode()
    try:
        conn, _ = srv.accept()
    except socket.timeout:
        continue
    with conn:
        conn.settimeout(5)
        buf = b""
        try:
            while True:
                chunk = conn.recv(65536)
                if not chunk:
                    break
                buf += chunk
                while b"\n" in buf:
                    line, buf = buf.split(b"\n", 1)
                    reply = answer(json.loads(line))
                    conn.sendall(json.dumps(reply).encode() + b"\n")
        except (OSError, ValueError):
            pass
