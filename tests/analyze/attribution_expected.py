#!/usr/bin/env python3
"""Where a window's time went, from a Kineto trace's raw JSON alone: the
independent side of attribution_test.py (issue 36).

It does not sweep or union anything. It cuts the window at every event
boundary and, for each piece, asks at the piece's midpoint which events are
open, then applies the attribution's order directly (src/analyze/passes/
attribution.h states it; this script restates it from that text, not from
the code):

1. the device: a compute kernel open -> compute; else a collective kernel ->
   communication; else a copy or a memset -> memory; else a task launched
   more than 50 us before (after its launch call returned) and not started
   -> queued;
2. else each host lane's innermost open event gives the lane a state (inside
   a data-loading, compilation or blocking region, that region's), and the first of
   data_loading, compilation, setup, launch, framework, blocked,
   annotation_only held by any lane wins;
3. else untraced.

Within a lane, an event that ends after the event it opened inside (the
producer's clocks) is cut at that event's end. A Python frame that waits
holds no state (attribution.h): the standard
library's waits, threading.py's wait, join and _wait_for_tstate_lock,
queue.py's get, selectors.py's select, and the built-ins they block in, a
_thread lock's acquire and sleep.

On a trace without device work the CPU lanes' operators are the compute
(collectives communication, bookkeeping operators framework).

    attribution_expected.py TRACE.json[.gz] [STEP_NAME ...]

prints {state: ns} as JSON for the named ProfilerStep spans (else the whole
trace's span).
"""
import decimal
import gzip
import json
import re
import sys

GRACE_NS = 50_000
FIRST_USE_NS = 1_000_000
FIRST_CALL_NS = 10_000_000
HOST_ORDER = ["data_loading", "compilation", "setup", "launch", "framework", "blocked",
              "annotation_only"]
COLLECTIVE_WORDS = ["nccl", "rccl", "hccl", "gloo", "c10d::", "allreduce", "all_reduce",
                    "allgather", "all_gather", "reducescatter", "reduce_scatter", "alltoall",
                    "all_to_all"]
ALLOCATION = ["malloc", "free", "hostalloc", "mallochost", "freehost"]
SETUP_WORDS = ["streamcreate", "streamdestroy", "eventcreate", "eventdestroy", "graphcreate",
               "graphinstantiate", "graphdestroy", "graphexecdestroy", "setdevice",
               "devicereset", "ctxcreate", "hostregister", "hostunregister"]
MODULE_LOAD = ["cumoduleload", "culibraryload", "nvrtc", "hipmoduleload", "cumodulegetfunction",
               "hiprtc"]
TORCH_COMPILE = ["_dynamo", "torchdynamo", "compile_fx", "_inductor", "compile_inner",
                 "async_compile", "call_user_compiler", "graphlowering", "aot_autograd",
                 "aotautograd"]
BOOKKEEPING = {"empty", "empty_strided", "empty_like", "view", "as_strided", "detach",
               "detach_", "alias", "reshape", "_reshape_alias", "t", "transpose", "expand",
               "squeeze", "unsqueeze", "select", "slice", "permute", "resize_", "set_",
               "lift_fresh", "_unsafe_view", "unbind", "split", "chunk", "narrow", "flatten",
               "numel", "size", "stride", "result_type", "is_nonzero",
               "_has_compatible_shallow_copy_type", "expand_as", "view_as", "contiguous"}


def ns(value):
    return int((decimal.Decimal(str(value).strip()) * 1000).to_integral_value(
        decimal.ROUND_HALF_UP))


def call_name(name):
    """A runtime call's own name, lower case, without its arguments."""
    return name.split("(")[0].strip().lower()


def is_collective(name):
    n = name.lower()
    return any(w in n for w in COLLECTIVE_WORDS)


def runtime_state(name, copy):
    n = call_name(name)
    fn = n.split("::")[-1]
    if any(fn.startswith(p) and fn[len(p):] in ALLOCATION for p in ("cuda", "cu", "hip", "aclrt")) \
            or fn in ("cumemalloc_v2", "cumemfree_v2"):
        return "setup"
    if "compileandexecute" in n:
        return "launch"
    if any(w in n for w in MODULE_LOAD) or "aclopcompile" in n:
        return "compilation"
    if "streamwaitevent" in n or "streamwaitvalue" in n:
        return "launch"
    if "synchronize" in n or "eventquery" in n or "streamquery" in n:
        return "blocked"
    if "memcpy" in n:
        if "async" not in n:
            return "blocked"
        # Kineto names a copy "Memcpy DtoH (Device -> Pageable)".
        if copy is not None and ("Pageable" in copy or
                                 ("DtoH" in copy and "Pinned" not in copy)):
            return "blocked"
        return "launch"
    if any(w in n for w in SETUP_WORDS):
        return "setup"
    return "launch"


