#!/usr/bin/env python3
"""torch_npu's affinity APIs (issue 38: msprof-analyze's advisor,
advisor/rules/timeline_fusion_ops.yaml): runs of the operators the code
called that one fused API replaces, on a real torch_npu timeline and on a
copy of it with runs planted.

The real trace_view.json (a CNN) calls none of the listed runs: no table, no
finding. The copy renames, in its complete step (ProfilerStep#1), the first
outermost conv2d-relu-max_pool2d to matmul-softmax-matmul (attention:
torch_npu.npu_fusion_attention) and the following view-linear-relu-linear-
relu to chunk-neg-cat-mul-add (rotary: torch_npu.npu_rotary_mul); the
renamed operators keep their device tasks (their async_npu flows).

Restated here, independently of opscope: the outermost aten:: operators of
each thread (not inside another aten:: operator), in start order, names
joined by '-', each of the rule file's patterns turned into a Python regular
expression over them; at each operator the longest match of any API, runs
never overlapping, counted where the run starts inside the complete step.
The device time of an API's runs comes from op_device_expected.py (each
operator's device total, by the async_npu flows): the renamed names occur
nowhere else, so an API's device time is the sum of its names' totals.

    affinity_apis_test.py OPSCOPE DATA_DIR
"""
import collections
import copy
import decimal
import gzip
import json
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from checks import Checks  # noqa: E402
from op_device_expected import expected as op_device, ns  # noqa: E402

opscope, data = sys.argv[1:3]
c = Checks()
with open(os.path.join(data, "ascend", "trace_view.json")) as f:
    events = json.load(f)

# The rule file's APIs and their runs (timeline_fusion_ops.yaml, every CANN
# version's additions; the optimizers are another rule's).
RULES = {
    "torch_npu.npu_confusion_transpose": ["(permute|transpose)-(contiguous){0,1}-(reshape|view)",
                                          "(reshape|view)-(contiguous){0,1}-(permute|transpose)"],
    "torch_npu.fast_gelu": ["gelu"],
    "torch_npu.npu_scaled_masked_softmax": ["softmax-(mul){0,1}-(masked_fill_|add)"],
    "optimizer.clip_grad_norm_fused_": ["add-reciprocal-mul"],
    "torch_npu.npu_fusion_attention": [
        "matmul-(add){0,1}-(mul){0,1}-(masked_fill_|add){0,1}-softmax-(dropout){0,1}-matmul"],
    "torch_npu.npu_rotary_mul": ["(chunk|slice)-neg-cat-(mul){0,2}-add"],
    "torch_npu.npu_rms_norm": ["(pow){0,1}-(mean){0,1}-(add){0,1}-rsqrt-mul-(type_as){0,1}"],
    "torch_npu.npu_swiglu": ["(slice|chunk)-silu-mul", "(slice|chunk)-mul-silu",
                             "(slice|chunk)-sigmoid-mul-mul", "(slice|chunk)-mul-sigmoid-mul",
                             "(slice|chunk)-mul-mul-sigmoid"],
    "torch_npu.npu_geglu": ["(slice|chunk)-gelu-mul", "(slice|chunk)-mul-gelu"],
    "torch_npu.npu_group_norm_silu": ["group_norm-silu"],
    "torch.addmm": ["mul-mul-add"],
    "torch_npu.npu_add_layer_norm": ["add-layer_norm"],
    "mindspeed.ops.npu_matmul_add": ["matmul-add"],
    "mindspeed.ops.npu_moe_token_permute": ["argsort-argsort-index_select"],
    "mindspeed.ops.npu_moe_token_unpermute": ["index_select-mul-reduce_sum"],
}


def regex(pattern):
    """A pattern over names each followed by '-': "(a|b){0,1}-c" ->
    (?:(?:a|b)-){0,1}(?:c)-"""
    out = ""
    for part in re.findall(r"(\([^)]*\)|[^-({]+)(\{\d+,\d+\})?-?", pattern):
        names, repeat = part
        out += f"(?:(?:{names.strip('()')})-){repeat}"
    return re.compile(out)


COMPILED = {api: [regex(p) for p in ps] for api, ps in RULES.items()}


def outermost_aten(events):
    """Per thread, the aten:: operators not inside another, in start order."""
    by_thread = collections.defaultdict(list)
    for i, e in enumerate(events):
        if e.get("ph") == "X" and e.get("cat") == "cpu_op" and e["name"].startswith("aten::"):
            by_thread[(str(e["pid"]), str(e["tid"]))].append(
                (ns(e["ts"]), -ns(e["dur"]), i, ns(e["ts"]) + ns(e["dur"]), e["name"][6:]))
    out = {}
    for thread, ops in by_thread.items():
        ops.sort()
        top, end = [], None
        for start, _, i, stop, name in ops:
            if end is None or start >= end:
                top.append((start, name))
                end = stop
        out[thread] = top
    return out


def runs(events):
    step = next(e for e in events if e.get("ph") == "X" and e["name"] == "ProfilerStep#1")
    b, f = ns(step["ts"]), ns(step["ts"]) + ns(step["dur"])
    found = collections.defaultdict(list)
    for ops in outermost_aten(events).values():
        text = "".join(name + "-" for _, name in ops)
        offsets = []
        at = 0
        for _, name in ops:
            offsets.append(at)
            at += len(name) + 1
        i = 0
        while i < len(ops):
            best = None
            for api, regexes in COMPILED.items():
                for r in regexes:
                    m = r.match(text, offsets[i])
                    if m and m.end() > offsets[i] and (best is None or m.end() > best[1]):
                        best = (api, m.end())
            if best is None or not (b <= ops[i][0] < f):
                i += 1
                continue
            n = text.count("-", offsets[i], best[1])
            found[best[0]].append([name for _, name in ops[i:i + n]])
            i += n
    return found


