#!/usr/bin/env python3
"""Runs a command and reports, for every process of its tree whose name
begins with NAME (default: opscope, which also matches opscope-scaleout, the
program opscope execs for scale-out work), the peak resident memory: all of it (VmRSS, what
getrusage reports, shared library pages included) and its private part
(RssAnon: heap and stacks, what the process itself costs). Polls /proc every
2 ms, so a peak shorter than that can be missed; VmHWM, read just before a
process ends where possible, bounds VmRSS from above.
Usage: peak_rss.py [--name NAME] -- COMMAND...
Prints one JSON object: {"seconds": wall, "exit": code, "processes": [{"pid",
"peak_rss_kb", "peak_anon_kb"}...]} on the last line of stdout."""
import json
import os
import subprocess
import sys
import time

args = sys.argv[1:]
name = "opscope"
if args[:1] == ["--name"]:
    name, args = args[1], args[2:]
if args[:1] == ["--"]:
    args = args[1:]


def tree(root):
    """The pids under root (inclusive)."""
    children = {}
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/stat") as f:
                parent = int(f.read().rsplit(")", 1)[1].split()[1])
            children.setdefault(parent, []).append(int(pid))
        except (OSError, IndexError, ValueError):
            pass
    out, todo = [], [root]
    while todo:
        p = todo.pop()
        out.append(p)
        todo.extend(children.get(p, []))
    return out


def status(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            fields = dict(line.split(":", 1) for line in f if ":" in line)
        return (fields["Name"].strip(), int(fields.get("VmHWM", "0 kB").split()[0]),
                int(fields.get("VmRSS", "0 kB").split()[0]), int(fields.get("RssAnon", "0 kB").split()[0]))
    except (OSError, KeyError, ValueError):
        return None


start = time.perf_counter()
proc = subprocess.Popen(args, stdout=sys.stderr)
peaks = {}
while proc.poll() is None:
    for pid in tree(proc.pid):
        s = status(pid)
        if s and s[0].startswith(name):
            p = peaks.setdefault(pid, [0, 0])
            p[0] = max(p[0], s[1], s[2])
            p[1] = max(p[1], s[3])
    time.sleep(0.002)
wall = time.perf_counter() - start
print(json.dumps({"seconds": round(wall, 3), "exit": proc.returncode,
                  "processes": [{"pid": k, "peak_rss_kb": v[0], "peak_anon_kb": v[1]}
                                for k, v in sorted(peaks.items())]}))