class Ev:
    __slots__ = ("name", "cat", "lane", "start", "end", "corr", "state", "lane_end")

    def __init__(self, e):
        self.name = e.get("name", "")
        self.cat = e.get("cat", "")
        self.lane = (e.get("pid"), e.get("tid"))
        self.start = ns(e["ts"])
        self.end = self.start + ns(e.get("dur", 0))
        args = e.get("args") or {}
        self.corr = args.get("correlation", args.get("correlation_id"))
        self.state = None


def complete_events(path):
    """The trace's complete events."""
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as f:
        doc = json.load(f, parse_float=decimal.Decimal)
    raw = doc["traceEvents"] if isinstance(doc, dict) else doc
    return [Ev(e) for e in raw if e.get("ph") == "X" and "ts" in e]


def window_of(events, steps):
    """The named ProfilerStep spans, else the trace's extent: its events, not
    the profiler's own span of the session ("Trace")."""
    if steps:
        return [(e.start, e.end) for e in events
                if e.cat in ("user_annotation", "cpu_op", "Operator") and e.name in steps]
    spans = [e for e in events if e.cat not in ("Trace", "")]
    return [(min(e.start for e in spans), max(e.end for e in spans))]


def python_wait(name):
    """A Python frame that waits, by the names with_stack gives them."""
    if name.startswith("<built-in method acquire of _thread.") or name == "<built-in function sleep>":
        return True
    m = re.search(r"([^/]*\.py)\(\d+\): (.+)$", name)
    if not m:
        return False
    file, function = m.groups()
    return ((file == "threading.py" and function in ("wait", "join", "_wait_for_tstate_lock"))
            or (file == "queue.py" and function == "get")
            or (file == "selectors.py" and function == "select"))


