#!/usr/bin/env python3
"""The Ascend NPU backend plugin (issue 52, item 2: libopscope_backend_npu.so)
against a stand-in for AscendCL's runtime (fake_ascendcl.c: two devices,
device memory that is host memory behind the pointers, copies that run at
once, faults on request). No Ascend chip is involved: nothing here says how
fast a real NPU is.

- `opscope bw --device npu:0`: every copy kind measured and its data checked
  (h2d and d2h from pinned and pageable memory, d2d, bidir), the STREAM
  kernels the backend does not have waived with the reason;
- `opscope bench matmul --device npu:0` through aclnnMatmul (fake_aclnn.c
  computes in double and stores the result in the output's type, rounded as
  the chip stores it): fp32 and fp16 (fp32 out) verified against the
  double-precision reference within 1e-5; bf16 (bf16 out, widened when read
  back) verified with bf16's rounding allowed, its error above what an fp32
  output could show and within the bound, and the note saying so; tf32
  waived with the reason; without aclnn, waived saying so;
- `opscope bench conv2d --device npu:0` through aclnnConvolution: a padded
  one and a strided grouped one, fp32 verified within 1e-5, fp16 and bf16
  (output in the inputs' type) verified with that type's rounding allowed;
- `opscope info --device npu:1`: the SoC name AscendCL gives, its memory, the
  datasheet's peaks for the part;
- each error path names the AscendCL call, its code and aclGetRecentErrMsg's
  text: a failing aclrtMalloc, a device lost in the middle of a run, an
  aclInit that fails, a device that does not exist, the library missing.

    npu_backend_test.py OPSCOPE FAKE_ASCENDCL BACKEND_DIR FAKE_ACLNN
"""
import json
import os
import subprocess
import sys

opscope, fake, backend_dir, fake_aclnn = sys.argv[1:5]
failures = 0


def check(ok, what):
    global failures
    print(("ok: " if ok else "FAIL: ") + what)
    failures += 0 if ok else 1


def run(*args, **env):
    e = dict(os.environ, OPSCOPE_ACL_LIBRARY=fake, OPSCOPE_BACKEND_DIR=backend_dir,
             OPSCOPE_ACLNN_LIBRARY=fake_aclnn)
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
check(len(waived) == 4 and all("not wired" in r["note"] for r in waived),
      f"d2d: the four STREAM kernels waived once each, saying why ({len(waived)})")
check(not by.get(("h2d", "failed")) and not by.get(("d2h", "failed")),
      "no copy differs from its source")

mm = run("bench", "matmul", "--device", "npu:0", "--sizes", "64", "--dtype",
         "fp32,fp16,bf16,tf32", "--min-reps", "3", "--min-time", "2", "--format", "json")
check(mm.returncode == 0, f"bench matmul on npu:0 (exit {mm.returncode}) {mm.stderr[-300:]}")
cases = {r["dtype"]: r for r in json.loads(mm.stdout)["results"]
         if r.get("section") == "matmul"} if mm.returncode == 0 else {}
for dtype in ("fp32", "fp16"):
    r = cases.get(dtype, {})
    check(r.get("status") == "ok" and r.get("max_rel_error") is not None
          and r["max_rel_error"] < 1e-5,
          f"matmul {dtype}: measured and verified ({r.get('status')}, {r.get('max_rel_error')})")
# bf16 is stored with 8 significant bits: a relative error (to sum |a*b|) of
# up to 2^-8 beyond the accumulation's; over 64x64 outputs some element comes
# well above 1e-5, which no fp32 output would show.
BF16_U, F16_U = 2.0 ** -8, 2.0 ** -11
r = cases.get("bf16", {})
check(r.get("status") == "ok" and r.get("max_rel_error") is not None
      and 1e-5 < r["max_rel_error"] <= BF16_U + 1e-5
      and "writes the result in bf16" in r.get("note", ""),
      f"matmul bf16: measured, verified with bf16's rounding allowed, and said "
      f"({r.get('status')}, {r.get('max_rel_error')}, {r.get('note')})")
check(cases.get("tf32", {}).get("status") == "waived"
      and "HF32" in cases.get("tf32", {}).get("note", ""), "matmul tf32: waived, saying why")
conv = run("bench", "conv2d", "--device", "npu:0", "--configs",
           "mb2ic8ih10oc4kh3sh1ph1,mb1ic8ih9oc8kh3sh2g2", "--dtype", "fp32,fp16,bf16",
           "--min-reps", "3", "--min-time", "2", "--format", "json")
