#!/usr/bin/env python3
"""Runs a command and checks its peak resident memory.

Usage: peak_rss.py LIMIT_MIB COMMAND [ARGS...]

Prints the peak RSS to standard error and exits with the command's own status,
or 99 when the peak went over LIMIT_MIB (the memory bound is the point)."""
import resource
import subprocess
import sys

limit_mib = float(sys.argv[1])
status = subprocess.run(sys.argv[2:]).returncode
peak_mib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
print(f"peak_rss: {peak_mib:.1f} MiB (limit {limit_mib:.0f} MiB)", file=sys.stderr)
sys.exit(99 if peak_mib > limit_mib else status)