def expected(path, steps):
    events = complete_events(path)
    device = [e for e in events if e.cat in ("kernel", "Kernel", "gpu_memcpy", "Memcpy",
                                             "gpu_memset", "Memset")]
    runtime = [e for e in events if e.cat in ("cuda_runtime", "cuda_driver", "Runtime")]
    host = [e for e in events if e.cat in ("cpu_op", "user_annotation", "python_function",
                                           "cuda_runtime", "cuda_driver", "Runtime",
                                           "cuda_sync", "Operator")]
    cpu_is_device = not any(e.end > e.start for e in device)
    task_of = {}
    for e in device:
        if e.corr is not None:
            task_of.setdefault(e.corr, e)
    # Runtime calls: by name, the copy they issued, first-use launches, the first call.
    for r in runtime:
        task = task_of.get(r.corr)
        copy = task.name if task is not None and task.cat in ("gpu_memcpy", "Memcpy") else None
        r.state = runtime_state(r.name, copy)
    launches = {}
    for r in runtime:
        task = task_of.get(r.corr)
        if r.state == "launch" and task is not None and task.cat in ("kernel", "Kernel") \
                and not is_collective(task.name):
            launches.setdefault(task.name, []).append(r)
    for calls in launches.values():
        calls.sort(key=lambda r: r.start)
        first = calls[0]
        dur = first.end - first.start
        if len(calls) > 1 and dur >= FIRST_USE_NS and \
                all((c.end - c.start) * 10 < dur for c in calls[1:]):
            first.state = "compilation"
    if runtime:
        first = min(runtime, key=lambda r: r.start)
        if first.state == "launch" and task_of.get(first.corr) is None and \
                first.end - first.start >= FIRST_CALL_NS:
            first.state = "setup"
    for e in host:
        if e.state is not None:
            continue
        n = e.name.lower()
        if e.cat == "cuda_sync":
            e.state = "blocked"
        elif any(w in n for w in ("dataloader", "data_loader", "next_data", "__next__")):
            e.state = "data_loading"
        elif e.name.startswith("ProfilerStep#") and e.cat in ("user_annotation", "cpu_op",
                                                               "Operator"):
            e.state = "annotation_only"
        elif e.cat == "user_annotation":
            e.state = ("communication" if cpu_is_device and is_collective(e.name)
                       else "annotation_only")
        elif any(w in n for w in TORCH_COMPILE) and not any(
                w in n for w in ("eval_frame", "triton_heuristics", "_inductor/runtime")):
            e.state = "compilation"
        elif e.cat == "python_function":
            e.state = None if python_wait(e.name) else "framework"
        elif cpu_is_device:
            e.state = ("communication" if is_collective(e.name) else
                       "framework" if e.name.split("::")[-1] in BOOKKEEPING else "compute")
        elif e.name.split("::")[-1] in ("item", "_local_scalar_dense"):
            e.state = "blocked"
        else:  # a runtime's allocation scope is set-up
            words = set(re.split(r"[^a-z0-9]+", n))
            e.state = "setup" if words & {"alloc", "allocation", "allocations"} else "framework"
    queued = []
    for t in device:
        r = next((r for r in runtime if r.corr is not None and r.corr == t.corr), None) \
            if t.corr is not None else None
        if r is not None and t.start > r.end + GRACE_NS:
            queued.append((r.end + GRACE_NS, t.start))
    window = window_of(events, steps)
    lanes = {}
    for e in host:
        lanes.setdefault(e.lane, []).append(e)
    for lane in lanes.values():
        lane.sort(key=lambda e: (e.start, -(e.end - e.start)))
        # An event that ends after the event it opened inside (the producer's
        # clocks) is cut at that event's end: a frame cannot outlive its caller.
        stack = []
        for e in lane:
            while stack and stack[-1].lane_end <= e.start:
                stack.pop()
            e.lane_end = min(e.end, stack[-1].lane_end) if stack else e.end
            stack.append(e)
    out = {}
    for w0, w1 in window:
        cuts = {w0, w1}
        for e in events:
            for t in (e.start, e.end):
                if w0 < t < w1:
                    cuts.add(t)
        for q0, q1 in queued:
            for t in (q0, q1):
                if w0 < t < w1:
                    cuts.add(t)
        cuts = sorted(cuts)
        for a, b in zip(cuts, cuts[1:]):
            mid = (a + b) / 2
            state = device_state(device, queued, mid)
            if state is None:
                held = set()
                for lane in lanes.values():
                    s = lane_state(lane, mid)
                    if s is not None:
                        held.add(s)
                if cpu_is_device:
                    for s in ("compute", "communication"):
                        if s in held:
                            state = s
                            break
                if state is None:
                    state = next((s for s in HOST_ORDER if s in held), "untraced")
            out[state] = out.get(state, 0) + (b - a)
    return out


def capture_ns(path, steps):
    """The window's time inside a graph capture: from a stream's begin-capture
    runtime call to the end of the end-capture call that closes it."""
    events = complete_events(path)
    marks = []
    for e in events:
        if e.cat in ("cuda_runtime", "cuda_driver", "Runtime"):
            n = call_name(e.name)
            if "streambegincapture" in n:
                marks.append((e.start, 1))
            elif "streamendcapture" in n:
                marks.append((e.end, -1))
    spans, depth, since = [], 0, 0
    for at, step in sorted(marks):
        if step > 0:
            if depth == 0:
                since = at
            depth += 1
        elif depth > 0:
            depth -= 1
            if depth == 0:
                spans.append((since, at))
    window = window_of(events, steps)
    return sum(max(0, min(b1, w1) - max(b0, w0)) for w0, w1 in window for b0, b1 in spans)


def device_state(device, queued, t):
    open_now = [e for e in device if e.start <= t < e.end]
    if any(e.cat in ("kernel", "Kernel") and not is_collective(e.name) for e in open_now):
        return "compute"
    if any(e.cat in ("kernel", "Kernel") for e in open_now):
        return "communication"
    if open_now:
        return "memory"
    if any(q0 <= t < q1 for q0, q1 in queued):
        return "queued"
    return None


def lane_state(lane, t):
    """The lane's state at t: its open events from the outermost in."""
    state = None
    for e in lane:
        if e.start > t:
            break
        if e.lane_end <= t:
            continue
        own = e.state
        if state in ("data_loading", "compilation", "blocked") and own != "data_loading":
            continue
        state = own
    return state


if __name__ == "__main__":
    print(json.dumps(expected(sys.argv[1], sys.argv[2:]), sort_keys=True))
