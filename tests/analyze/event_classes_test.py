#!/usr/bin/env python3
"""Every event's class, as `opscope analyze` reports it (the category column of
its operators, kernels, host_calls and annotations tables, --top 0), against
an independent reading of the raw traces in tests/data with Python's json
module, by the rules of each producer's own documentation:

- Kineto (libkineto's activity types, also as 2021's Kineto spelled them:
  Operator, Kernel, Memcpy, Memset, Runtime): `kernel` events are communication when
  they are NCCL's or RCCL's kernels or name a collective operation, compute
  kernels otherwise; `gpu_memcpy` events are copies, whose direction and host
  memory are the first and the bracketed part of the name CUPTI gives
  ("Memcpy HtoD (Pinned -> Device)"); a DataLoader's iterator
  ("enumerate(DataLoader)#..."; with_stack's ".../dataloader.py(...)") is
  data loading, whatever its category (cpu_op, user_annotation,
  python_function; PyTorch 1.13's legacy profiler writes no category).
- Kineto on MTIA (`mtia_ccp_events`, the command processor's records; no
  published description, so by what each record carries): `event_wait`
  (it names the stream it waits on, `wait_on_stream`) and `event_record`
  are device waits, `dma_request` (a direction and a size, no kernel) is
  DMA, names with memcpy or memset are copies or sets, the rest kernels.
- torch_npu's trace_view.json (docs/formats/ascend.md 3.1): everything on the
  "HCCL"/"Communication" process is communication; an "Ascend Hardware" task
  is classed by its "Task Type" argument, not by its name as opscope's
  importer does: Notify Wait, Write Value, EVENT_WAIT_SQE and
  EVENT_RECORD_SQE are device waits, SDMA is DMA (HCCL's), PLACE_HOLDER_SQE
  the profiler's own markers; the rest are kernels unless the task is a copy
  (MEMCPY_ASYNC) or a set (a MemSet kernel).

For each class the event count and the summed duration (ns, from the decimal
text of "dur", rounded half up) must match, and the transfers table's copies per direction and
per host memory.

    event_classes_test.py OPSCOPE DATA_DIR
"""
import collections
import decimal
import gzip
import json
import os
import re
import subprocess
import sys
import tempfile

COLLECTIVE = re.compile(r"nccl|rccl|all_?reduce|all_?gather|reduce_?scatter|all_?to_?all", re.I)
DIRECTIONS = {"HtoD": "HtoD", "DtoH": "DtoH", "DtoD": "DtoD", "PtoP": "PtoP", "HtoH": "HtoH"}
ASCEND_WAITS = {"Notify Wait", "Write Value", "EVENT_WAIT_SQE", "EVENT_RECORD_SQE"}
# Kineto of PyTorch 1.8 and 1.9 (libkineto's output_json.cpp of 2021) spelled
# five of its activity types otherwise: framework operators and
# record_function ranges "Operator", and "Kernel", "Memcpy", "Memset",
# "Runtime".
EARLY_KINETO = {"Operator": "cpu_op", "Kernel": "kernel", "Memcpy": "gpu_memcpy",
                "Memset": "gpu_memset", "Runtime": "cuda_runtime"}


