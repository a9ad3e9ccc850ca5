#!/usr/bin/env python3
"""`opscope run --quick`: the report's files, results.json against its schema,
index.html in headless Chromium (no console errors, no network requests, a
screenshot that is not blank), and a trace with a hostile operator name
analysed into the report without anything executing.

Usage: run_test.py OPSCOPE SCHEMA"""
import json
import os
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
import zlib

import jsonschema

opscope, schema_path = sys.argv[1], sys.argv[2]
failures = []


def check(ok, what):
    print(("ok: " if ok else "FAIL: ") + what)
    if not ok:
        failures.append(what)


def chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


class Listener:
    """A proxy that only counts connections: every request the page makes
    (http, https, websockets) would come here."""

    def __init__(self):
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self.requests = []  # first line of each request ("CONNECT host:443 HTTP/1.1")
        # Connections closed before sending a byte: Chromium opens speculative
        # sockets to its proxy; with no request line there is no request to judge.
        self.empty_connections = 0
        self.stop = False
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def run(self):
        while not self.stop:
            try:
                conn, _ = self.sock.accept()
                conn.settimeout(1)
                try:
                    data = conn.recv(4096)
                    if data:
                        self.requests.append(data.split(b"\r\n")[0].decode("latin-1"))
                    else:
                        self.empty_connections += 1
                except OSError:
                    pass
                conn.close()
            except socket.timeout:
                pass

    def close(self):
        self.stop = True
        self.thread.join()
        self.sock.close()


def png_is_blank(path):
    """True when every pixel of the (8-bit RGB/RGBA) PNG has one colour."""
    data = open(path, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        return True
    pos, idat, width, height, channels = 8, b"", 0, 0, 4
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            width, height, depth, colour = struct.unpack(">IIBB", body[:10])
            channels = {2: 3, 6: 4, 0: 1, 4: 2}.get(colour, 4)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    raw = zlib.decompress(idat)
    stride = width * channels
    previous = bytearray(stride)
    colours = set()
    for y in range(height):
        row = raw[y * (stride + 1):(y + 1) * (stride + 1)]
        kind, line = row[0], bytearray(row[1:])
        for x in range(stride):  # undo the PNG filter of this row
            left = line[x - channels] if x >= channels else 0
            up = previous[x]
            corner = previous[x - channels] if x >= channels else 0
            if kind == 1:
                line[x] = (line[x] + left) & 0xFF
            elif kind == 2:
                line[x] = (line[x] + up) & 0xFF
            elif kind == 3:
                line[x] = (line[x] + (left + up) // 2) & 0xFF
            elif kind == 4:
                p = left + up - corner
                pa, pb, pc = abs(p - left), abs(p - up), abs(p - corner)
                pred = left if pa <= pb and pa <= pc else up if pb <= pc else corner
                line[x] = (line[x] + pred) & 0xFF
        previous = line
        if y % 8 == 0:
            for x in range(0, stride, channels * 4):
                colours.add(bytes(line[x:x + channels]))
        if len(colours) > 8:
            return False
    return len(colours) <= 1


def load_in_chromium(browser, page, workdir, screenshot=None):
    """Loads a local page; returns (console error lines, connections, dom)."""
    listener = Listener()
    profile = tempfile.mkdtemp(dir=workdir)
    base = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
            "--disable-background-networking", "--disable-component-update", "--disable-sync",
            f"--user-data-dir={profile}", f"--proxy-server=http://127.0.0.1:{listener.port}",
            "--proxy-bypass-list=<-loopback>", "--enable-logging=stderr", "--v=0",
            "--window-size=1280,2000", "--virtual-time-budget=3000"]
    try:
        dom = subprocess.run(base + ["--dump-dom", "file://" + page], capture_output=True,
                             text=True, timeout=120)
        errors = [line for line in dom.stderr.splitlines()
                  if "CONSOLE" in line or "Refused to" in line or "Uncaught" in line]
        if screenshot:
            shot = subprocess.run(base + [f"--screenshot={screenshot}", "file://" + page],
                                  capture_output=True, text=True, timeout=120)
            errors += [line for line in shot.stderr.splitlines()
                       if "CONSOLE" in line or "Refused to" in line or "Uncaught" in line]
        time.sleep(0.3)
    finally:
        listener.close()
    # Chromium's own background services (clock, component updates, accounts)
    # call home even headless; the page's requests are everything else.
    browser_hosts = ("clients2.google.com", "update.googleapis.com", "accounts.google.com",
                     "edgedl.me.gvt1.com", "redirector.gvt1.com", "safebrowsing.googleapis.com",
                     "optimizationguide-pa.googleapis.com", "content-autofill.googleapis.com")
    page_requests = [r for r in listener.requests
                     if not any(f" {h}" in r or f"//{h}/" in r for h in browser_hosts)]
    if page_requests:
        print("  requests from the page:", page_requests)
    if listener.empty_connections:
        print(f"  ({listener.empty_connections} connection(s) to the proxy closed without a request)")
    return errors, len(page_requests), dom.stdout


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
        check("<script" not in text, f"{page_name} has no scripts")

    browser = chromium()
    if browser is None:
        print("SKIP: headless checks: no chromium (scripts/install-deps installs it)")
        sys.exit(77 if not failures else 1)
    shot = os.path.join(tmp, "index.png")
    errors, connections, dom = load_in_chromium(browser, os.path.join(out, "index.html"), tmp,
                                                shot)
    check(errors == [], "index.html loads with no console errors: " + "; ".join(errors[:3]))
    check(connections == 0, f"index.html makes no network request ({connections})")
    check("opscope report" in dom, "index.html rendered its content")
    check("<img" not in dom, "no element was made from the hostile name")
    check(os.path.exists(shot) and not png_is_blank(shot), "the screenshot is not blank")
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
