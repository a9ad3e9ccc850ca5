#!/usr/bin/env python3
"""The Ascend NPU backend plugin (issue 52, item 2: libopscope_backend_npu.so)
against a stand-in for AscendCL's runtime (fake_ascendcl.c: two devices,
device memory that is host memory behind the pointers, copies that run at
once, faults on request). No Ascend chip is involved: nothing here says how
fast a real NPU is.

- `opscope bw --device npu:0`: every copy kind measured and its data checked
  (h2d and d2h from pinned and pageable memory, d2d, bidir), the STREAM
  kernels the backend does not have waived with the reason;
- `opscope info --device npu:1`: the SoC name AscendCL gives, its memory, the
  datasheet's peaks for the part;
- each error path names the AscendCL call, its code and aclGetRecentErrMsg's
  text: a failing aclrtMalloc, an aclInit that fails, a device that does not
  exist, the library missing.

    npu_backend_test.py OPSCOPE FAKE_ASCENDCL BACKEND_DIR
"""
import json
import os
import subprocess
import sys

opscope, fake, backend_dir = sys.argv[1:4]
failures = 0


def check(ok, what):
    global failures
    print(("ok: " if ok else "FAIL: ") + what)
    failures += 0 if ok else 1


def run(*args, **env):
    e = dict(os.environ, OPSCOPE_ACL_LIBRARY=fake, OPSCOPE_BACKEND_DIR=backend_dir)
    e.update(env)
    return subprocess.run([opscope, *args], capture_output=True, text=True, env=e, timeout=240)


bw = run("bw", "--device", "npu:0", "--sizes", "64K,1M", "--min-reps", "3", "--min-time", "2",
         "--max-time", "500", "--format", "json")
check(bw.returncode == 0, f"bw on npu:0 (exit {bw.returncode}) {bw.stderr[-300:]}")
rows = [r for r in json.loads(bw.stdout)["results"] if r.get("section") == "bandwidth"] \
    if bw.returncode == 0 else []
by = {}
for r in rows:
    by.setdefault((r["type"], r["status"]), []).append(r)
for kind in ("h2d", "d2h", "bidir"):
    ok_rows = by.get((kind, "ok"), [])
    check(len(ok_rows) >= 4 and all(r["bytes_per_s"] > 0 for r in ok_rows),
          f"{kind}: measured at both sizes from pinned and pageable memory ({len(ok_rows)} rows)")
d2d = by.get(("d2d", "ok"), [])
check(len(d2d) == 2 and all(r["kernel"] == "memcpy" for r in d2d),
      f"d2d: the device copy at both sizes ({[r['kernel'] for r in d2d]})")
waived = by.get(("d2d", "waived"), [])
check(len(waived) == 4 and all("aclnn operators are not wired" in r["note"] for r in waived),
      f"d2d: the four STREAM kernels waived once each, saying why ({len(waived)})")
check(not by.get(("h2d", "failed")) and not by.get(("d2h", "failed")),
      "no copy differs from its source")

info = run("info", "--device", "npu:1", "--format", "json")
check(info.returncode == 0, f"info on npu:1 (exit {info.returncode}) {info.stderr[-300:]}")
text = info.stdout
check("Ascend910B3" in text and "npu:1" in text, "info names the SoC AscendCL gives")
check("64.0 GiB" in text, "info gives the memory aclrtGetMemInfo reports (64 GiB)")
check("294.9" in text or "2.949e+14" in text or "294900000000000" in text,
      "info gives the datasheet's fp16 peak of the 910B3")

fail = run("bw", "--device", "npu:0", "--sizes", "64K", "--min-reps", "1", "--min-time", "1",
           FAKE_ACL_FAIL="aclrtMalloc")
check(fail.returncode != 0 and "aclrtMalloc returned 507000: EE9999: fake failure of aclrtMalloc"
      in fail.stderr, f"a failing aclrtMalloc is named with its code and message: "
                      f"{fail.stderr.strip()[-200:]}")
init = run("info", "--device", "npu:0", FAKE_ACL_FAIL="aclInit")
check(init.returncode != 0 and "aclInit returned 507000" in init.stderr,
      f"a failing aclInit is named: {init.stderr.strip()[-200:]}")
absent = run("info", "--device", "npu:5")
check(absent.returncode != 0 and "npu:5" in absent.stderr and "sees 2 NPUs" in absent.stderr,
      f"a device that does not exist: {absent.stderr.strip()[-200:]}")
missing = run("info", "--device", "npu:0", OPSCOPE_ACL_LIBRARY="/nonexistent/libascendcl.so")
check(missing.returncode != 0 and "no AscendCL" in missing.stderr,
      f"no AscendCL library: {missing.stderr.strip()[-200:]}")
cpu = run("info", "--device", "cpu", OPSCOPE_ACL_LIBRARY="/nonexistent/libascendcl.so")
check(cpu.returncode == 0, "the CPU still works without AscendCL")
print(f"{failures} failure(s)")
sys.exit(1 if failures else 0)
