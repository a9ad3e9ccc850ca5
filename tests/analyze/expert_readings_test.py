#!/usr/bin/env python3
"""The diagnosis against an expert's reading of each real sample (issue 36).

Each case below restates, for one sample in tests/data, what an expert names
first and what must not be said on it, from the expert readings made
independently of opscope (the steering repository's
reference/expert-readings/readings.md; its section number is given per case:
every figure there comes from scripts that read the raw files with Python's
standard library). The readings' own instruction is followed: a test checks
the *state* of the first finding (its id, and the qualifier the reading
names: the late rank, the kernel family, waiting rather than moving data)
and the must-not list, never the wording or a figure of opscope's.

Must-not claims are recognised by what a finding says, in one place
(MUST_NOT below), so that a new rule that makes the claim is caught too.

    expert_readings_test.py OPSCOPE DATA_DIR
"""
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import Checks  # noqa: E402

opscope, data = sys.argv[1:3]
c = Checks()


def says(pattern, where=("title", "action")):
    """A finding whose title or action matches `pattern`."""
    rx = re.compile(pattern, re.IGNORECASE)
    return lambda f: any(rx.search(f.get(k) or "") for k in where)


def rule(*ids, severities=None, pattern=None):
    """A finding of one of these ids (of these severities; whose title
    matches `pattern`)."""
    rx = re.compile(pattern, re.IGNORECASE) if pattern else None
    return lambda f: (f["id"] in ids and (severities is None or f["severity"] in severities)
                      and (rx is None or rx.search(f["title"])))


# The must-not claims of the readings, each recognised by what a finding says.
MUST_NOT = {
    # "Host-bound: cut host overhead per step", "dispatch-bound".
    "host_bound": says(r"host-bound|cut host overhead|dispatch-bound"),
    # "Overlap communication/collectives with computation" as the lever.
    "overlap_comm_with_compute": says(r"\boverlap (the )?(collectives|communication) with (the )?"
                                      r"comput", where=("action",)),
    # "The host is blocked in synchronisation ...: remove it saves ..." where
    # the device works through the wait: a synchronisation finding that is
    # more than information, or a diagnosis that the host blocked.
    "remove_sync_saves_blocked_time": lambda f: (
        rule("synchronizations", "host_blocked_sync", "host_blocked_synchronisation",
             severities=("warning", "critical"))(f) or f["id"] == "step_host_blocked"),
    # A synchronisation that waits on a collective waiting for a peer, said to
    # wait for this device's own work (reading 19: "'aten::_local_scalar_dense'
    # waits: p99 70 ms" as this rank's problem; it waits on the collective).
    "sync_waits_on_own_work": lambda f: f["id"] == "synchronizations" and re.search(
        r"device's own work", f.get("action") or "") is not None,
    "dominant_operator": rule("dominant_operator"),
    "fp32_gemm_advice": rule("mixed_precision"),
    "transfers_HtoD": rule("transfers_HtoD"),
    "transfers_DtoD": rule("transfers_DtoD"),
    # pin_memory advice: for a one-off weight upload, or copies already pinned.
    "pin_memory": says(r"pin_memory=True|(?<!already )use pinned memory|from pinned memory:"),
    # Set-up (allocation, cuDNN start-up) or a runtime wrapper called compilation.
    "compilation": rule("compilation", "step_compilation"),
    # "Online compilation takes 6.6 ms" where compile is 0.16 ms of it.
    "online_compilation": rule("online_compilation", severities=("warning", "critical")),
    # A low busy share judged as the problem (a fixture, a start-up broadcast,
    # a whole window of start-up).
    "low_utilisation_as_problem": rule("low_device_utilization"),
    # Layout conversions as critical where they are a small part of the step.
    "layout_conversions_critical": rule("layout_conversions", severities=("critical",)),
    # The compute stream's EVENT_WAIT (or any wait) as work to fuse.
    "fuse_event_wait": lambda f: f["id"] in ("fusion", "dominant_operator") and re.search(
        r"(?i)event_wait|notify", f["title"]) is not None,
    # A collective kernel to optimise (its time includes waiting for peers).
    "optimise_collective_kernel": rule("dominant_operator", pattern=r"nccl|rccl|hccl|hcom"),
    # An operator's roofline above 100% stated as a finding.
    "roofline_over_100": says(r"\b(1[0-9]{2}|[2-9][0-9]{2})(\.\d)?% of (its )?roofline"),
    # The MI300 called CPU-bound from its hipDeviceSynchronize.
    "vendor_cpu_bound_from_sync": says(r"cpu-bound|host-bound"),
}

