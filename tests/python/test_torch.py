"""The torch hand-off with Debian's python3-torch (1.13, CPU, no Kineto):
torch.profiler.profile(on_trace_ready=opscope.torch.trace_handler(...)) and
the trace torch.autograd.profiler exports, each checked against the exported
JSON read with Python's json module."""
import json
import os

import pytest

import opscope

torch = pytest.importorskip("torch", reason="python3-torch is not installed")
import opscope.torch  # noqa: E402  (after the skip: it is the package's module, not torch)


def raw_events(path):
    with open(path) as f:
        doc = json.load(f)
    events = doc["traceEvents"] if isinstance(doc, dict) else doc
    return [e for e in events if e.get("ph") == "X"]


def model_step(x, w):
    return torch.relu(torch.mm(x, w)).sum()


def test_trace_handler_saves_and_analyses_each_window(tmp_path):
    handler = opscope.torch.trace_handler(tmp_path / "traces", worker_name="w0")
    x, w = torch.randn(32, 64), torch.randn(64, 16)
    schedule = torch.profiler.schedule(wait=1, warmup=1, active=2, repeat=2)
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU],
                                schedule=schedule, on_trace_ready=handler) as prof:
        for _ in range(10):
            model_step(x, w)
            prof.step()
    assert len(handler.trace_files) == 2 == len(handler.analyses)
    for path, analysis, report in zip(handler.trace_files, handler.analyses,
                                      handler.report_dirs):
        assert os.path.basename(path).startswith("w0.") and path.endswith(".pt.trace.json")
        mm = [e for e in raw_events(path) if e["name"] == "aten::mm"]
        ops = analysis.ops.set_index("operator")
        assert ops.loc["aten::mm", "count"] == len(mm) == 2
        assert ops.loc["aten::mm", "total_ns"] == sum(round(e["dur"] * 1000) for e in mm)
        assert os.path.exists(os.path.join(report, "analysis.html"))


def test_trace_handler_gzip(tmp_path):
    handler = opscope.torch.trace_handler(tmp_path, use_gzip=True, save_report=False)
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU],
                                on_trace_ready=handler):
        model_step(torch.randn(8, 8), torch.randn(8, 8))
    (path,) = handler.trace_files
    assert path.endswith(".pt.trace.json.gz")
    with open(path, "rb") as f:
        assert f.read(2) == b"\x1f\x8b"
    assert (handler.analyses[0].ops["operator"] == "aten::mm").any()
    assert handler.report_dirs == []


def test_autograd_profiler_export(tmp_path):
    x, w = torch.randn(16, 32, requires_grad=True), torch.randn(32, 8)
    with torch.autograd.profiler.profile(record_shapes=True) as prof:
        for step in range(3):
            with torch.autograd.profiler.record_function(f"ProfilerStep#{step}"):
                model_step(x, w).backward()
    path = tmp_path / "autograd.json"
    prof.export_chrome_trace(str(path))
    raw = raw_events(path)
    a = opscope.analyze(path)
    assert a.traces["format"][0] == "pytorch-legacy"
    assert a.traces["events"][0] == len(raw)
    ops = a.ops.set_index("operator")
    assert ops.loc["aten::mm", "count"] == sum(1 for e in raw if e["name"] == "aten::mm")
    steps = a.steps
    assert len(steps) == 3
    # The same through analyze_profiler, without a file of one's own.
    b = opscope.torch.analyze_profiler(prof)
    assert b.traces["events"][0] == len(raw)


def test_opscope_scopes_inside_torch_code(tmp_path):
    with opscope.Profiler(output_dir=tmp_path) as prof:
        for _ in range(4):
            with opscope.scope("forward"):
                model_step(torch.randn(8, 8), torch.randn(8, 8))
    a = opscope.analyze(prof.trace_files[0])
    assert a.table("annotations").set_index("operator").loc["forward", "count"] == 4
