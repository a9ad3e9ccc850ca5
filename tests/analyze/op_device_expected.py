#!/usr/bin/env python3
"""The independent side of op_device_test.py: each framework operator's device
time, computed from a trace's raw JSON with Python's json module alone
(nothing of opscope's).

A device task belongs to the operator that launched it:
- Kineto (CUDA, ROCm): the task's `correlation` names its launch call (a
  cuda_runtime / cuda_driver event with the same correlation); the launcher
  is the innermost cpu_op on the call's thread that encloses the call.
- torch_npu's trace_view.json: an `async_npu` flow (docs/formats/ascend.md 3.1) starts on
  the operator's thread inside the operator and ends at the task's start on
  its device lane (Ascend Hardware, HCCL / Communication); the launcher is the innermost cpu_op enclosing
  the flow's start.
An operator's device self time is its own tasks'; its device total adds the
tasks of the cpu_ops nested in it on its thread. Per name, the calls are
summed. Modules: `nn.Module: X` python_function spans, a path of the spans
around them; a module's device total holds the tasks whose launcher lies
inside it.

    op_device_expected.py TRACE      prints {operator: figures} as JSON
"""
import collections
import decimal
import gzip
import json
import sys

DEVICE_CATEGORIES = {"kernel", "gpu_memcpy", "gpu_memset"}
RUNTIME_CATEGORIES = {"cuda_runtime", "cuda_driver"}
# torch_npu's device lanes (docs/formats/ascend.md 3.1): tasks, and collectives ("HCCL"
# in older releases, "Communication" now).
DEVICE_PROCESSES = {"Ascend Hardware", "HCCL", "Communication"}
MODULE = "nn.Module: "


def is_data_loading(name):
    """A DataLoader's iterator ("enumerate(DataLoader)#...__next__"), recorded
    as a cpu_op: data loading, not a framework operator (schema 4's event
    classes, docs/analysis-json.md)."""
    return "dataloader" in name.lower() or "data_loader" in name.lower()


def ns(value):
    return int((decimal.Decimal(str(value).strip()) * 1000).to_integral_value(
        decimal.ROUND_HALF_UP))


