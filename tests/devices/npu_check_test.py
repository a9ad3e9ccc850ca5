#!/usr/bin/env python3
"""scripts/npu-check (issue 52, item 5), the script an Ascend user runs on
real hardware, exercised here against the stand-in libraries
(fake_ascendcl.c, fake_aclnn.c, fake_dcmi.c; Huawei's npu-smi, ascend-dmi and
torch_npu are absent): without any NPU it says so in one line and exits 0;
with the stand-ins every step runs and the closing table has opscope's side
of each row (copies in GB/s, the matmul's TFLOP/s) and says which tool of
Huawei's was not there. The figures are the stand-ins' (host memcpy, a host
matmul): nothing here measures an NPU.

    npu_check_test.py OPSCOPE FAKE_ASCENDCL FAKE_ACLNN FAKE_DCMI BACKEND_DIR
"""
import os
import re
import subprocess
import sys
import tempfile

opscope, acl, aclnn, dcmi, backend_dir = sys.argv[1:6]
script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts",
                      "npu-check")
failures = 0
logs = tempfile.TemporaryDirectory()  # the script's logs: removed at exit, never left in /tmp


def check(ok, what):
    global failures
    print(("ok: " if ok else "FAIL: ") + what)
    failures += 0 if ok else 1


def run(**env):
    e = dict(os.environ, OPSCOPE=opscope, OPSCOPE_BACKEND_DIR=backend_dir,
             OUT=logs.name,
             PATH="/usr/bin:/bin")
    e.update(env)
    return subprocess.run(["bash", script], capture_output=True, text=True, env=e, timeout=280)


none = run(OPSCOPE_ACL_LIBRARY="/nonexistent/libascendcl.so")
lines = none.stdout.strip().splitlines()
check(none.returncode == 0 and len(lines) == 1 and "no Ascend NPU" in lines[0],
      f"no NPU: one line, exit 0 ({none.returncode}: {none.stdout.strip()[:160]})")

full = run(OPSCOPE_ACL_LIBRARY=acl, OPSCOPE_ACLNN_LIBRARY=aclnn, OPSCOPE_DCMI_LIBRARY=dcmi,
           NPU_CHECK_MATMUL_SIZE="64", NPU_CHECK_BW_SIZES="64K,1M")
out = full.stdout
check(full.returncode == 0, f"with the stand-ins (exit {full.returncode}) {full.stderr[-300:]}")
for t in ("h2d", "d2h", "bidir", "d2d"):
    check(re.search(rf"bw {t} \(1M, best\)\s+[0-9.]+ GB/s\s+ascend-dmi not installed", out)
          is not None, f"bw {t}: opscope's GB/s beside 'ascend-dmi not installed'")
check(re.search(r"matmul fp16 64\^3 TFLOP/s\s+[0-9.e+-]+\s+torch_npu not installed", out)
      is not None, "matmul: opscope's TFLOP/s beside 'torch_npu not installed'")
check("npu-smi not installed" in out, "device load: npu-smi said absent")
print(f"{failures} failure(s)")
sys.exit(1 if failures else 0)
