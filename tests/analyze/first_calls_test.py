#!/usr/bin/env python3
"""First calls far slower than the later ones (issue 36, class 5): the
first_calls table and finding of `opscope analyze` against the rule restated
here from its documentation (docs/rules.md, first_calls) over the raw
Kineto JSON, read with Python's json module:

- each framework operator (cat cpu_op, a lower-case namespace: "aten::addmm")
  with its "Input Dims" (the same dims are the same key), three calls or
  more, in time order: the first is a first-use call where it lasts 1 ms or
  more and 10x the median of the later calls (the mean of the middle two,
  rounded down, for an even count) or more, and lies in the window (the
  trace's extent: these samples have no complete steps inside it);
- a first call spent half or more inside host calls that wait for the
  device is not one (it waited for queued work): synchronisations (cuda_sync
  events, runtime calls named *Synchronize*), copy calls without "Async"
  (cudaMemcpy, hipMemcpyWithStream: they return when the copy is done) and
  async copies whose copy (by correlation) is to or from pageable memory or
  to host memory not named pinned (CUDA's API synchronization behavior);
- the time is the union of those first calls; the table lists those that
  hold no other first call on their thread;
- the finding fires from 5% of the window and 2 ms.

The vLLM B200 sample's three first aten::addmm (one per weight shape) are
the expert reading's "5.6 ms of it is three first calls" (reading 9); the
AlexNet sample's are its CUDA context and cuDNN start-up.

    first_calls_test.py OPSCOPE DATA_DIR
"""
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import attribution_expected  # noqa: E402  (ns, complete events, window)
from checks import Checks, covered, union as merged  # noqa: E402

opscope, data = sys.argv[1:3]
c = Checks()
FRAMEWORK = re.compile(r"^[a-z0-9_:]+::[^:]+$")


def device_waits(raw):
    """The host calls that wait for the device, as a union of ns spans."""
    copies = {}
    for r in raw:
        if r.get("cat") == "gpu_memcpy":
            copies[(r.get("args") or {}).get("correlation")] = r["name"]
    spans = []
    for r in raw:
        name, cat = r["name"], r.get("cat")
        if cat == "cuda_sync":
            waits = True
        elif cat in ("cuda_runtime", "cuda_driver"):
            copy = copies.get((r.get("args") or {}).get("correlation"), "")
            waits = ("synchronize" in name.lower()
                     or ("memcpy" in name.lower() and "async" not in name.lower())
                     or ("memcpyasync" in name.lower()
                         and ("Pageable" in copy or ("DtoH" in copy and "Pinned" not in copy))))
        else:
            waits = False
        if waits:
            b = attribution_expected.ns(r["ts"])
            spans.append((b, b + attribution_expected.ns(r["dur"])))
    return merged(spans)


def expected(path):
    events = attribution_expected.complete_events(path)
    (w0, w1), = attribution_expected.window_of(events, [])
    with_dims = {}
    opener = attribution_expected.gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as f:
        raw = [e for e in json.load(f)["traceEvents"] if e.get("ph") == "X" and "ts" in e]
    for e, r in zip(events, raw):  # complete_events keeps the file's order
        dims = (r.get("args") or {}).get("Input Dims")
        with_dims[id(e)] = json.dumps(dims) if dims is not None else ""
    calls = {}
    for e in events:
        if e.cat == "cpu_op" and FRAMEWORK.match(e.name) and not re.search(
                r"(?i)synchronize|wait|item$|_local_scalar_dense", e.name):
            calls.setdefault((e.name, with_dims[id(e)]), []).append(e)
    waits = device_waits(raw)
    firsts = []
    for (name, dims), es in calls.items():
        if len(es) < 3:
            continue
        es = sorted(es, key=lambda e: e.start)
        first = es[0].end - es[0].start
        later = sorted(e.end - e.start for e in es[1:])
        n = len(later)
        median = later[n // 2] if n % 2 else later[n // 2 - 1] + (later[n // 2] - later[n // 2 - 1]) // 2
        if (first >= 1_000_000 and first >= 10 * median and es[0].start < w1 and es[0].end > w0
                and 2 * covered(waits, es[0].start, es[0].end) < first):
            firsts.append((es[0], name, len(es), first, median))
    spans = sorted((max(e.start, w0), min(e.end, w1)) for e, *_ in firsts)
    union, end = 0, None
    for b, f in spans:
        if end is None or b > end:
            union += f - b
            end = f
        elif f > end:
            union += f - end
            end = f
    listed = sorted(((name, calls_, first, median) for e, name, calls_, first, median in firsts
                     if not any(o is not e and o.lane == e.lane and o.start >= e.start
                                and o.end <= e.end for o, *_ in firsts)),
                    key=lambda r: (-(r[2] - r[3]), r[0]))
    return union, w1 - w0, listed


# The sglang decode sample's first aten::copy_ (463 ms) is a device-to-host
# copy that waits for kernels queued behind a dependency: not a first call.
for sample in ("kineto/b200_eager.json.gz", "kineto/alexnet_cuda_rank0.json.gz",
               "kineto/h100_Qwen1.5-0.5B-Chat.json.gz", "kineto/sglang_decode_qwen3_8b.json.gz"):
    union, window, listed = expected(os.path.join(data, sample))
    run, out = c.analyze(opscope, os.path.join(data, sample), os.path.basename(sample))
    c.check(run.returncode == 0, f"{sample}: analysed")
    rows = c.rows(out, "first_calls")
    got = sorted(((r["operator"], int(r["calls"]), int(r["first_ns"]), int(r["later_median_ns"]))
                  for r in rows), key=lambda r: (-(r[2] - r[3]), r[0]))
    c.check(got == listed, f"{sample}: the first calls listed are {[(r[0], r[2]) for r in listed]} "
                           f"(got {[(r[0], r[2]) for r in got]})")
    with open(os.path.join(out, "analysis.json")) as f:
        findings = [r for r in json.load(f)["results"]
                    if r.get("section") == "findings" and r["id"] == "first_calls"]
    fires = union >= 2_000_000 and 100.0 * union / window >= 5
    c.check(len(findings) == (1 if fires else 0) and
            (not fires or f"First calls take {union / 1e6:.3f} ms ({100.0 * union / window:.1f}%"
             in findings[0]["title"]),
            f"{sample}: first-call time {union} ns of {window} ns: "
            f"{'a finding' if fires else 'no finding'} ({[f['title'] for f in findings]})")
    # The step-time diagnosis names an operator's time with its first calls
    # beside it (b200's reading: not "aten::addmm is a host hot spot (11.1
    # ms)" without saying 5.6 ms of it is three first calls).
    with open(os.path.join(out, "analysis.json")) as f:
        steps = [r for r in json.load(f)["results"]
                 if r.get("section") == "findings" and r["id"].startswith("step_")]
    evidence = steps[0]["evidence"] if steps else ""
    for name in sorted({r[0] for r in listed}):
        firsts = [r for r in listed if r[0] == name]
        named = re.search(rf"{re.escape(name)} [0-9.]+ ms", evidence)
        said = (f"{name} " in evidence and
                f"first call{'s' if len(firsts) > 1 else ''} take{'' if len(firsts) > 1 else 's'} "
                f"{sum(r[2] for r in firsts) / 1e6:.3f} ms" in evidence)
        c.check(named is None or said,
                f"{sample}: where the diagnosis names {name}, it says its {len(firsts)} first "
                f"call(s), {sum(r[2] for r in firsts)} ns")

sys.exit(c.done())
