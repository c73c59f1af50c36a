#!/usr/bin/env python3
"""Runs and run time of each BPF program a process holds: `name runs run_time_ns` a line.

For tools/build-breakdown.sh: the BPF programs of a sched_ext scheduler are its ops
(gearshift_dispatch, cosmos_enqueue, ...), and with kernel.bpf_stats_enabled=1 the kernel
counts how often each ran and for how long (in /proc/PID/fdinfo). The program's name is not
in fdinfo: the file descriptor is duplicated with pidfd_getfd(2) and asked with
BPF_OBJ_GET_INFO_BY_FD. Needs root (CAP_SYS_PTRACE over the process, CAP_BPF).
"""

import ctypes
import os
import struct
import sys

SYS_PIDFD_GETFD = 438
SYS_BPF = 321
BPF_OBJ_GET_INFO_BY_FD = 15
# struct bpf_prog_info: name[BPF_OBJ_NAME_LEN] follows 64 bytes of earlier fields.
PROG_INFO_NAME = slice(64, 80)
PROG_INFO_SIZE = 256

libc = ctypes.CDLL(None, use_errno=True)


def prog_name(pidfd: int, fd: int) -> str | None:
    own = libc.syscall(SYS_PIDFD_GETFD, pidfd, fd, 0)
    if own < 0:
        return None
    try:
        info = ctypes.create_string_buffer(PROG_INFO_SIZE)
        attr = ctypes.create_string_buffer(
            struct.pack("IIQ", own, PROG_INFO_SIZE, ctypes.addressof(info)), 64
        )
        if libc.syscall(SYS_BPF, BPF_OBJ_GET_INFO_BY_FD, attr, 64) != 0:
            return None
        return info.raw[PROG_INFO_NAME].split(b"\0")[0].decode()
    finally:
        os.close(own)


def prog_costs(pid: int) -> dict[str, tuple[int, int]]:
    costs = {}
    pidfd = os.pidfd_open(pid)
    try:
        for fd in os.listdir(f"/proc/{pid}/fd"):
            try:
                if "bpf-prog" not in os.readlink(f"/proc/{pid}/fd/{fd}"):
                    continue
                with open(f"/proc/{pid}/fdinfo/{fd}") as f:
                    fields = dict(
                        line.split(":", 1) for line in f.read().splitlines() if ":" in line
                    )
            except OSError:
                continue  # closed meanwhile
            name = prog_name(pidfd, int(fd)) or f"fd{fd}"
            costs[name] = (
                int(fields.get("run_cnt", "0")),
                int(fields.get("run_time_ns", "0")),
            )
    finally:
        os.close(pidfd)
    return costs


def main() -> int:
    if len(sys.argv) != 2 or not sys.argv[1].isdigit():
        print("usage: bpf_prog_costs.py PID", file=sys.stderr)
        return 2
    try:
        costs = prog_costs(int(sys.argv[1]))
    except OSError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    for name, (runs, ns) in sorted(costs.items()):
        print(name, runs, ns)
    return 0


if __name__ == "__main__":
    sys.exit(main())
