#!/usr/bin/env python3
"""`opscope run --quick`: the report's files, results.json against its schema,
index.html in headless Chromium (no console errors, no network requests, a
screenshot that is not blank), and a trace with a hostile operator name
analysed into the report without anything executing.

Usage: run_test.py OPSCOPE SCHEMA"""
import json
import os
import re
import subprocess
import sys
import tempfile
import time

import jsonschema

tools = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools")
report_script = os.path.join(tools, "..", "..", "src", "report", "report_script.js")
sys.path.insert(0, tools)
from chromium_page import chromium, load_in_chromium, png_is_blank  # noqa: E402

opscope, schema_path = sys.argv[1], sys.argv[2]
failures = []


def check(ok, what):
    print(("ok: " if ok else "FAIL: ") + what)
    if not ok:
        failures.append(what)


with tempfile.TemporaryDirectory() as tmp:
    hostile_name = "<img src=x onerror=alert(1)>"
    hostile = os.path.join(tmp, "hostile.json")
    with open(hostile, "w") as f:
        json.dump({"traceEvents": [
            {"ph": "X", "cat": "cpu_op", "name": hostile_name, "pid": 1, "tid": 1, "ts": 0,
             "dur": 50, "args": {"flops": 100, "bytes": 10}},
            {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 60,
             "dur": 20}]}, f)
    out = os.path.join(tmp, "report")
    started = time.monotonic()
    run = subprocess.run([opscope, "run", "--quick", "--out", out, "--analyze", hostile],
                         capture_output=True, text=True, timeout=300)
    seconds = time.monotonic() - started
    check(run.returncode == 0, f"opscope run --quick exits 0 (got {run.returncode}: {run.stderr})")
    check(seconds < 60, f"--quick finishes quickly ({seconds:.1f} s)")
    check(run.stderr == "", "off a terminal, stderr stays quiet: " + run.stderr[:300])
    for name in ("index.html", "results.json", "summary.csv", "ceilings.json",
                 "traces/resnet50.json", "traces/monitor.json", "analysis/analysis.html"):
        check(os.path.getsize(os.path.join(out, name)) > 0, f"{name} written")

    results = json.load(open(os.path.join(out, "results.json")))
    try:
        jsonschema.validate(results, json.load(open(schema_path)))
        check(True, "results.json matches docs/results.schema.json")
    except jsonschema.ValidationError as e:
        check(False, f"results.json matches its schema: {e.message} at {list(e.path)}")
    titles = [s["title"] for s in results["steps"]]
    for wanted in ("Device", "Load now", "Bandwidth", "Matrix multiplication", "Convolution",
                   "ResNet-50 training", "Monitor under load", "Analysis of the traces"):
        check(wanted in titles, f"the run has the step {wanted}")
    check(all(s["status"] == "ok" for s in results["steps"]), "every step succeeded")
    resnet = [r for s in results["steps"] if s["title"] == "ResNet-50 training"
              for r in s["results"] if r["section"] == "resnet50"]
    check(len(resnet) == 1 and resnet[0]["parameters"] == 25557032,
          "the ResNet-50 step reports torchvision's parameter count")

    html = open(os.path.join(out, "index.html")).read()
    analysis = open(os.path.join(out, "analysis", "analysis.html")).read()
    for page_name, text in (("index.html", html), ("analysis.html", analysis)):
        check("<img" not in text, f"{page_name} holds no raw <img")
        check("&lt;img src=x onerror=alert(1)&gt;" in text, f"{page_name} shows the name escaped")
    # Both pages run only the report's own script (src/report/report_script.js).
    for page in ("index.html", os.path.join("analysis", "analysis.html")):
        inert = subprocess.run(
            [sys.executable, os.path.join(tools, "check_html.py"), os.path.join(out, page),
             "--script", report_script], capture_output=True, text=True)
        check(inert.returncode == 0, f"{page} runs no script but its own {inert.stdout.strip()}")
    # Each section links its tables' CSVs; the sweeps are drawn against size.
    csv_links = set(re.findall(r'href="(tables/[^"]+\.csv)"', html))
    check(csv_links and all(os.path.exists(os.path.join(out, p)) for p in csv_links),
          f"index.html links {len(csv_links)} table CSVs, each written")
    for title in ("size (bytes) (log)", "bandwidth (GB/s)", "problem size (FLOP per call) (log)"):
        check(title in html, f"index.html has a chart with the axis '{title}'")
    check(html.count('class="tick"') >= 12, "the charts have tick labels")
    check(re.search(r'>fp32 peak [0-9.]+ [kMGTP]? ?FLOP/s<', html) is not None,
          "the matmul chart draws the fp32 peak")
    # One unit system: a metric has one unit in smi's JSON, results.json and
    # analysis.json (the unit in the key, "_us", or beside it, "unit").
    smi = json.loads(subprocess.run([opscope, "smi", "--format", "json"], capture_output=True,
                                    text=True, timeout=60).stdout)
    run_smi = [r for st in results["steps"] for r in st["results"] if r.get("section") == "smi"]
    smi_units = {r["metric"]: r["unit"] for r in smi["results"]}
    check(run_smi and all(smi_units.get(r["metric"], r["unit"]) == r["unit"] for r in run_smi),
          "smi and results.json give each device metric the same unit")
    totals = [r["value"] for r in smi["results"] + run_smi if r["metric"] == "memory_total_bytes"]
    check(len(totals) == 2 and totals[0] == totals[1],
          f"memory_total_bytes is the same figure in both ({totals})")
    analysis_json = json.load(open(os.path.join(out, "analysis", "analysis.json")))
    unit_key = re.compile(r"^(.*?)_(ns|us|ms|s|bytes|kib|mib|gib|kb|mb|gb)$")
    seen = {}
    for source, rows in (("smi", smi["results"]),
                         ("results.json", [r for st in results["steps"] for r in st["results"]]),
                         ("analysis.json", analysis_json["results"])):
        for row in rows:
            for key in row:
                m = unit_key.match(key)
                if m:
                    seen.setdefault(m.group(1), set()).add((m.group(2), source))
    mixed = {stem: sorted(units) for stem, units in seen.items() if len({u for u, _ in units}) > 1}
    check(not mixed, f"no metric in two units across the outputs {mixed}")

    # Every CSV loads with pandas, with unique column names.
    try:
        import pandas
    except ImportError:
        pandas = None
        print("SKIP: CSV loading: no pandas")
    if pandas is not None:
        csvs = [os.path.join(out, "summary.csv")] + [
            os.path.join(out, "tables", f) for f in sorted(os.listdir(os.path.join(out, "tables")))]
        for path in csvs:
            try:
                frame = pandas.read_csv(path)
                # An empty table (no kernels on the CPU) keeps its header.
                ok = len(frame.columns) == len(set(frame.columns)) and len(frame.columns) > 0 \
                    and (len(frame) > 0 or path.endswith(".csv") and os.path.basename(path) != "summary.csv")
            except Exception as e:  # noqa: BLE001 - the failure is the finding
                ok = False
                print(f"  {path}: {e}")
            check(ok, f"{os.path.relpath(path, out)} loads with pandas, unique columns")

    browser = chromium()
    if browser is None:
        print("SKIP: headless checks: no chromium (scripts/install-deps installs it)")
        sys.exit(77 if not failures else 1)
    # Kept beside the other reports' screenshots (report_html): the test's output.
    shots = os.path.join(os.getcwd(), "report-screenshots")
    os.makedirs(shots, exist_ok=True)
    shot = os.path.join(shots, "run_index.png")
    errors, connections, dom = load_in_chromium(browser, os.path.join(out, "index.html"), tmp,
                                                shot)
    check(errors == [], "index.html loads with no console errors: " + "; ".join(errors[:3]))
    check(connections == 0, f"index.html makes no network request ({connections})")
    check("opscope report" in dom, "index.html rendered its content")
    check("<img" not in dom, "no element was made from the hostile name")
    check(os.path.exists(shot) and not png_is_blank(shot), "the screenshot is not blank")
    print(f"  screenshot: {shot}")
    errors, connections, dom = load_in_chromium(browser, os.path.join(out, "analysis",
                                                                      "analysis.html"), tmp)
    check(errors == [] and connections == 0, "analysis.html: no console errors, no requests")
    check("<img" not in dom, "analysis.html: no element from the hostile name")

    # The checks can fail: a page with a script, an external image and an error.
    bad = os.path.join(tmp, "bad.html")
    with open(bad, "w") as f:
        f.write("<!DOCTYPE html><html><body><p>x</p><img src=\"http://example.invalid/a.png\">"
                "<script>console.error('boom'); undefined_function();</script></body></html>")
    errors, connections, _ = load_in_chromium(browser, bad, tmp)
    check(errors != [] and connections > 0, "the checks catch console errors and requests")

if failures:
    print(f"{len(failures)} failure(s)")
    sys.exit(1)
