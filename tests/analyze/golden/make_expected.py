#!/usr/bin/env python3
"""The independent side of the golden tests: reads each real sample in
tests/data with Python's json and csv modules (nothing of opscope's) and writes
what `opscope analyze` must report for it into golden/<case>.json: the format
detected, the number of complete events, and every operator's count and total
time in nanoseconds, and its nearest-rank p50 and p99 (the value of rank
ceil(P/100 * n) among its n sorted durations) and maximum. Spans of the whole trace (cat "Trace") and torch_npu's
derived "Overlap Analysis" rows are left out of operator statistics.

    make_expected.py DATA_DIR OUT_DIR     write the expected files
    make_expected.py DATA_DIR OUT_DIR --check
                                          exit 1 if a checked-in file differs
                                          from what this script computes
"""
import collections
import csv
import decimal
import gzip
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import attribution_expected  # noqa: E402  (tests/analyze/attribution_expected.py)

# Traces whose every complete event is a host event: their operators' self
# times are expected too.
HOST_ONLY = {"cpu_only", "torch_cpu_small_cnn", "torch_cpu_cnn_3steps", "torch_cpu_transformer_3steps"}
# case name -> (sample path under tests/data, the format opscope must report)
CASES = {
    "alexnet_cuda_rank0": ("kineto/alexnet_cuda_rank0.json.gz", "kineto"),
    "cuda_event_sync_multi_stream": ("kineto/cuda_event_sync_multi_stream.json.gz", "kineto"),
    "mi250_rocm_train": ("kineto/mi250_rocm_train.json.gz", "kineto"),
    "cpu_only": ("kineto/cpu_only.pt.trace.json.gz", "kineto"),
    "sampled_rank-0": ("kineto/sampled_rank-0.json.gz", "kineto"),
    "sampled_rank-1": ("kineto/sampled_rank-1.json.gz", "kineto"),
    "resnet50_dataloader_kineto2021": ("kineto/resnet50_dataloader_kineto2021.json.gz", "kineto"),
    "ascend_trace_view": ("ascend/trace_view.json", "ascend-trace-view"),
    "torch_cpu_small_cnn": ("torch-cpu/small_cnn_train_torch1.13.json", "pytorch-legacy"),
    "ascend_kernel_details": ("ascend/kernel_details.csv", "ascend-kernel-details"),
    "ascend_level0_trace_view": ("ascend/level0_text/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/"
                                 "trace_view.json", "ascend-trace-view"),
    "ascend_level0_kernel_details": ("ascend/level0_text/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/"
                                     "kernel_details.csv", "ascend-kernel-details"),
    "ascend_level1_kernel_details": ("ascend/level1_text/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/"
                                     "kernel_details.csv", "ascend-kernel-details"),
    "ascend_kernel_details_advisor": ("ascend/kernel_details_advisor.csv", "ascend-kernel-details"),
    "torch_cpu_cnn_3steps": ("torch-cpu/small_cnn_train_3steps_torch1.13.json", "pytorch-legacy"),
    "torch_cpu_transformer_3steps": ("torch-cpu/small_transformer_train_3steps_torch1.13.json",
                                     "pytorch-legacy"),
}
# Cases whose diagnosis another test checks, from its own reading of the raw
# file: here only the operators' figures. resnet50_dataloader_kineto2021 is
# early Kineto (2021: categories Operator, Kernel, Runtime, ...), whose
# diagnosis early_kineto_test.py checks.
JUDGED_ELSEWHERE = {"resnet50_dataloader_kineto2021"}
# A folder holding the two ranks of one job: rank -> ProfilerStep spans.
RANK_FOLDER = ("kineto/sampled_rank-0.json.gz", "kineto/sampled_rank-1.json.gz")


def ns(value):
    return int((decimal.Decimal(str(value).strip()) * 1000).to_integral_value(decimal.ROUND_HALF_UP))


