#!/usr/bin/env python3
"""Golden tests of `opscope analyze` on the real samples in tests/data: what
opscope reports (format, complete events, every operator's count and total
time to the nanosecond, nearest-rank p50 and p99 and the maximum, self time
in host-only traces, steps per rank of a folder) must equal the checked-in
expected files beside this script, which make_expected.py computes
independently with Python's json and csv modules.

    golden_test.py OPSCOPE DATA_DIR GOLDEN_DIR [CASE ...]

A CASE is an expected file's name without .json (ranks is the folder of rank
files); ctest runs each as its own entry, golden_CASE. With no CASE, all run.
"""
import collections
import json
import os
import shutil
import subprocess
import sys
import tempfile

opscope, data, golden = sys.argv[1:4]
every_case = sorted(f[:-5] for f in os.listdir(golden) if f.endswith(".json"))
chosen = sys.argv[4:] or every_case
unknown = sorted(set(chosen) - set(every_case))
if unknown:
    sys.exit(f"golden_test.py: no expected file for {', '.join(unknown)} in {golden}")


def analyze(paths, report):
    out = subprocess.run([opscope, "analyze", *paths, "--top", "0", "--format", "json", "--out", report],
                         capture_output=True, text=True, timeout=120)
    if out.returncode != 0:
        raise RuntimeError(f"exit {out.returncode}: {out.stderr.strip()}")
    return json.loads(out.stdout)["results"]


