#!/usr/bin/env python3
"""The environment rule: the variables msprof-analyze's advisor advises on
(its rules/en/environment_variable_info.yaml and
EnvironmentVariableChecker's conditions), each advised only where the trace
shows the cost it addresses (docs/rules.md, environment). Ranks are built
from real samples with a profiler_metadata.json whose ENV_VARIABLES are
planted:

- the Level0 rank (its diagnosis: the device waits in communication) with
  ASCEND_LAUNCH_BLOCKING=1 and HCCL_ALGO set, ACLNN_CACHE_LIMIT unset: a
  warning naming the first two, not the cache (launching does not set the
  pace there);
- the same with every variable as msprof-analyze recommends or unset: no
  finding;
- the host-bound torch_npu timeline (ascend/trace_view.json, its diagnosis
  step_host_overhead) with ASCEND_GLOBAL_LOG_LEVEL=1 and both caches unset:
  info naming the three; with them set as advised: no finding.

The samples' own metadata (every variable empty) makes no finding.

    environment_test.py OPSCOPE DATA_DIR
"""
import json
import os
import shutil
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from checks import Checks  # noqa: E402

opscope, data = sys.argv[1:3]
c = Checks()
ALL = ["ASCEND_GLOBAL_LOG_LEVEL", "HCCL_RDMA_TC", "HCCL_RDMA_SL", "ACLNN_CACHE_LIMIT",
       "HOST_CACHE_CAPACITY", "PYTORCH_NPU_ALLOC_CONF", "ASCEND_LAUNCH_BLOCKING"]


def rank_with(label, timeline_from, env):
    """A rank folder: the sample's output (a folder) or one trace_view.json,
    with profiler_metadata.json holding `env` (every other variable empty)."""
    rank = os.path.join(c.scratch, label, "rank0_ascend_pt")
    output = os.path.join(rank, "ASCEND_PROFILER_OUTPUT")
    if os.path.isdir(timeline_from):
        shutil.copytree(timeline_from, rank)
    else:
        os.makedirs(output)
        shutil.copy(timeline_from, output)
    variables = {name: "" for name in ALL}
    variables.update(env)
    with open(os.path.join(rank, "profiler_metadata.json"), "w") as f:
        json.dump({"ENV_VARIABLES": variables}, f)
    return rank


def environment(rank, label):
    run, out = c.analyze(opscope, rank, label + "-report")
    if run.returncode != 0:
        return "failed: " + run.stderr[:200], None
    with open(os.path.join(out, "analysis.json")) as f:
        rows = [r for r in json.load(f)["results"] if r.get("section") == "findings"]
    got = [r for r in rows if r["id"] == "environment"]
    return (got[0] if got else None), (rows[0]["id"] if rows else None)


def expect(label, source, env, severity, named, absent=()):
    got, first = environment(rank_with(label, source, env), label)
    if severity is None:
        c.check(got is None, f"{label}: no environment finding (got {got and got['title']})")
        return
    ok = isinstance(got, dict) and got["severity"] == severity and \
        all(n in got["title"] for n in named) and not any(n in got["title"] for n in absent)
    c.check(ok, f"{label}: {severity} naming {named}, not {list(absent)} "
                f"(diagnosis {first}; got {got if not isinstance(got, dict) else got['title']})")


level0 = os.path.join(data, "ascend", "level0_text", "rank0_ascend_pt")
host_bound = os.path.join(data, "ascend", "trace_view.json")
expect("level0-blocking", level0,
       {"ASCEND_LAUNCH_BLOCKING": "1", "HCCL_ALGO": "level0:NA;level1:ring"}, "warning",
       ["ASCEND_LAUNCH_BLOCKING=1", "HCCL_ALGO=level0:NA;level1:ring"], ["ACLNN_CACHE_LIMIT"])
expect("level0-advised", level0,
       {"ASCEND_LAUNCH_BLOCKING": "0", "ASCEND_GLOBAL_LOG_LEVEL": "3"}, None, [])
expect("host-bound-defaults", host_bound, {"ASCEND_GLOBAL_LOG_LEVEL": "1"}, "info",
       ["ASCEND_GLOBAL_LOG_LEVEL=1", "ACLNN_CACHE_LIMIT=(unset)", "HOST_CACHE_CAPACITY=(unset)"])
expect("host-bound-advised", host_bound,
       {"ASCEND_GLOBAL_LOG_LEVEL": "3", "ACLNN_CACHE_LIMIT": "100000", "HOST_CACHE_CAPACITY": "20"},
       None, [])
got, _ = environment(os.path.join(data, "ascend", "level1_text_2rank", "rank0_ascend_pt"),
                     "sample")
c.check(got is None, f"the sample's own metadata (every variable empty): no finding ({got})")
sys.exit(c.done())