def load_events(path):
    if path.endswith(".csv"):  # kernel_details.csv: one device task per row
        with open(path, newline="", encoding="utf-8") as f:
            rows = list(csv.DictReader(f))
        return [{"ph": "X", "name": r["Name"], "dur": r["Duration(us)"]} for r in rows], None
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as f:
        doc = json.load(f)
    return (doc["traceEvents"] if isinstance(doc, dict) else doc), doc


def self_times(events):
    """Each event's self time: the time during which it is the innermost event
    open on its (pid, tid), the one opened last (by start, the longer first).
    Computed segment by segment between consecutive boundaries, not with a
    stack. Returns name -> summed self time."""
    by_thread = collections.defaultdict(list)
    for e in events:
        by_thread[(str(e.get("pid")), str(e.get("tid")))].append(e)
    result = collections.defaultdict(int)
    for thread in by_thread.values():
        spans = [(ns(e["ts"]), ns(e["dur"]), i, e.get("name", "")) for i, e in enumerate(thread)]
        order = {s[2]: k for k, s in enumerate(sorted(spans, key=lambda s: (s[0], -s[1], s[2])))}
        bounds = sorted({b for begin, dur, _, _ in spans for b in (begin, begin + dur)})
        for lo, hi in zip(bounds, bounds[1:]):
            covering = [s for s in spans if s[0] <= lo and hi <= s[0] + s[1]]
            if covering:
                innermost = max(covering, key=lambda s: order[s[2]])
                result[innermost[3]] += hi - lo
        for begin, dur, _, name in spans:
            result[name] += 0  # every name present, zero-length calls included
    return result