check(conv.returncode == 0, f"bench conv2d on npu:0 (exit {conv.returncode}) {conv.stderr[-300:]}")
convs = [r for r in json.loads(conv.stdout)["results"] if r.get("section") == "conv2d"] \
    if conv.returncode == 0 else []
fp32 = [r for r in convs if r["dtype"] == "fp32"]
check(len(fp32) == 2 and all(r["status"] == "ok" and r["max_rel_error"] < 1e-5 for r in fp32),
      f"conv2d fp32 (padded; strided and grouped): measured and verified "
      f"({[(r['status'], r['max_rel_error']) for r in fp32]})")
for dtype, u in (("fp16", F16_U), ("bf16", BF16_U)):
    narrow = [r for r in convs if r["dtype"] == dtype]
    check(len(narrow) == 2 and all(r["status"] == "ok" and r["max_rel_error"] <= u + 1e-5
                                   and f"writes the result in {dtype}" in r.get("note", "")
                                   for r in narrow),
          f"conv2d {dtype} (output in the inputs' type): verified with its rounding allowed "
          f"({[(r['status'], r['max_rel_error'], r.get('note')) for r in narrow]})")
no_nn = run("bench", "matmul", "--device", "npu:0", "--sizes", "64", "--dtype", "fp32",
            "--min-reps", "1", "--min-time", "1", "--format", "json",
            OPSCOPE_ACLNN_LIBRARY="/nonexistent/libopapi.so")
check(no_nn.returncode == 0 and "no aclnn" in no_nn.stdout,
      f"without aclnn the matmul is waived, saying so (exit {no_nn.returncode})")
bad = run("bench", "matmul", "--device", "npu:0", "--sizes", "64", "--dtype", "fp32",
          "--min-reps", "1", "--min-time", "1", FAKE_ACL_FAIL="aclnnMatmul")
check(0 < bad.returncode < 128 and "aclnnMatmul returned 561000" in bad.stderr,
      f"a failing aclnnMatmul is named with its code: {bad.stderr.strip()[-160:]}")

info = run("info", "--device", "npu:1", "--format", "json")
check(info.returncode == 0, f"info on npu:1 (exit {info.returncode}) {info.stderr[-300:]}")
text = info.stdout
check("Ascend910B3" in text and "npu:1" in text, "info names the SoC AscendCL gives")
check("64.0 GiB" in text, "info gives the memory aclrtGetMemInfo reports (64 GiB)")
check("20 AI Cores" in text and "40 Vector Cores" in text and "192" in text,
      "info gives the AI Cores, Vector Cores and L2 buffer AscendCL reports")
check("294.9" in text or "2.949e+14" in text or "294900000000000" in text,
      "info gives the datasheet's fp16 peak of the 910B3")

fail = run("bw", "--device", "npu:0", "--sizes", "64K", "--min-reps", "1", "--min-time", "1",
           FAKE_ACL_FAIL="aclrtMalloc")
check(0 < fail.returncode < 128 and "aclrtMalloc returned 507000: EE9999: fake failure of aclrtMalloc"
      in fail.stderr, f"a failing aclrtMalloc is named with its code and message: "
                      f"{fail.stderr.strip()[-200:]}")
lost = run("bw", "--device", "npu:0", "--sizes", "64K", "--min-reps", "3", "--min-time", "2",
           FAKE_ACL_LOSE_AFTER="60")
check(0 < lost.returncode < 128 and "returned 507899: EL9999: fake: the device is lost"
      in lost.stderr and "terminate called" not in lost.stderr,
      f"a device lost during bw: the failing call and the driver's words, no crash: "
      f"{lost.stderr.strip()[-200:]}")
init = run("info", "--device", "npu:0", FAKE_ACL_FAIL="aclInit")
check(0 < init.returncode < 128 and "aclInit returned 507000" in init.stderr,
      f"a failing aclInit is named: {init.stderr.strip()[-200:]}")
absent = run("info", "--device", "npu:5")
check(0 < absent.returncode < 128 and "npu:5" in absent.stderr and "sees 2 NPUs" in absent.stderr,
      f"a device that does not exist: {absent.stderr.strip()[-200:]}")
missing = run("info", "--device", "npu:0", OPSCOPE_ACL_LIBRARY="/nonexistent/libascendcl.so")
check(0 < missing.returncode < 128 and "no AscendCL" in missing.stderr,
      f"no AscendCL library: {missing.stderr.strip()[-200:]}")
cpu = run("info", "--device", "cpu", OPSCOPE_ACL_LIBRARY="/nonexistent/libascendcl.so")
check(cpu.returncode == 0, "the CPU still works without AscendCL")
print(f"{failures} failure(s)")
sys.exit(1 if failures else 0)
