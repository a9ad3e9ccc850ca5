#!/usr/bin/env python3
"""analysis.html in headless Chromium, driven as a user would.

For real traces (two Kineto ranks, a torch_npu folder, a PyTorch CPU trace)
and one with hostile names: no console error, no network request; every
timeline draws its lanes, shows an event's name on hover, lists a window's
events on click, zooms in on "+", pans on a drag and zooms out on the wheel;
a table sorts both ways on its header; every x-y chart has tick labels;
nothing from a trace runs. The page is driven by tests/report/selftest.js,
injected into a copy of the report. A screenshot of each report is written
to SHOT_DIR and its path printed.

With --big: a generated trace of 2.7 million events (streamed to
`opscope analyze -`): its analysis.html is under 5 MB and its timeline first
paints within 2 s of the page's start (Chromium's performance.now()).

Usage: html_report_test.py OPSCOPE DATA_DIR SHOT_DIR [--big]
Exit 77 (skipped) without Chromium."""
import html
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools"))
from chromium_page import chromium, load_in_chromium, png_is_blank  # noqa: E402

opscope, data, shots = sys.argv[1], sys.argv[2], sys.argv[3]
big = "--big" in sys.argv[4:]
selftest = open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "selftest.js"),
                encoding="utf-8").read()
failures = []


def check(ok, what):
    print(("ok: " if ok else "FAIL: ") + what)
    if not ok:
        failures.append(what)


def analyze(inputs, out, stdin=None):
    run = subprocess.run([opscope, "analyze", *inputs, "--out", out, "--top", "3"], stdin=stdin,
                         capture_output=True, text=True, timeout=600)
    if run.returncode != 0:
        print(run.stderr)
    check(run.returncode == 0, f"opscope analyze {' '.join(inputs)} exits 0")
    return os.path.join(out, "analysis.html")


def drive(browser, page, name, tmp, virtual_time=True):
    """Loads a copy of `page` with the self-test injected; returns its results."""
    text = open(page, encoding="utf-8").read()
    end = text.rindex("</body>")
    driven = os.path.join(tmp, name + ".driven.html")
    with open(driven, "w", encoding="utf-8") as f:
        f.write(text[:end] + "<script>" + selftest + "</script>\n" + text[end:])
    os.makedirs(shots, exist_ok=True)
    shot = os.path.join(shots, f"analysis_{name}.png")
    errors, requests, dom = load_in_chromium(browser, driven, tmp, screenshot=shot,
                                             virtual_time=virtual_time, window="1280,1800")
    check(not errors, f"{name}: no console errors {errors[:3]}")
    check(requests == 0, f"{name}: no network requests ({requests})")
    check(os.path.exists(shot) and not png_is_blank(shot), f"{name}: screenshot {shot}")
    print(f"  screenshot: {os.path.abspath(shot)}")
    m = re.search(r'data-selftest="([^"]*)"', dom)
    check(m is not None, f"{name}: the self-test ran")
    return json.loads(html.unescape(m.group(1))) if m else {}, dom


def check_page(r, name, timelines):
    check("error" not in r, f"{name}: self-test raised nothing ({r.get('error', '')[:300]})")
    check(not r.get("pwned"), f"{name}: no script from the trace ran")
    check(len(r.get("timelines", [])) == timelines, f"{name}: {timelines} timeline(s)")
    for i, t in enumerate(r.get("timelines", [])):
        what = f"{name} timeline {i}"
        check(t["lanes"] > 0 and t["coloured_pixels"] > 500,
              f"{what}: {t['lanes']} lanes drawn ({t['coloured_pixels']} coloured pixels)")
        check(t.get("hit_covers") and t.get("expected_name", "") != "" and
              t["expected_name"][:40] in t.get("tip", ""),
              f"{what}: hover shows the name of the event under the pointer")
        check(t.get("listed_rows", 0) >= 1, f"{what}: a click lists the window's events")
        check(abs(t["zoom_in_ratio"] - 0.5) < 0.01, f"{what}: + halves the window")
        check(t["panned"], f"{what}: a drag pans")
        check(abs(t["wheel_out_ratio"] - 1.25) < 0.01, f"{what}: the wheel zooms out by 1.25")
    tables = r.get("tables", {})
    check(tables.get("descending") and tables.get("ascending") and tables.get("rows", 0) >= 3,
          f"{name}: '{tables.get('header')}' sorts both ways over {tables.get('rows')} rows")
    for c in r.get("charts", []):
        check(c["ticks"] >= 4, f"{name}: chart {c['titles']} has {c['ticks']} tick labels")