def expected_case(case, data, relative, fmt):
    events, _ = load_events(os.path.join(data, relative))
    derived = {e["pid"] for e in events
               if e.get("ph") == "M" and e.get("name") == "process_name"
               and e["args"].get("name") == "Overlap Analysis"}
    complete = [e for e in events if e.get("ph") == "X"]
    durations = collections.defaultdict(list)
    for e in complete:
        if e.get("cat") == "Trace" or e.get("pid") in derived:
            continue
        durations[e.get("name", "")].append(ns(e["dur"]))

    def nearest_rank(values, percent):
        ordered = sorted(values)
        return ordered[max(1, (percent * len(ordered) + 99) // 100) - 1]

    operators = {name: {"count": len(d), "total_ns": sum(d), "p50_ns": nearest_rank(d, 50),
                        "p99_ns": nearest_rank(d, 99), "max_ns": max(d)}
                 for name, d in sorted(durations.items())}
    if case in HOST_ONLY:
        nested = [e for e in complete if e.get("cat") != "Trace" and e.get("pid") not in derived]
        for name, value in self_times(nested).items():
            operators[name]["self_ns"] = value
        # Self times add up, thread by thread, to the time the thread was busy.
        threads = collections.defaultdict(list)
        for e in nested:
            threads[(str(e.get("pid")), str(e.get("tid")))].append([ns(e["ts"]), ns(e["ts"]) + ns(e["dur"])])
        host_busy_ns = sum(sum(f - b for b, f in union(spans)) for spans in threads.values())
    out = {"sample": relative, "format": fmt, "complete_events": len(complete),
           "operators": operators}
    if case in HOST_ONLY:
        out["host_busy_ns"] = host_busy_ns
    # Launch delays from torch_npu's HostToDevice flows: the flow's start (the
    # host issuing the task) to its first finish (the task starting on the
    # device), per flow id; p50 at index n/2 and p90 at round(0.9 (n-1)) of the
    # sorted delays, as passes/launch.h documents. A flow that finishes before
    # it starts says the host's and the device's clocks disagree: left out of
    # the delays, and where such flows are most of them, no delay is known
    # (p50 and p90 null).
    host, device = {}, {}
    for e in events:
        if e.get("cat") != "HostToDevice" or "id" not in e or "ts" not in e:
            continue
        key = str(e["id"])
        if e.get("ph") == "s":
            host.setdefault(key, ns(e["ts"]))
        elif e.get("ph") == "f":
            device[key] = min(device.get(key, ns(e["ts"])), ns(e["ts"]))
    paired = [k for k in host if k in device]
    delays = sorted(device[k] - host[k] for k in paired if device[k] >= host[k])
    backward = len(paired) - len(delays)
    if paired:
        known = delays and 2 * backward <= len(paired)
        out["launch_delay_ns"] = {
            "flows": len(paired), "backward": backward,
            "p50": delays[len(delays) // 2] if known else None,
            "p90": delays[min(len(delays) - 1, int(0.9 * (len(delays) - 1) + 0.5))] if known else None}
    if case in JUDGED_ELSEWHERE:
        return out
    if relative.endswith(".csv"):
        with open(os.path.join(data, relative), newline="", encoding="utf-8") as f:
            rows = [{"ph": "X", "name": r["Name"], "start": r["Start Time(us)"].strip(),
                     "dur": r["Duration(us)"]} for r in csv.DictReader(f)]
        out["judgement"] = expected_judgement(rows, relative)
    else:
        out["judgement"] = expected_judgement(
            events, relative, {n: o["self_ns"] for n, o in operators.items() if "self_ns" in o})
    unsteady = expected_outlier(complete, out["judgement"]["steps"])
    if relative.startswith("kineto/"):
        # The step-time diagnosis, from the attribution that
        # analyze/attribution_expected.py computes from the raw JSON over the
        # complete steps (the trace's span without them).
        steps = [n for n, s in out["judgement"]["steps"].items() if s == "complete"]
        states = attribution_expected.expected(os.path.join(data, relative), steps)
        verdict = expected_diagnosis(
            states, attribution_expected.capture_ns(os.path.join(data, relative), steps),
            unsteady)
        if verdict:
            judged = out["judgement"]
            for f in [f for f in judged["findings"] if "unless_first" in f]:
                judged["findings"].remove(f)
                if f.pop("unless_first") == verdict["id"]:
                    judged["absent_findings"] = sorted(judged["absent_findings"] + [f["id"]])
                else:
                    judged["findings"].append(f)
            judged["findings"].insert(0, verdict)
            judged["first"] = verdict["id"]
    elif unsteady and case in HOST_ONLY and host_busy_share(complete, out["judgement"]["steps"]) > 50:
        # A CPU trace's steps, mostly traced (so not untraced first), with no
        # runtime calls (so no set-up or warm-up): unsteady steps come first.
        verdict = {"id": "step_outlier", "severity": "warning", "figure": f"'{unsteady}'"}
        out["judgement"]["findings"].insert(0, verdict)
        out["judgement"]["first"] = "step_outlier"
    return out


def complete_steps(complete, statuses):
    return [(ns(e["ts"]), ns(e["ts"]) + ns(e["dur"])) for e in complete
            if str(e.get("name", "")).startswith("ProfilerStep#")
            and statuses.get(e["name"]) == "complete" and e.get("cat") != "gpu_user_annotation"]


def host_busy_share(complete, statuses):
    """The share of the complete steps some host event below the step covers."""
    steps = complete_steps(complete, statuses)
    spans = [(ns(e["ts"]), ns(e["ts"]) + ns(e["dur"])) for e in complete
             if not str(e.get("name", "")).startswith("ProfilerStep#")]
    window = sum(b - a for a, b in steps)
    busy = sum(covered(union(spans), a, b) for a, b in steps)
    return 100.0 * busy / window if window else 0


def expected_outlier(complete, statuses):
    """The name that makes the steps unsteady (docs/rules.md, step_<state>:
    the longest complete step 2x the shortest or more, 25% of the window or
    more apart, one name's own time grown by half the difference or more), or
    None. Own time: an event's duration less its direct children's on its
    thread (the innermost event opened before it, by start then the longer
    first, still open), per step by where each event starts."""
    steps = complete_steps(complete, statuses)
    if len(steps) < 2:
        return None
    longest, shortest = max(steps, key=lambda s: s[1] - s[0]), min(steps, key=lambda s: s[1] - s[0])
    window = sum(b - a for a, b in steps)
    excess = (longest[1] - longest[0]) - (shortest[1] - shortest[0])
    if (longest[1] - longest[0]) < 2 * (shortest[1] - shortest[0]) or 100 * excess < 25 * window:
        return None
    events = [e for e in complete if e.get("cat") not in ("Trace", "gpu_user_annotation")]
    by_thread = collections.defaultdict(list)
    for e in events:
        by_thread[(str(e.get("pid")), str(e.get("tid")))].append(e)
    own = collections.defaultdict(lambda: [0, 0])
    for evs in by_thread.values():
        evs.sort(key=lambda e: (ns(e["ts"]), -ns(e["dur"])))
        stack = []
        for e in evs:
            b, d = ns(e["ts"]), ns(e["dur"])
            while stack and ns(stack[-1]["ts"]) + ns(stack[-1]["dur"]) < b + d:
                stack.pop()
            parent = stack[-1] if stack else None
            stack.append(e)
            if str(e.get("name", "")).startswith("ProfilerStep#"):
                continue
            for slot, (lo, hi) in enumerate((longest, shortest)):
                if lo <= b < hi:
                    own[e["name"]][slot] += d
                    if parent is not None and not str(parent["name"]).startswith("ProfilerStep#"):
                        own[parent["name"]][slot] -= d
    name, (grew_long, grew_short) = max(own.items(), key=lambda kv: kv[1][0] - kv[1][1])
    return name if 2 * (grew_long - grew_short) >= excess else None


def outlier(top, whole, calls):
    """One call ten times the operator's median or more (nearest-rank p50),
    without which it would take under 30%: dominant by one outlier."""
    calls = sorted(calls)
    p50 = calls[max(0, -(-len(calls) * 50 // 100) - 1)]
    longest = min(calls[-1], top)
    return longest >= 10 * p50 and whole > longest and \
        100.0 * (top - longest) / (whole - longest) < 30


def expected_diagnosis(states, capture=0, unsteady=None):
    """The step_<state> finding the advisor must make first, restated from its
    documented rule (docs/rules.md, step_<state>): a graph capture when stream
    capture covers 50% or more of the window, else untraced when nothing
    explains 50% or more, else one-off set-up from 50% (set-up and warm-up
    together from 50% where each takes 10% or more, named after the larger),
    else warm-up from 30%,
    else unsteady steps (expected_outlier), else the largest group; the
    severity by its share."""
    window = sum(states.values())
    if not window:
        return None
    if 100.0 * capture / window >= 50:
        return {"id": "step_capture", "severity": "warning",
                "figure": f"{100.0 * capture / window:.1f}%"}
    groups = [
        ("step_untraced", states.get("untraced", 0) + states.get("annotation_only", 0)),
        ("step_setup", states.get("setup", 0)),
        ("step_compilation", states.get("compilation", 0)),
        ("step_compute", states.get("compute", 0)),
        ("step_device_waiting", states.get("communication", 0) + states.get("device_wait", 0)
         + states.get("queued", 0)),
        ("step_memory", states.get("memory", 0)),
        ("step_data_loading", states.get("data_loading", 0)),
        ("step_host_overhead", states.get("launch", 0) + states.get("framework", 0)),
        ("step_host_blocked", states.get("blocked", 0)),
    ]
    pct = {g: 100.0 * v / window for g, v in groups}
    if pct["step_untraced"] >= 50:
        chosen = "step_untraced"
    elif pct["step_setup"] >= 50:
        chosen = "step_setup"
    elif (min(pct["step_setup"], pct["step_compilation"]) >= 10
          and pct["step_setup"] + pct["step_compilation"] >= 50):
        # set-up and warm-up together, named after the larger (docs/rules.md)
        larger = "step_setup" if pct["step_setup"] >= pct["step_compilation"] else "step_compilation"
        return {"id": larger, "severity": "warning",
                "figure": f"{pct['step_setup'] + pct['step_compilation']:.1f}%"}
    elif pct["step_compilation"] >= 30:
        chosen = "step_compilation"
    elif unsteady:
        return {"id": "step_outlier", "severity": "warning", "figure": f"'{unsteady}'"}
    else:
        chosen = max(groups, key=lambda g: g[1])[0]  # the first of equals
    share = pct[chosen]
    if chosen in ("step_untraced", "step_setup"):
        severity = "warning"
    elif chosen == "step_compute":
        severity = "warning" if share >= 50 else "info"
    else:
        severity = "critical" if share >= 50 else "warning" if share >= 20 else "info"
    return {"id": chosen, "severity": severity, "figure": f"{share:.1f}%"}


# --- Judgement: what the advisor must and must not conclude, from the raw events.
COMM = re.compile(r"(?i)nccl|hccl|rccl|hcom|gloo|c10d::|allreduce|all_reduce|allgather|all_gather|"
                  r"reducescatter|reduce_scatter|alltoall|all_to_all|^notify[ _](wait|record)")
# torch_npu's device tasks that are not kernels, by their "Task Type" argument
# (docs/formats/ascend.md 3.1): the waits and signals by which streams and ranks
# synchronise, HCCL's SDMA data movement, the profiler's own markers. With
# collectives in the trace the waits and the SDMA are the collectives' (schema
# 4, docs/analysis-json.md); without, SDMA is memory traffic and a wait no work.
ASCEND_WAITS = {"Notify Wait", "Write Value", "EVENT_WAIT_SQE", "EVENT_RECORD_SQE"}
LAYOUT_KERNEL = re.compile(r"(?i)transdata|nchwtonhwc|nhwctonchw")
# Data loading (names.h IsDataLoading): waiting for the next batch.
DATA_LOADING = re.compile(r"(?i)dataloader|data_loader|next_data|__next__")
DEVICE_CATS = {"kernel", "gpu_memcpy", "gpu_memset", "mtia_ccp_events"}


def union(spans):
    out = []
    for b, e in sorted(spans):
        if out and b <= out[-1][1]:
            out[-1][1] = max(out[-1][1], e)
        else:
            out.append([b, e])
    return out


def subtract(merged, minus):
    """The time of `merged` (sorted, disjoint) that `minus` (the same) leaves."""
    out, j = [], 0
    for b, e in merged:
        at = b
        while j < len(minus) and minus[j][1] <= at:
            j += 1
        k = j
        while k < len(minus) and minus[k][0] < e:
            if minus[k][0] > at:
                out.append([at, minus[k][0]])
            at = max(at, minus[k][1])
            k += 1
        if at < e:
            out.append([at, e])
    return out


def covered(merged, b, e):
    return sum(max(0, min(e, y) - max(b, x)) for x, y in merged)


def median(values):
    v = sorted(values)
    n = len(v)
    return 0 if n == 0 else v[n // 2] if n % 2 else (v[n // 2 - 1] + v[n // 2]) // 2


def step_statuses(steps, work, op_starts):
    """steps: [(name, begin, dur)] in time order. The documented rules
    (passes/steps.h): empty, partial last step, leading warm-up steps."""
    status, events = {}, {}
    for name, b, d in steps:
        events[name] = sum(1 for t in op_starts if b <= t < max(b + d, b + 1))
        has = covered(work, b, b + d) > 0 or events[name] > 0
        status[name] = "complete" if has else "empty"
    if len(steps) >= 2 and status[steps[-1][0]] == "complete":
        others = [d for n, b, d in steps[:-1] if status[n] == "complete"]
        others_events = [events[n] for n, b, d in steps[:-1] if status[n] == "complete"]
        m, me = median(others), median(others_events)
        if m > 0 and steps[-1][2] < 0.5 * m and events[steps[-1][0]] < 0.5 * me:
            status[steps[-1][0]] = "partial"
    marked = 0
    for k, (name, b, d) in enumerate(steps):
        if 2 * (marked + 1) > len(steps):
            break
        if status[name] != "complete":
            continue
        later = [dd for n, bb, dd in steps[k + 1:] if status[n] == "complete"]
        if len(later) < 2:
            break
        m = median(later)
        if m <= 0 or d <= 1.5 * m:
            break
        status[name] = "warm-up"
        marked += 1
    return status


FAMILY = {**{f: "matmul" for f in ("mm", "bmm", "addmm", "matmul", "linear", "baddbmm", "addbmm",
                                    "addmv", "mv", "dot")},
          **{f: "movement" for f in ("copy_", "clone", "contiguous", "to", "_to_copy", "cat", "stack",
                                     "index_select", "gather", "scatter", "index", "embedding")},
          **{f: "random" for f in ("bernoulli_", "dropout", "native_dropout", "rand", "randn",
                                   "uniform_", "normal_")}}


def expected_judgement(events, relative, self_ns=None):
    processes = {e["pid"]: e["args"].get("name") for e in events
                 if e.get("ph") == "M" and e.get("name") == "process_name"}
    xs = [e for e in events if e.get("ph") == "X" and e.get("cat") != "Trace"
          and processes.get(e.get("pid")) != "Overlap Analysis"]
    csv_rows = relative.endswith(".csv")
    cpu_op_names = {e.get("name", "") for e in xs if not e.get("name", "").startswith("ProfilerStep#")
                    and (e.get("cat") == "cpu_op" or ("cat" not in e and processes.get(
                        e.get("pid"), e.get("pid")) == "CPU functions"))}

    def task_type(e):
        return (e.get("args") or {}).get("Task Type", "")

    def on_process(e, *names):
        return "cat" not in e and processes.get(e.get("pid")) in names

    collectives = any(on_process(e, "HCCL", "Communication") or
                      (e.get("cat") == "kernel" and COMM.search(e.get("name", ""))) for e in xs)

    def is_device(e):
        if on_process(e, "Ascend Hardware"):
            if task_type(e) == "PLACE_HOLDER_SQE":
                return False  # a profiler marker
            if task_type(e) in ASCEND_WAITS and not collectives:
                return False  # a wait with nothing to wait for in the trace: idle
        return csv_rows or e.get("cat") in DEVICE_CATS or (
            "cat" not in e and processes.get(e.get("pid")) in ("Ascend Hardware", "HCCL", "Communication"))

    def is_communication(e):
        return COMM.search(e.get("name", "")) or on_process(e, "HCCL", "Communication") or (
            collectives and on_process(e, "Ascend Hardware") and
            (task_type(e) in ASCEND_WAITS or task_type(e) == "SDMA"))

    def is_memory(e):
        name = e.get("name", "").lower()
        # Kineto's copy and set categories; torch_npu's copy and set tasks by
        # name (MEMCPY_ASYNC on a PCIe or SDMA queue, MEMSET), and HCCL's SDMA
        # where there is no collective for it to belong to.
        return e.get("cat") in ("gpu_memcpy", "gpu_memset") or name.startswith("memcpy_async") \
            or name in ("memcopy", "memset") or name.endswith("_memset") \
            or (on_process(e, "Ascend Hardware") and not collectives and task_type(e) == "SDMA")

    def span(e):
        b = ns(e["ts"]) if "ts" in e else ns(e["start"])
        return b, b + ns(e["dur"])

    device = [e for e in xs if is_device(e) and ns(e["dur"]) > 0]
    if device:
        compute_on, work_events = "device", device
    else:
        compute_on = "cpu"
        work_events = [e for e in xs if not e.get("name", "").startswith("ProfilerStep#") and (
            e.get("cat") == "cpu_op" or processes.get(e.get("pid"), e.get("pid")) == "CPU functions"
            or (e.get("cat") == "user_annotation" and COMM.search(e.get("name", ""))))]
        # A trace of the program's own scopes alone (no framework operator, no
        # device event): its annotation scopes are the work, but data loading.
        host_ops = [e for e in xs if not e.get("name", "").startswith("ProfilerStep#") and (
            e.get("cat") in ("cpu_op", "hpu_op") or on_process(e, "CPU functions"))]
        scopes = [e for e in xs if not e.get("name", "").startswith("ProfilerStep#")
                  and e.get("cat") in ("user_annotation", "cuda_profiler_range", "xpu_scope_profiler")]
        if not host_ops and not any(is_device(e) for e in xs) and any(ns(e["dur"]) > 0 for e in scopes):
            work_events = [e for e in scopes if not DATA_LOADING.search(e.get("name", ""))]
    work = union([list(span(e)) for e in work_events])
    must, must_not = [], []
    if work:
        busy = sum(e - b for b, e in work)
        window = work[-1][1] - work[0][0]
        busy_pct = 100.0 * busy / window if window else 100.0
        # Where the device idles is the step-time diagnosis's (step_<state>):
        # the attribution accounts for every instant of a trace with events,
        # so the busy-share and compilation rules, which would say it again
        # from the longest gaps, stay silent.
        must_not.append("low_device_utilization")
        must_not.append("compilation")
    else:
        busy_pct = None
    kernels = sorted(ns(e["dur"]) for e in device if e.get("cat", "kernel") == "kernel" or csv_rows)
    if len(kernels) < 100 or kernels[len(kernels) // 2] >= 10000:
        must_not.append("launch_bound")  # its first two preconditions fail
    device_ns = sum(ns(e["dur"]) for e in device)
    layout_ns = sum(ns(e["dur"]) for e in device if LAYOUT_KERNEL.search(e.get("name", "")))
    layout_pct = 100.0 * layout_ns / device_ns if device_ns else 0
    if layout_pct >= 10:
        # Judged by the conversions' share of the trace's span (first to last
        # event): on a device that mostly idles they cost the run little.
        first = min(span(e)[0] for e in xs)
        last = max(span(e)[1] for e in xs)
        span_pct = 100.0 * layout_ns / (last - first) if last > first else 0
        must.append({"id": "layout_conversions",
                     "severity": "critical" if span_pct >= 20 else "warning" if span_pct >= 5 else "info",
                     "figure": f"{layout_pct:.1f}%"})
    else:
        must_not.append("layout_conversions")
    steps = sorted(((e["name"], *span(e)) for e in xs if e.get("name", "").startswith("ProfilerStep#")
                    and not is_device(e)), key=lambda s: s[1])
    steps = [(n, b, f - b) for n, b, f in steps]
    work_ids = {id(e) for e in work_events} if compute_on == "cpu" else set()
    op_starts = [span(e)[0] for e in xs if is_device(e) or e.get("cat") == "cpu_op" or id(e) in work_ids
                 or ("cat" not in e and processes.get(e.get("pid"), e.get("pid")) == "CPU functions"
                     and not e.get("name", "").startswith("ProfilerStep#"))]
    status = step_statuses(steps, work, op_starts)
    comm = union([list(span(e)) for e in work_events if is_communication(e)])
    step_ns = sum(d for n, b, d in steps if status[n] == "complete")
    # Only the communication that compute does not overlap (an overlapped
    # collective costs the step nothing): compute is the work that is neither
    # communication nor a copy or a memset.
    compute = union([list(span(e)) for e in work_events if not is_communication(e)
                     and not is_memory(e)])
    exposed = subtract(comm, compute)
    comm_ns = sum(covered(exposed, b, b + d) for n, b, d in steps if status[n] == "complete")
    comm_pct = 100.0 * comm_ns / step_ns if step_ns else 0
    if comm_pct >= 20:
        # Unless the step-time diagnosis names the device waiting (exposed
        # communication among it): it says the overlap and gives the advice,
        # and the communication rule stays silent (docs/rules.md).
        must.append({"id": "communication", "severity": "warning", "figure": f"{comm_pct:.1f}%",
                     "unless_first": "step_device_waiting"})
    else:
        must_not.append("communication")
    # One operator, or one family of framework operators on the CPU, taking 30%
    # or more of the compute time (kernels by device time; CPU operators by
    # self time). Copies and collectives are left to their own findings.
    dominant = None
    if compute_on == "device":
        by_name = collections.Counter()
        for e in device:
            by_name[e.get("name", "")] += ns(e["dur"])
        whole = sum(by_name.values())
        candidates = {n: v for n, v in by_name.items()
                      if not COMM.search(n) and (csv_rows or any(
                          e.get("name") == n and e.get("cat", "kernel") == "kernel" for e in device))}
        if len(by_name) >= 2 and candidates and whole:
            name = max(candidates, key=candidates.get)
            top = candidates[name]
            calls = [ns(e["dur"]) for e in device if e.get("name", "") == name]
            if 100.0 * top / whole >= 30 and top >= 1_000_000 and not outlier(top, whole, calls):
                dominant = 100.0 * top / whole
    elif self_ns:
        host_ops = {n for n in self_ns if n in cpu_op_names}
        whole = sum(self_ns[n] for n in host_ops)
        if len(host_ops) >= 2 and whole:
            name = max((n for n in host_ops if not COMM.search(n)), key=lambda n: self_ns[n])
            top = self_ns[name]
            calls = [ns(e["dur"]) for e in xs if e.get("name", "") == name]
            if 100.0 * top / whole >= 30:
                if top >= 1_000_000 and not outlier(top, whole, calls):
                    dominant = 100.0 * top / whole
            else:
                families = collections.Counter()
                for n in host_ops:
                    if n.startswith("aten::") and FAMILY.get(n[6:]):
                        families[FAMILY[n[6:]]] += self_ns[n]
                    elif n.startswith("aten::") and "conv" in n[6:]:
                        families["conv"] += self_ns[n]
                    elif n.startswith("aten::") and "norm" in n[6:]:
                        families["norm"] += self_ns[n]
                if families and 100.0 * max(families.values()) / whole >= 30 \
                        and max(families.values()) >= 1_000_000:
                    dominant = 100.0 * max(families.values()) / whole
    # Not where the compute device worked under a tenth of the diagnosed
    # window (the complete steps, else the trace's span): a few kernels in
    # seconds of nothing recorded.
    if dominant is not None and xs:
        diagnosed = step_ns or (max(span(e)[1] for e in xs) - min(span(e)[0] for e in xs))
        if 100.0 * whole < 10 * diagnosed:
            dominant = None
    if dominant is not None:
        must.append({"id": "dominant_operator", "severity": "info", "figure": f"{dominant:.1f}%"})
    else:
        must_not.append("dominant_operator")
    return {"compute_on": compute_on,
            "busy_pct": None if busy_pct is None else round(busy_pct, 1),
            "steps": status, "findings": must, "absent_findings": sorted(must_not)}


def expected_ranks(data):
    ranks = {}
    for relative in RANK_FOLDER:
        _, doc = load_events(os.path.join(data, relative))
        ranks[str(doc["distributedInfo"]["rank"])] = sum(
            1 for e in doc["traceEvents"]
            if e.get("ph") == "X" and e.get("name", "").startswith("ProfilerStep#"))
    return {"samples": list(RANK_FOLDER), "steps_by_rank": ranks}


def main():
    data, out = sys.argv[1], sys.argv[2]
    check = "--check" in sys.argv[3:]
    files = {f"{case}.json": expected_case(case, data, rel, fmt) for case, (rel, fmt) in CASES.items()}
    files["ranks.json"] = expected_ranks(data)
    stale = 0
    for name, content in files.items():
        text = json.dumps(content, indent=1, ensure_ascii=False, sort_keys=True) + "\n"
        path = os.path.join(out, name)
        if check:
            try:
                with open(path, encoding="utf-8") as f:
                    current = f.read()
            except FileNotFoundError:
                current = None
            if current != text:
                print(f"stale: {path} differs from what make_expected.py computes")
                stale += 1
        else:
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)
    if check:
        print(f"{len(files) - stale} of {len(files)} expected files current")
    sys.exit(1 if stale else 0)


if __name__ == "__main__":
    main()
