#!/usr/bin/env python3
"""XPlane (importers/xplane): what `opscope analyze` reports of the real JAX
XSpace in tests/data/xplane must equal what xplane_expected.py computes from
the raw protobuf with its own decoder (every kernel's count and time, the
timed events in all); the profiler's own errors and warnings planted in it
are said, its dropped events counted; the damaged TPU copy (bytes replaced
by U+FFFD) is refused with the offset and the damage named, never read as
garbage.

    xplane_test.py OPSCOPE DATA_DIR
"""
import csv
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import xplane_expected  # noqa: E402
from checks import Checks  # noqa: E402

opscope, data = sys.argv[1:3]
checks = Checks()
check = checks.check

sample = os.path.join(data, "xplane", "jax_conv_mi300.xplane.pb")
want = xplane_expected.expected(sample)
run, out = checks.analyze(opscope, sample, "jax")
check(run.returncode == 0, f"the XSpace is read ({run.stderr.strip()[:200]})")
with open(os.path.join(out, "tables", "kernels.csv")) as f:
    rows = list(csv.DictReader(f))
kernels = {}
for r in rows:
    if r["category"] in ("kernel", "memcpy", "memset", "communication"):
        kernels[r["operator"]] = r
for name, k in want["kernels"].items():
    got = kernels.get(name)
    check(got is not None and int(got["count"]) == k["count"] and int(got["total_ns"]) == k["total_ns"],
          f"kernel {name[:60]}: {k['count']} calls, {k['total_ns']} ns")
check(int(rows[0]["events"]) == want["events"], f"{want['events']} timed events")
clean = {n: (r["count"], r["total_ns"]) for n, r in kernels.items()}

# The profiler's own start and stop are not the program's work (issue 36:
# JAX's start_trace spans 9.7 s of this 9.7 s XSpace, and the trace was
# called host-bound, 99.9% "framework and Python overhead"). The window runs
# from the end of the start_trace call to the start of the stop_trace call,
# both found here by name in the host plane; the device's kernels (the
# device plane's stream lines) fill most of it: device-bound, attention the
# largest family (the kernels' names: ck_tile's Fmha).
te = os.path.join(data, "xplane", "jax_te_fused_attn_gfx950.xplane.pb")
timed = xplane_expected.timed_events(te)
starts = [e for e in timed if e[0].startswith("/host:") and "profiler.py" in e[2]
          and e[2].endswith(" start_trace")]
stops = [e for e in timed if e[0].startswith("/host:") and "profiler.py" in e[2]
         and e[2].endswith(" stop_trace")]
begin, end = max(e[4] for e in starts), min(e[3] for e in stops)
kernels = sorted((max(s, begin), min(t, end)) for p, line, n, s, t in timed
                 if p.startswith("/device:") and line.startswith("Stream #") and s < end and t > begin)
busy, reach = 0, begin
for s, t in kernels:
    if t > reach:
        busy += t - max(s, reach)
        reach = t
run, out = checks.analyze(opscope, te, "te")
with open(os.path.join(out, "analysis.json")) as f:
    results = json.load(f)["results"]
window = sum(int(r["time_ns"]) for r in results if r["section"] == "attribution")
first = next((r for r in results if r["section"] == "findings"), {})
check(run.returncode == 0 and len(starts) == 1 and len(stops) == 1 and window == end - begin,
      f"the window is {end - begin} ns, from start_trace's end to stop_trace's start (opscope: {window})")
check("the profiler's own start and stop" in first.get("title", "")
      and first.get("id") == "step_compute" and 2 * busy > end - begin and "attention" in first["title"],
      f"device-bound ({100 * busy / (end - begin):.1f}% busy), attention first ({first.get('title', '')[:160]})")
check(not any(r["section"] == "findings" and "host-bound" in r.get("title", "") for r in results),
      "the profiler's start is not host overhead")
# Its longest kernel's name is thousands of characters (CK's templates): the
# title keeps its first 100, the evidence the whole name.
longest = {}
for p, line, n, s, t in timed:
    if p.startswith("/device:") and line.startswith("Stream #"):
        longest[n] = longest.get(n, 0) + (t - s)
