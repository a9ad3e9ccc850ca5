#!/usr/bin/env python3
"""Generic code decides nothing by a vendor's or a format's name: what an
event is, which device ran it and what a reader found are facts of the trace
model, set by the readers in src/analyze/importers/<format>/ (and the
backends in src/devices/<kind>/).

Two checks over every .h and .cc under src/ outside those folders, with
comments and string literals left out (a table title may say "Ascend"):
- no comparison of a format name (`format == ...`, `format.rfind(...)`,
  `format.starts_with(...)` and the like): zero, everywhere;
- identifiers that name a vendor (Ascend, Hccl, Nccl, Rocm, Npu): at most as
  many per file as ALLOWED below (none today). The counts only go down: a
  file over its count fails, and one under it is asked to lower its entry,
  so the list shrinks as the code does.

    vendor_names_test.py SRC_DIR
"""
import os
import re
import sys

src = sys.argv[1]
VENDOR_FOLDERS = ("analyze/importers/", "devices/cpu/", "devices/cuda/", "devices/npu/", "mpi/")
# A trace's format as the model or an analysis holds it (`model.format`,
# `a.format`, `t->format`); a local `format` (the output format, a tensor
# format) is not one.
FORMAT_DECISION = re.compile(
    r"(\.|->)format\s*(==|!=)|(\.|->)format\s*\.\s*(rfind|find|starts_with|ends_with|compare)"
    r"\s*\(")
VENDOR_WORD = re.compile(
    r"\b\w*(?:Ascend|ascend|ASCEND|Hccl|hccl|HCCL|Nccl|nccl|NCCL|Rocm|ROCm|rocm)\w*\b"
    r"|\b(?:npu|Npu|NPU)\w*\b|\b\w*_(?:npu|NPU)\b")
# What generic code may still name, file by file: nothing since issue 34
# lowered the Ascend side tables, discovery and task costs into
# importers/ascend/. A new entry needs a reason in its commit.
ALLOWED = {}


def code_only(text):
    """The text with comments, string and character literals blanked."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            i = n if j < 0 else j + 2
        elif text.startswith('R"', i):
            m = re.match(r'R"([^(]*)\(', text[i:])
            end = text.find(")" + m.group(1) + '"', i) if m else -1
            i = n if end < 0 else end + len(m.group(1)) + 2
            out.append('""')
        elif c == "'" and i > 0 and text[i - 1].isalnum() and text[i + 1:i + 2].isalnum():
            out.append(c)  # a digit separator (1'000'000), not a character literal
            i += 1
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            i = j + 1
            out.append('""')
        else:
            out.append(c)
            i += 1
    return "".join(out)


problems, counts = [], {}
for root, _, files in os.walk(src):
    for name in files:
        if not name.endswith((".h", ".cc")):
            continue
        path = os.path.join(root, name)
        rel = os.path.relpath(path, src)
        if rel.startswith(VENDOR_FOLDERS):
            continue
        with open(path, encoding="utf-8") as f:
            code = code_only(f.read())
        for m in FORMAT_DECISION.finditer(code):
            line = code.count("\n", 0, m.start()) + 1
            problems.append(f"{rel}:{line}: decides by a format's name ({m.group(0)!r})")
        n = len(VENDOR_WORD.findall(code))
        if n:
            counts[rel] = n
for rel in sorted(set(counts) | set(ALLOWED)):
    n, allowed = counts.get(rel, 0), ALLOWED.get(rel, 0)
    if n > allowed:
        problems.append(f"{rel}: {n} vendor-named identifiers, {allowed} allowed: lower it into "
                        "the model (a class, a link, a table) in the reader instead")
    elif n < allowed:
        problems.append(f"{rel}: {n} vendor-named identifiers now, the list allows {allowed}: "
                        "lower its entry in ALLOWED")
for p in problems:
    print("FAIL", p)
print(f"{len(counts)} generic files name a vendor ({sum(counts.values())} identifiers); "
      f"{len(problems)} problems")
sys.exit(1 if problems else 0)