def report(events, name):
    results = c.analyze_events(opscope, events, name)
    return ({r["id"]: r for r in results if r["section"] == "findings"},
            {r["api"]: r for r in results if r["section"] == "affinity_apis"})


found = runs(events)
c.check(not found, f"the real trace: no listed run ({dict(found)})")
findings, rows = report(events, "real")
c.check("affinity_apis" not in findings and not rows, "opscope: no finding and no table on it")

# The planted copy.
step = next(e for e in events if e.get("ph") == "X" and e["name"] == "ProfilerStep#1")
b, f = ns(step["ts"]), ns(step["ts"]) + ns(step["dur"])
edited = copy.deepcopy(events)
top = outermost_aten(edited)
thread = (str(step["pid"]), str(step["tid"]))
index_of = {(ns(e["ts"]), e["name"][6:]): i for i, e in enumerate(edited)
            if e.get("ph") == "X" and e.get("cat") == "cpu_op" and
            (str(e["pid"]), str(e["tid"])) == thread}
names = [n for s, n in top[thread] if b <= s < f]
starts = [s for s, n in top[thread] if b <= s < f]
plants = [("conv2d-relu-max_pool2d", ["matmul", "softmax", "matmul"]),
          ("view-linear-relu-linear-relu", ["chunk", "neg", "cat", "mul", "add"])]
renamed = set()
for old, new in plants:
    # the first place the whole run occurs
    k = next(j for j in range(len(names)) if names[j:j + len(old.split("-"))] == old.split("-"))
    for j, n in enumerate(new):
        e = edited[index_of[(starts[k + j], names[k + j])]]
        e["name"] = "aten::" + n
        renamed.add(n)
    names[k:k + len(new)] = new
c.check(all(n not in {x for _, x in outermost_aten(events)[thread]} for n in renamed),
        f"the renamed names {sorted(renamed)} occur nowhere in the real trace")
found = runs(edited)
c.check(set(found) == {"torch_npu.npu_fusion_attention", "torch_npu.npu_rotary_mul"},
        f"the copy: the two planted runs are found ({ {k: v for k, v in found.items()} })")


def check_copy(events, name):
    """The table's runs, operators, first run and device time against the
    expectation; whether the finding fires. Returns the APIs judged."""
    found = runs(events)
    path = os.path.join(c.scratch, name + "_trace_view.json")
    with open(path, "w") as fh:
        json.dump(events, fh)
    totals = op_device(path)["operators"]
    findings, rows = report(events, name)
    judged = []
    for api, list_of_runs in sorted(found.items()):
        r = rows.get(api)
        want_device = sum(totals["aten::" + n]["device_total_ns"]
                          for n in {x for run in list_of_runs for x in run})
        if want_device >= 1_000_000:
            judged.append(api)
        c.check(r is not None and int(r["runs"]) == len(list_of_runs)
                and int(r["operators"]) == sum(len(x) for x in list_of_runs)
                and r["example"] == "-".join(list_of_runs[0])
                and round(r["device_ns"]) == want_device,
                f"{name}: {api}: {len(list_of_runs)} run(s) {list_of_runs[0]}, {want_device} ns "
                f"of device tasks (got {r and (r['runs'], r['operators'], r['example'], r['device_ns'])})")
    a = findings.get("affinity_apis")
    c.check((a is not None) == bool(judged) and (a is None or a["severity"] == "info"),
            f"{name}: affinity_apis fires (info) exactly where an API's runs take 1 ms of device "
            f"time or more ({judged})")
    if a is not None:
        c.check(all(api in a["evidence"] for api in judged),
                f"{name}: its evidence names each judged API")
    return judged


c.check(not check_copy(edited, "edited"),
        "the planted runs take under 1 ms of device time: no finding (a precondition fails)")

# The same program run 20 times slower (every time from the first and every
# duration x20, so that nesting, flows and order are kept): the planted runs
# take over 1 ms.
slower = copy.deepcopy(edited)
t0 = min(decimal.Decimal(str(e["ts"])) for e in slower if "ts" in e)
for e in slower:
    for key in ("ts", "dur"):
        if key in e:
            v = decimal.Decimal(str(e[key]))
            v = t0 + (v - t0) * 20 if key == "ts" else v * 20
            e[key] = str(v) if isinstance(e[key], str) else float(v)
c.check(check_copy(slower, "slower") == ["torch_npu.npu_fusion_attention",
                                         "torch_npu.npu_rotary_mul"],
        "slower: both planted APIs are judged")

# A CUDA trace (Qwen on an H100, Kineto) calls RMSNorm and rotary runs the
# rule file lists, but torch_npu's APIs are not its framework's: nothing said.
with gzip.open(os.path.join(data, "kineto", "h100_Qwen1.5-0.5B-Chat.json.gz"), "rt") as fh:
    qwen = json.load(fh)["traceEvents"]
qwen_runs = sum(len(r.findall("".join(n + "-" for _, n in ops)))
                for ops in outermost_aten(qwen).values()
                for api in ("torch_npu.npu_rms_norm", "torch_npu.npu_rotary_mul")
                for r in COMPILED[api])
run, out = c.analyze(opscope, os.path.join(data, "kineto", "h100_Qwen1.5-0.5B-Chat.json.gz"),
                     "qwen")
with open(os.path.join(out, "analysis.json")) as fh:
    results = json.load(fh)["results"]
c.check(qwen_runs > 0 and not [r for r in results if r["section"] == "affinity_apis" or
                               r.get("id") == "affinity_apis"],
        f"the H100 Kineto trace: {qwen_runs} RMSNorm and rotary runs, no table, no finding")
sys.exit(c.done())