top = max(longest, key=longest.get)
dominant = next((r for r in results if r["section"] == "findings" and r["id"] == "dominant_operator"), {})
check(len(top) > 1000 and dominant.get("title", "").startswith(f"'{top[:100]}…' takes")
      and dominant.get("evidence", "").endswith(f"in full: {top})"),
      f"a {len(top)}-character kernel name is cut in the title, whole in the evidence "
      f"({dominant.get('title', '')[:60]}...)")

# The profiler's own diagnostics (issue 37, a producer's loss counters):
# XSpace's errors (field 2) and warnings (field 3), planted at the end of the
# real JAX XSpace (a message's fields may come in any order), as XLA's GPU
# tracer writes them: CUPTI's error to errors, its dropped events to warnings
# ("Detected GPU events dropped on HOST: Profiler has collected N driver
# events and M device events. K events dropped because REASON; ...").
# The notes say 1,200 device and 34 driver events dropped and each text once
# with its count; the kernels are those of the clean file; producer_dropped
# weighs the 1,200 against the device tasks the file holds (its severity from
# that share: critical from 10%).


def varint(n):
    out = bytearray()
    while True:
        low = n & 0x7F
        n >>= 7
        out.append(low | (0x80 if n else 0))
        if not n:
            return bytes(out)


def string_field(number, text):
    raw = text.encode()
    return varint(number << 3 | 2) + varint(len(raw)) + raw


dropped = ("Detected GPU events dropped on testhost: Profiler has collected 100 driver events "
           "and 200 device events. 1200 events dropped because total device(activity) events "
           "reaches max; 34 events dropped because total driver(callback) events reaches max.")
cupti_error = "CUPTI_ERROR_INSUFFICIENT_PRIVILEGES: planted"
other = "a planted warning"
planted = os.path.join(checks.scratch, "planted.xplane.pb")
with open(sample, "rb") as f, open(planted, "wb") as g:
    g.write(f.read() + string_field(2, cupti_error) + string_field(3, dropped)
            + string_field(3, other) + string_field(3, other))
run, out = checks.analyze(opscope, planted, "planted")
with open(os.path.join(out, "analysis.json")) as f:
    notes = [r["note"] for r in json.load(f)["results"] if r["section"] == "import_notes"]
said = " | ".join(notes)
check(run.returncode == 0 and "dropped 1200 device events and 34 other events" in said,
      f"the XSpace's dropped events are counted: 1200 device, 34 driver ({said[:300]})")
check("4 errors or warnings" in said and f"'error: {cupti_error}'" in said
      and f"'warning: {other}' (2 times)" in said and "Detected GPU events dropped" in said,
      "each error and warning is said once, with its count")
with open(os.path.join(out, "tables", "kernels.csv")) as f:
    again = {r["operator"]: (r["count"], r["total_ns"]) for r in csv.DictReader(f)
             if r["category"] in ("kernel", "memcpy", "memset", "communication")}
check(again == clean and len(clean) > 0, "the kernels are those of the clean file")
device = sum(k["count"] for k in want["kernels"].values())
share = 100 * 1200 / (1200 + device)
with open(os.path.join(out, "analysis.json")) as f:
    found = {r["id"]: r for r in json.load(f)["results"] if r["section"] == "findings"}
f = found.get("producer_dropped", {})
check(f.get("severity") == ("critical" if share >= 10 else "warning" if share >= 1 else "info")
      and f"dropped 1200 device records while recording ({share:.1f}% of the {1200 + device}"
      in f.get("title", ""), f"producer_dropped: 1200 of {1200 + device} device records, "
      f"{share:.1f}% ({f.get('severity')}: {f.get('title', '')[:140]})")

damaged = os.path.join(data, "xplane", "tpu_inference_2.xplane.pb")
run, _ = checks.analyze(opscope, damaged, "tpu")
check(run.returncode == 3 and "not a valid XSpace protobuf at byte" in run.stderr
      and "258174 U+FFFD sequences" in run.stderr,
      f"the damaged copy is refused, its damage named ({run.stderr.strip()[:200]})")

sys.exit(checks.done())
