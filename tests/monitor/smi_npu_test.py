#!/usr/bin/env python3
"""`opscope smi` on Ascend NPUs as a user runs it (issue 52: smi's table and
JSON against the stand-in, tests/monitor/fake_dcmi.c: card 3 with two chips):

- `--device npu:0 --format json`: the chip's readings in DCMI's units turned
  into the report's (87% AI Core, 310.5 W, 3 GiB of HBM, ECC counts), and
  what the chip does not give is n/a with the DCMI function named, never 0;
- the default view (all devices) lists the CPU and both chips;
- without the library: one line says no Ascend driver was found, and the CPU
  rows are there, exit 0.

    smi_npu_test.py OPSCOPE FAKE_DCMI
"""
import json
import os
import subprocess
import sys

opscope, fake = sys.argv[1:3]
failures = 0


def check(ok, what):
    global failures
    print(("ok: " if ok else "FAIL: ") + what)
    failures += 0 if ok else 1


def smi(*args, library=fake):
    env = dict(os.environ, OPSCOPE_DCMI_LIBRARY=library,
               OPSCOPE_ACL_LIBRARY="/nonexistent/libascendcl.so",
               OPSCOPE_NVML_LIBRARY="/nonexistent/libnvidia-ml.so.1")
    return subprocess.run([opscope, "smi", *args], capture_output=True, text=True, env=env,
                          timeout=60)


run = smi("--device", "npu:0", "--format", "json")
check(run.returncode == 0, f"smi --device npu:0 (exit {run.returncode}) {run.stderr[-200:]}")
rows = {r["metric"]: r for r in json.loads(run.stdout)["results"] if r.get("device") == "npu:0"} \
    if run.returncode == 0 else {}
want = {"npu_aicore_utilization_percent": 87, "npu_power_watts": 310.5,
        "npu_hbm_used_bytes": 3072 * 2**20, "npu_temperature_celsius": 52,
        "npu_ecc_double_bit_errors{memory=hbm}": 1}
for metric, value in want.items():
    got = rows.get(metric, {}).get("value")
    check(got is not None and abs(got - value) < 1e-6, f"{metric} = {value} (got {got})")
clock = rows.get("npu_aicore_clock_mhz", {})
check(clock.get("value") is None and "dcmi_get_device_frequency" in json.dumps(clock),
      f"the clock the stand-in does not give is n/a, naming the function ({clock})")

table = smi()
check(table.returncode == 0 and "npu:0" in table.stdout and "npu:1" in table.stdout
      and "cpu" in table.stdout, "the default view lists the CPU and both chips")

none = smi(library="/nonexistent/libdcmi.so")
lines = [line for line in (none.stdout + none.stderr).splitlines() if "Ascend" in line]
check(none.returncode == 0 and "cpu_utilization_percent" in none.stdout
      and len([line for line in lines if line.startswith("ascend:")]) == 1,
      f"no Ascend driver: one line, the CPU rows, exit 0 ({lines[:2]})")
print(f"{failures} failure(s)")
sys.exit(1 if failures else 0)