def load(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as f:
        doc = json.load(f, parse_float=decimal.Decimal)
    return doc["traceEvents"] if isinstance(doc, dict) else doc


class Span:
    __slots__ = ("index", "name", "cat", "thread", "start", "end", "dur", "parent")

    def __init__(self, index, e):
        self.index = index
        self.name = e.get("name", "")
        self.cat = e.get("cat", "")
        self.thread = (str(e.get("pid")), str(e.get("tid")))
        self.start = ns(e["ts"])
        self.dur = ns(e.get("dur", 0))
        self.end = self.start + self.dur
        self.parent = None

    def key(self):  # the order spans open in: by start, the longer first, then file order
        return (self.start, -self.dur, self.index)


def nest(spans):
    """Each span's parent: the innermost span open before it (by key) that
    lasts at least as long, on its thread."""
    by_thread = collections.defaultdict(list)
    for s in spans:
        by_thread[s.thread].append(s)
    for thread_spans in by_thread.values():
        thread_spans.sort(key=Span.key)
        stack = []
        for s in thread_spans:
            while stack and stack[-1].end <= s.start:
                stack.pop()
            for open_span in reversed(stack):
                if open_span.end >= s.end:
                    s.parent = open_span
                    break
            stack.append(s)


def innermost_op_around(ops_by_thread, thread, key, end, at_instant):
    """The innermost operator on `thread` opened before `key` that encloses
    [key's start, end] (or, at_instant, the instant key[0])."""
    best = None
    for op in ops_by_thread.get(thread, ()):
        if op.key() >= key and not at_instant:
            break
        if at_instant:
            if op.start > key[0]:
                break
            if op.start <= key[0] <= op.end and (best is None or (op.start, op.index) >
                                                  (best.start, best.index)):
                best = op
        elif op.end >= end and op.end > key[0]:
            best = op  # sorted by key: the last that encloses is the innermost
    return best


def expected(path):
    events = load(path)
    process_names = {}
    for e in events:
        if e.get("ph") == "M" and e.get("name") == "process_name":
            process_names[str(e.get("pid"))] = e.get("args", {}).get("name", "")
    ops, calls, tasks, modules = [], {}, [], []
    task_at = {}  # (pid, tid, start ns) -> task, for torch_npu flows
    flows = collections.defaultdict(dict)
    for i, e in enumerate(events):
        ph = e.get("ph")
        if ph in ("s", "f") and e.get("cat") == "async_npu":
            flows[str(e.get("id"))][ph] = ((str(e.get("pid")), str(e.get("tid"))), ns(e["ts"]))
            continue
        if ph != "X":
            continue
        s = Span(i, e)
        process = process_names.get(s.thread[0], "")
        if s.cat in ("cpu_op",) and not s.name.startswith("ProfilerStep#") and \
                not is_data_loading(s.name):
            ops.append(s)
        elif s.cat == "python_function" and s.name.startswith(MODULE):
            modules.append(s)
        elif s.cat in RUNTIME_CATEGORIES and "correlation" in e.get("args", {}):
            calls[e["args"]["correlation"]] = s
        if s.cat in DEVICE_CATEGORIES or (not s.cat and process in DEVICE_PROCESSES):
            tasks.append((s, e.get("args", {}).get("correlation")))
            task_at.setdefault((s.thread, s.start), s)
    nest(ops)
    nest(modules)
    ops_by_thread = collections.defaultdict(list)
    for op in ops:
        ops_by_thread[op.thread].append(op)
    for v in ops_by_thread.values():
        v.sort(key=Span.key)
    launcher = {}  # task index -> op
    for task, correlation in tasks:
        call = calls.get(correlation) if correlation is not None else None
        if call is not None:
            op = innermost_op_around(ops_by_thread, call.thread, call.key(), call.end, False)
            if op is not None:
                launcher[task.index] = op
    for ends in flows.values():
        if "s" not in ends or "f" not in ends:
            continue
        (host_thread, host_ns), (device_thread, device_ns) = ends["s"], ends["f"]
        task = task_at.get((device_thread, device_ns))
        if task is None or task.index in launcher:
            continue
        op = innermost_op_around(ops_by_thread, host_thread, (host_ns, 0, 0), host_ns, True)
        if op is not None:
            launcher[task.index] = op
    figures = collections.defaultdict(lambda: {"calls": 0, "device_self_ns": 0,
                                               "device_total_ns": 0, "kernels": 0,
                                               "kernels_total": 0})
    for op in ops:
        figures[op.name]["calls"] += 1
    module_paths = {}

    def path_of(m):
        if m.index not in module_paths:
            own = m.name[len(MODULE):]
            module_paths[m.index] = own if m.parent is None else path_of(m.parent) + "/" + own
        return module_paths[m.index]

    module_figures = collections.defaultdict(lambda: {"calls": 0, "device_total_ns": 0})
    for m in modules:
        module_figures[path_of(m)]["calls"] += 1
    modules_by_thread = collections.defaultdict(list)
    for m in modules:
        modules_by_thread[m.thread].append(m)
    for task, _ in tasks:
        op = launcher.get(task.index)
        if op is None:
            continue
        figures[op.name]["device_self_ns"] += task.dur
        figures[op.name]["kernels"] += 1
        a = op
        while a is not None:
            figures[a.name]["device_total_ns"] += task.dur
            figures[a.name]["kernels_total"] += 1
            a = a.parent
        for path in {path_of(m) for m in modules_by_thread.get(op.thread, ())
                     if m.start <= op.start and op.end <= m.end}:
            module_figures[path]["device_total_ns"] += task.dur
    return {"operators": dict(figures), "modules": dict(module_figures),
            "tasks": len(tasks), "linked_tasks": len(launcher)}


if __name__ == "__main__":
    json.dump(expected(sys.argv[1]), sys.stdout, indent=1, sort_keys=True)