GRAPH = "kineto/graph_replay/vllm_decode_full/"
# (sample, readings.md section, the first finding's id, patterns its title
# must match, must-not claims)
CASES = [
    ("kineto/alexnet_cuda_rank0.json.gz", 1, "step_setup", [r"one-off set-up"],
     ["pin_memory", "compilation", "host_bound", "dominant_operator"]),
    ("kineto/cuda_event_sync_multi_stream.json.gz", 2, "step_untraced", [],
     ["dominant_operator", "fp32_gemm_advice", "host_bound"]),
    ("kineto/mi250_rocm_train.json.gz", 3, "step_compilation", [r"warm-up"],
     ["host_bound", "transfers_HtoD"]),
    ("kineto/cpu_only.pt.trace.json.gz", 4, "step_device_waiting", [r"in communication"],
     ["overlap_comm_with_compute", "host_bound"]),
    ("kineto/sampled_rank-0.json.gz", 5, "step_device_waiting", [],
     ["host_bound", "dominant_operator"]),
    ("kineto/sampled_rank-1.json.gz", 6, "step_device_waiting", [],
     ["host_bound", "dominant_operator"]),
    ("kineto/h100_Qwen1.5-0.5B-Chat.json.gz", 7, "step_compute", [r"device-bound", r"elementwise"],
     ["remove_sync_saves_blocked_time", "host_bound"]),
    ("kineto/mi300_Qwen1.5-0.5B-Chat.json.gz", 8, "step_compute", [r"device-bound", r"elementwise"],
     ["remove_sync_saves_blocked_time", "host_bound", "vendor_cpu_bound_from_sync"]),
    ("kineto/b200_eager.json.gz", 9, "step_host_overhead", [r"host-bound"],
     ["overlap_comm_with_compute"]),
    (GRAPH + "graph_execution.json.gz", 10, "step_compute", [r"device-bound", r"GEMM"],
     ["host_bound", "compilation"]),
    (GRAPH + "capture_traces/graph_capture_rank_0.pt.trace.json.gz", 11, "step_capture",
     [r"not a run"], ["low_utilisation_as_problem", "compilation", "transfers_DtoD"]),
    ("torch-cpu/small_cnn_train_torch1.13.json", 12, "step_outlier", [r"not steady"],
     ["dominant_operator"]),
    ("ascend/trace_view.json", 13, "step_host_overhead", [r"host-bound"],
     ["online_compilation", "layout_conversions_critical"]),
    ("ascend/kernel_details.csv", 14, "step_untraced", [],
     ["low_utilisation_as_problem", "dominant_operator"]),
    ("ascend/kernel_details_advisor.csv", 15, "step_startup", [r"one-off start-up"],
     ["overlap_comm_with_compute", "roofline_over_100", "low_utilisation_as_problem"]),
    ("ascend/level1_text_2rank/rank0_ascend_pt", 16, "step_device_waiting",
     [r"waiting for other ranks", r"rank 5 above all"],
     ["remove_sync_saves_blocked_time", "overlap_comm_with_compute", "roofline_over_100",
      "fuse_event_wait", "sync_waits_on_own_work"]),
    ("ascend/level1_text/rank0_ascend_pt", 18, "step_device_waiting", [r"waiting for other ranks"],
     ["overlap_comm_with_compute", "roofline_over_100"]),
    ("ascend/level0_text/rank0_ascend_pt", 19, "step_device_waiting", [r"waiting for other ranks"],
     ["host_bound", "remove_sync_saves_blocked_time", "sync_waits_on_own_work"]),
    ("ascend/level1_db/rank0_ascend_pt", 20, "step_device_waiting",
     [r"waiting for other ranks", r"rank 6 above all"],
     ["remove_sync_saves_blocked_time", "roofline_over_100", "sync_waits_on_own_work"]),
    ("rocprofv3/908_results.json.gz", 21, "step_device_waiting", [r"in communication"],
     ["host_bound", "low_utilisation_as_problem", "optimise_collective_kernel"]),
    ("xplane/jax_conv_mi300.xplane.pb", 22, "step_host_overhead", [r"runtime latency"],
     ["host_bound"]),
    ("nsys/h100_2gpu_1s.sqlite", 24, "step_memory", [r"transfer-bound"],
     ["remove_sync_saves_blocked_time", "pin_memory", "fp32_gemm_advice"]),
]


def findings(sample):
    run, out = c.analyze(opscope, os.path.join(data, sample), re.sub(r"\W", "_", sample))
    if run.returncode != 0:
        return None, run.stderr
    with open(os.path.join(out, "analysis.json")) as f:
        results = json.load(f)["results"]
    return [r for r in results if r.get("section") == "findings"], ""


for sample, section, first_id, patterns, must_not in CASES:
    got, err = findings(sample)
    if got is None:
        c.check(False, f"{sample} (reading {section}): analysed ({err.strip()[:200]})")
        continue
    first = got[0] if got else {"id": None, "title": ""}
    c.check(first["id"] == first_id and all(re.search(p, first["title"], re.IGNORECASE)
                                            for p in patterns),
            f"{sample} (reading {section}): first {first_id} {patterns} "
            f"(got {first['id']}: {first['title'][:160]})")
    for code in must_not:
        said = [f for f in got if MUST_NOT[code](f)]
        c.check(not said, f"{sample}: no finding says {code}" +
                (f" (got {said[0]['id']}: {said[0]['title'][:120]})" if said else ""))

# Reading 23: a damaged XSpace is refused, with the damage named, and no finding.
run, out = c.analyze(opscope, os.path.join(data, "xplane/tpu_inference_2.xplane.pb"), "tpu")
c.check(run.returncode != 0 and "not a valid XSpace protobuf" in run.stderr
        and "U+FFFD" in run.stderr and not os.path.exists(os.path.join(out, "analysis.json")),
        "xplane/tpu_inference_2.xplane.pb (reading 23): refused, naming the damage "
        f"(exit {run.returncode}: {run.stderr.strip()[:160]})")

sys.exit(c.done())