def write_big_trace(path, events):
    """A Kineto-shaped trace: steps on the main thread, each with operators,
    their launches, and kernels on four streams."""
    names = [f"aten::op{i}" for i in range(40)]
    kernels = [f"void kernel_{i}<float, 128>(float const*, float*, int)" for i in range(60)]
    with open(path, "w") as f:
        f.write('{"traceEvents":[\n')
        n, step, t, first = 0, 0, 0, True
        while n < events:
            lines = [f'{{"ph":"X","cat":"user_annotation","name":"ProfilerStep#{step}","pid":1,'
                     f'"tid":1,"ts":{t},"dur":{270 * 10}}}']
            for i in range(900):
                ts = t + i * 3
                c = n + i
                lines.append(f'{{"ph":"X","cat":"cpu_op","name":"{names[i % 40]}","pid":1,'
                             f'"tid":1,"ts":{ts},"dur":2,"args":{{"External id":{c}}}}}')
                lines.append(f'{{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel",'
                             f'"pid":1,"tid":1,"ts":{ts + 1},"dur":1,"args":{{"correlation":{c}}}}}')
                lines.append(f'{{"ph":"X","cat":"kernel","name":"{kernels[i % 60]}","pid":0,'
                             f'"tid":{7 + i % 4},"ts":{ts + 2},"dur":{1 + i % 9},'
                             f'"args":{{"correlation":{c},"stream":{7 + i % 4}}}}}')
            f.write(("" if first else ",\n") + ",\n".join(lines))
            first = False
            n += len(lines)
            step += 1
            t += 2800
        f.write("\n]}\n")
    return n


browser = chromium()
if browser is None:
    print("SKIP: no chromium on PATH")
    sys.exit(77)

with tempfile.TemporaryDirectory() as tmp:
    if big:
        trace = os.path.join(tmp, "big.json")
        started = time.monotonic()
        n = write_big_trace(trace, 2_700_000)
        print(f"  generated {n} events, {os.path.getsize(trace) / 1e6:.0f} MB "
              f"in {time.monotonic() - started:.1f} s")
        started = time.monotonic()
        page = analyze([trace], os.path.join(tmp, "big"))
        print(f"  analysed in {time.monotonic() - started:.1f} s")
        os.remove(trace)
        size = os.path.getsize(page)
        check(size < 5_000_000, f"2.7M events: analysis.html is {size / 1e6:.2f} MB (< 5 MB)")
        started = time.monotonic()
        r, _ = drive(browser, page, "big", tmp, virtual_time=False)
        print(f"  Chromium loaded, drew, was driven and dumped in {time.monotonic() - started:.1f} s")
        check_page(r, "big", 1)
        for t in r.get("timelines", []):
            check(0 < t["painted_ms"] < 2000,
                  f"2.7M events: first paint of the timeline at {t['painted_ms']:.0f} ms (< 2000)")
            check(t["kept"] <= 40000, f"2.7M events: {t['kept']} events kept in the page")
    else:
        kineto = os.path.join(data, "kineto")
        page = analyze([os.path.join(kineto, "sampled_rank-0.json.gz"),
                        os.path.join(kineto, "sampled_rank-1.json.gz")], os.path.join(tmp, "ranks"))
        r, dom = drive(browser, page, "two_ranks", tmp)
        check_page(r, "two_ranks", 3)  # the ranks on one timeline, then each rank's
        check("Ranks compared" in dom and "Ranks on one timeline" in dom,
              "two_ranks: the ranks' step chart and timeline are there")
        lanes = r.get("timelines", [{}])[0].get("lanes")
        check(lanes == 2, f"two_ranks: the ranks' timeline has one lane per rank ({lanes})")

        page = analyze([os.path.join(data, "ascend", "level1_text")], os.path.join(tmp, "ascend"))
        r, dom = drive(browser, page, "ascend", tmp)
        check_page(r, "ascend", 1)

        page = analyze([os.path.join(data, "torch-cpu", "small_cnn_train_3steps_torch1.13.json")],
                       os.path.join(tmp, "cpu"))
        r, _ = drive(browser, page, "torch_cpu", tmp)
        check_page(r, "torch_cpu", 1)

        hostile_names = ['<img src=x onerror="window.pwned=true">',
                         '</script><script>window.pwned=true</script>',
                         '"><svg onload="window.pwned=true">']
        hostile = os.path.join(tmp, "hostile.json")
        events = []
        for i, name in enumerate(hostile_names * 4):
            events.append({"ph": "X", "cat": "cpu_op", "name": name, "pid": 1, "tid": 1,
                           "ts": i * 100, "dur": 60, "args": {"External id": i}})
            events.append({"ph": "X", "cat": "kernel", "name": name + " kernel", "pid": 0,
                           "tid": 7, "ts": i * 100 + 10, "dur": 40 + i,
                           "args": {"correlation": i, "stream": 7}})
        with open(hostile, "w") as f:
            json.dump({"traceEvents": events}, f)
        page = analyze([hostile], os.path.join(tmp, "hostile"))
        r, dom = drive(browser, page, "hostile", tmp)
        check_page(r, "hostile", 1)
        check(html.escape(hostile_names[0], quote=False) in dom,
              "hostile: the name is shown as text")

if failures:
    print(f"{len(failures)} check(s) failed")
    sys.exit(1)
print("all checks passed")