failures = 0
cases = [f"{c}.json" for c in chosen if c != "ranks"]
for case in cases:
    with open(os.path.join(golden, case), encoding="utf-8") as f:
        want = json.load(f)
    with tempfile.TemporaryDirectory() as report:
        try:
            results = analyze([os.path.join(data, want["sample"])], report)
        except RuntimeError as e:
            print(f"FAIL {case}: {e}")
            failures += 1
            continue
    rows = [r for r in results if r.get("section") in ("operators", "kernels", "host_calls", "annotations")]
    got = collections.defaultdict(lambda: {"count": 0, "total_ns": 0})
    rows_of = collections.Counter(r["operator"] for r in rows)
    with_self = any("self_ns" in o for o in want["operators"].values())
    for r in rows:
        got[r["operator"]]["count"] += r["count"]
        got[r["operator"]]["total_ns"] += round(r["total_ns"])
        if with_self:  # self times add up over a name's classes
            got[r["operator"]]["self_ns"] = got[r["operator"]].get("self_ns", 0) + round(r["self_ns"])
        if rows_of[r["operator"]] == 1:  # percentiles of a name split over classes do not add
            for key in ("p50", "p99", "max"):
                got[r["operator"]][f"{key}_ns"] = round(r[f"{key}_ns"])
    problems = []
    if not rows:
        problems.append("no operator rows")
    else:
        if rows[0]["format"] != want["format"]:
            problems.append(f"format {rows[0]['format']}, expected {want['format']}")
        if rows[0]["events"] != want["complete_events"]:
            problems.append(f"{rows[0]['events']} complete events, expected {want['complete_events']}")
    ops = want["operators"]
    for name in sorted(set(ops) | set(got)):
        want_op = dict(ops.get(name, {}))
        if name in got and rows_of[name] > 1:
            for key in ("p50_ns", "p99_ns", "max_ns"):
                want_op.pop(key, None)
        if (want_op or None) != (dict(got[name]) if name in got else None):
            problems.append(f"{name!r}: opscope {dict(got.get(name, {}))}, expected {ops.get(name)}")
    if "host_busy_ns" in want:  # self times add up to the threads' busy time
        self_total = sum(round(r["self_ns"]) for r in rows)
        if abs(self_total - want["host_busy_ns"]) > len(rows):
            problems.append(f"self times add up to {self_total} ns, the threads were busy "
                            f"{want['host_busy_ns']} ns")
    if "launch_delay_ns" in want:  # from HostToDevice flows (Ascend)
        launch = [r for r in results if r.get("section") == "launch"]
        got_delay = launch and {"p50": round(launch[0].get("launch_delay_p50_ns") or -1000),
                                "p90": round(launch[0].get("launch_delay_p90_ns") or -1000)}
        want_delay = {k: want["launch_delay_ns"][k] for k in ("p50", "p90")}
        want_delay = {k: -1000 if v is None else v for k, v in want_delay.items()}  # unknown
        if got_delay != want_delay:
            problems.append(f"launch delays {got_delay}, expected {want_delay} ns")
        backward = want["launch_delay_ns"].get("backward", 0)
        notes = " ".join(r.get("note", "") for r in results if r.get("section") == "import_notes")
        if backward and f"{backward} of {want['launch_delay_ns']['flows']} host-to-device flows" not in notes:
            problems.append(f"the import notes do not say that {backward} flows end before they "
                            f"start: {notes[:300]!r}")
    judgement = want.get("judgement")
    if judgement:  # what the advisor must and must not conclude
        compute = [r for r in results if r.get("section") == "compute"]
        if not compute or compute[0]["compute_on"] != judgement["compute_on"]:
            problems.append(f"compute on {compute[0]['compute_on'] if compute else None}, "
                            f"expected {judgement['compute_on']}")
        elif judgement["busy_pct"] is not None and abs(compute[0]["busy_pct"] - judgement["busy_pct"]) > 0.05:
            problems.append(f"busy {compute[0]['busy_pct']}%, expected {judgement['busy_pct']}%")
        findings = {r["id"]: r for r in results if r.get("section") == "findings" and "id" in r}
        rows = [r for r in results if r.get("section") == "findings" and "id" in r]
        for f in judgement["findings"]:
            got_f = findings.get(f["id"])
            if "unless_first" in f and rows and rows[0]["id"] == f["unless_first"]:
                # The first finding says it (where the script cannot tell
                # which comes first): this one must then be absent.
                if got_f is not None:
                    problems.append(f"finding {f['id']} must not appear beside a first "
                                    f"{f['unless_first']}: '{got_f['title']}'")
            elif got_f is None:
                problems.append(f"finding {f['id']} missing")
            elif got_f["severity"] != f["severity"] or f["figure"] not in got_f["title"]:
                problems.append(f"finding {f['id']}: {got_f['severity']} '{got_f['title']}', "
                                f"expected {f['severity']} with {f['figure']}")
        if "first" in judgement and (not rows or rows[0]["id"] != judgement["first"]):
            problems.append(f"first finding {rows[0]['id'] if rows else None}, "
                            f"expected {judgement['first']}")
        for absent in judgement["absent_findings"]:
            if absent in findings:
                problems.append(f"finding {absent} must not appear: '{findings[absent]['title']}'")
        steps = {r["step"]: r["status"] for r in results if r.get("section") == "steps"}
        if steps != judgement["steps"]:
            problems.append(f"steps {steps}, expected {judgement['steps']}")
    if problems:
        failures += 1
        print(f"FAIL {case}: " + "; ".join(problems[:5]))
    else:
        print(f"ok {case}: {want['complete_events']} events, {len(ops)} operators agree")


def check_ranks():
    """A folder of rank files: one row per rank, its rank from distributedInfo
    and its step count. Returns whether it passed."""
    with open(os.path.join(golden, "ranks.json"), encoding="utf-8") as f:
        want = json.load(f)
    with tempfile.TemporaryDirectory() as folder, tempfile.TemporaryDirectory() as report:
        for relative in want["samples"]:
            shutil.copy(os.path.join(data, relative), folder)
        try:
            rows = [r for r in analyze([folder], report) if r.get("section") == "ranks"]
            got = {str(r["rank"]): r["steps"] for r in rows}
        except RuntimeError as e:
            got = str(e)
        if got != want["steps_by_rank"]:
            print(f"FAIL ranks: opscope {got}, expected {want['steps_by_rank']}")
        else:
            print(f"ok ranks: {len(got)} ranks from a folder, steps agree {got}")
    return got == want["steps_by_rank"]


if "ranks" in chosen and not check_ranks():
    failures += 1
print(f"{len(chosen) - failures} passed, {failures} failed")
sys.exit(1 if failures else 0)