def load(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        doc = json.load(f, parse_float=decimal.Decimal)
    return doc["traceEvents"] if isinstance(doc, dict) else doc


def ns(value):
    """Microseconds as written (a number or a string) in whole ns, half up."""
    return int((decimal.Decimal(str(value)) * 1000).quantize(decimal.Decimal(1),
                                                             rounding=decimal.ROUND_HALF_UP))


def copy_of(name):
    """(direction, host memory) of a CUPTI-named copy."""
    direction = next((d for d in DIRECTIONS if d in name), "other")
    m = re.search(r"\((\w+) -> (\w+)\)", name)
    memory = ""
    if m:
        side = m.group(1) if direction == "HtoD" else m.group(2) if direction == "DtoH" else ""
        memory = side.lower() if side in ("Pinned", "Pageable", "Managed") else ""
    return direction, memory


def expected(path):
    events = load(path)
    processes = {e["pid"]: e["args"]["name"] for e in events
                 if e.get("ph") == "M" and e.get("name") == "process_name"}
    by_class = collections.defaultdict(lambda: [0, 0])
    copies = collections.Counter()  # (direction, memory) -> count
    for e in events:
        if e.get("ph") != "X" or "dur" not in e:
            continue
        cat, name = e.get("cat", ""), e.get("name", "")
        cat = EARLY_KINETO.get(cat, cat)
        process = processes.get(e["pid"], str(e["pid"]))  # PyTorch 1.13: pid "CPU functions"
        task = (e.get("args") or {}).get("Task Type", "")
        cls = None
        if cat == "mtia_ccp_events":
            args = e.get("args") or {}
            if "wait_on_stream" in args or name == "event_record":
                cls = "device_wait"
            elif "direction" in args and "size" in args:
                cls = "dma"
            elif "memcpy" in name.lower():
                cls = "memcpy"
                copies[("other", "")] += 1
            elif "memset" in name.lower():
                cls = "memset"
            else:
                cls = "communication" if COLLECTIVE.search(name) else "kernel"
        elif cat == "kernel":
            cls = "communication" if COLLECTIVE.search(name) else "kernel"
        elif cat == "gpu_memcpy":
            cls = "memcpy"
            copies[copy_of(name)] += 1
        elif (cat in ("cpu_op", "user_annotation", "python_function") or
              (not cat and process == "CPU functions")) and not name.startswith("ProfilerStep#"):
            if "dataloader" in name.lower() or "data_loader" in name.lower():
                cls = "data_loading"
        elif not cat and process in ("HCCL", "Communication"):
            cls = "communication"
        elif not cat and process == "Ascend Hardware":
            if task in ASCEND_WAITS:
                cls = "device_wait"
            elif task == "SDMA":
                cls = "dma"
            elif task == "PLACE_HOLDER_SQE":
                cls = "device_annotation"
            elif name.upper().startswith("MEMCPY_ASYNC"):
                cls = "memcpy"
                copies[("other", "")] += 1
            elif name.lower().endswith("memset"):
                cls = "memset"
            else:
                cls = "kernel"
        if cls:
            by_class[cls][0] += 1
            by_class[cls][1] += ns(e["dur"])
    return by_class, copies


def analyze(opscope, path):
    with tempfile.TemporaryDirectory() as report:
        out = subprocess.run([opscope, "analyze", path, "--format", "json", "--top", "0",
                              "--out", report], capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"FAIL analyze {path}: exit {out.returncode}: {out.stderr}")
    rows = json.loads(out.stdout)["results"]
    by_class = collections.defaultdict(lambda: [0, 0])
    for r in rows:
        if r.get("section") in ("operators", "kernels", "host_calls", "annotations"):
            by_class[r["category"]][0] += r["count"]
            by_class[r["category"]][1] += round(r["total_ns"])
    copies = collections.Counter()
    for r in rows:
        if r.get("section") == "transfers":
            pageable, pinned = r.get("pageable") or 0, r.get("pinned") or 0
            if pageable:
                copies[(r["direction"], "pageable")] += pageable
            if pinned:
                copies[(r["direction"], "pinned")] += pinned
            if r["count"] - pageable - pinned:
                copies[(r["direction"], "")] += r["count"] - pageable - pinned
    return by_class, copies


def main():
    opscope, data = sys.argv[1], sys.argv[2]
    traces = [os.path.join(data, "kineto", f) for f in sorted(os.listdir(os.path.join(data, "kineto")))
              if f.endswith(".json.gz")]
    traces += [os.path.join(data, "torch-cpu", "mlp_dataloader_3steps_torch1.13.json"),
               os.path.join(data, "ascend", "trace_view.json"),
               os.path.join(data, "ascend", "level1_text_2rank", "rank0_ascend_pt",
                            "ASCEND_PROFILER_OUTPUT", "trace_view.json")]
    failures = []
    seen = collections.Counter()
    for path in traces:
        want, want_copies = expected(path)
        got, got_copies = analyze(opscope, path)
        name = os.path.relpath(path, data)
        for cls, (count, total) in sorted(want.items()):
            seen[cls] += count
            if got.get(cls) != [count, total]:
                failures.append(f"{name}: {cls}: expected {count} events, {total} ns; "
                                f"opscope has {got.get(cls)}")
        for cls in ("communication", "dma", "device_wait", "data_loading"):
            if cls in got and cls not in want:
                failures.append(f"{name}: opscope has {cls} events {got[cls]}, expected none")
        if want_copies != got_copies:
            failures.append(f"{name}: copies by (direction, host memory): expected "
                            f"{dict(want_copies)}, opscope has {dict(got_copies)}")
        print(f"{name}: " + ", ".join(f"{c} {n}" for c, (n, _) in sorted(want.items())))
    # The samples exercise every new class (a test that could not fail otherwise).
    for cls in ("communication", "dma", "device_wait", "data_loading", "memcpy"):
        if seen[cls] == 0:
            failures.append(f"no sample has a {cls} event: the check of it proves nothing")
    if failures:
        print("\n".join("FAIL " + f for f in failures))
        sys.exit(1)
    print("ok: every class's events and time, and every copy's direction and host memory, match")


if __name__ == "__main__":
    main()
