#!/usr/bin/env python3
"""Every Ascend function opscope calls and every structure it declares is
listed in docs/ascend.md beside the published reference it follows (issue
52: "a test lists each function and structure used with the document it
follows"). The functions are read from the code that loads them (each
LoadSymbol name in the DCMI sampler and the NPU backend); the structures from
the `struct dcmi_*` / `acl*` declarations there. A function added to the code
without its line in the document fails here, and so does one the document
lists but the code no longer calls.

    ascend_declarations_test.py SOURCE_DIR
"""
import os
import re
import sys

src = sys.argv[1]
files = ["src/monitor/dcmi_sampler.cc", "src/devices/npu/acl_runtime.cc",
         "src/devices/npu/acl_runtime.h"]
code = "".join(open(os.path.join(src, f), encoding="utf-8").read() for f in files)
doc = open(os.path.join(src, "docs", "ascend.md"), encoding="utf-8").read()
section = doc.split("## The published pages each call follows", 1)[-1]
failures = 0

functions = set(re.findall(r'LoadSymbol\([a-z_]+, "([A-Za-z_0-9]+)"', code))
structures = set(re.findall(r"\bstruct ((?:dcmi|acl)[A-Za-z_0-9]*) \{", code))
for name in sorted(functions | structures):
    ok = f"`{name}`" in section
    print(("ok: " if ok else "FAIL: ") + f"{name} is listed with its reference")
    failures += 0 if ok else 1
# The other way: every DCMI or AscendCL function the section names is called.
listed = set(re.findall(r"`((?:dcmi_|acl)[A-Za-z_0-9]+)`", section))
stale = sorted(n for n in listed if n not in functions and n not in structures
               and not n.startswith(("ACL_", "aclrtMemcpyKind", "aclrtMemMallocPolicy",
                                     "aclrtMemAttr", "aclDataType", "aclFormat", "aclrtDevAttr",
                                     "aclDeviceInfo")))
print(("ok: " if not stale else "FAIL: ") + f"no listed function the code does not call {stale}")
failures += 1 if stale else 0
check_counts = len(functions) >= 30 and len(structures) >= 3
print(("ok: " if check_counts else "FAIL: ") +
      f"the code's declarations were found ({len(functions)} functions, {len(structures)} structures)")
failures += 0 if check_counts else 1
print(f"{failures} failure(s)")
sys.exit(1 if failures else 0)
