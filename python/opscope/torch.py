"""The hand-off from torch.profiler to opscope.

    import torch, opscope.torch
    handler = opscope.torch.trace_handler("traces")
    with torch.profiler.profile(schedule=torch.profiler.schedule(wait=1, warmup=1, active=3),
                                on_trace_ready=handler) as prof:
        for batch in data:
            train(batch)
            prof.step()
    handler.analyses[-1].ops        # DataFrames of the last window

Works with every profiler that has export_chrome_trace(): torch.profiler.profile
(Kineto's traces, or the legacy CPU profiler where torch has no Kineto, as
Debian's 1.13 build) and torch.autograd.profiler.profile.
"""

import gzip
import os
import shutil
import socket
import tempfile
import time

from ._analysis import analyze
from .errors import _path


class TraceHandler:
    """on_trace_ready for torch.profiler.profile: writes each window's trace
    to `dir_name` as torch's tensorboard_trace_handler names it
    ({worker}.{time_ns}.pt.trace.json[.gz]), analyses it with
    opscope.analyze, and, with `save_report`, writes the analysis beside it
    ({trace}.opscope-analysis/). `analyses` and `trace_files` hold every
    window's, in order; `on_analysis(analysis)` is called with each."""

    def __init__(self, dir_name, worker_name=None, use_gzip=False, save_report=True,
                 on_analysis=None, ceilings=None):
        self.dir_name = _path(dir_name, "dir_name")
        self.worker_name = worker_name or f"{socket.gethostname()}_{os.getpid()}"
        self.use_gzip = bool(use_gzip)
        self.save_report = bool(save_report)
        self.on_analysis = on_analysis
        self.ceilings = ceilings
        self.analyses = []
        self.trace_files = []
        self.report_dirs = []

    def __call__(self, prof):
        os.makedirs(self.dir_name, exist_ok=True)
        name = f"{self.worker_name}.{time.time_ns()}.pt.trace.json"
        if self.use_gzip:
            name += ".gz"
        path = os.path.join(self.dir_name, name)
        prof.export_chrome_trace(path)
        if self.use_gzip:
            _ensure_gzip(path)
        self.trace_files.append(path)
        analysis = analyze(path, ceilings=self.ceilings)
        self.analyses.append(analysis)
        if self.save_report:
            report = path[: -len(".json.gz") if self.use_gzip else -len(".json")] + \
                ".opscope-analysis"
            analysis.save(report)
            self.report_dirs.append(report)
        if self.on_analysis is not None:
            self.on_analysis(analysis)
        return analysis


def _ensure_gzip(path):
    """torch versions whose export ignores the ".gz" suffix write plain text:
    compress it in place (through a temporary file, so no half-written trace)."""
    with open(path, "rb") as f:
        if f.read(2) == b"\x1f\x8b":
            return
    tmp = path + ".tmp"
    with open(path, "rb") as src, gzip.open(tmp, "wb") as dst:
        shutil.copyfileobj(src, dst)
    os.replace(tmp, path)


def trace_handler(dir_name, worker_name=None, use_gzip=False, save_report=True,
                  on_analysis=None, ceilings=None):
    """A TraceHandler: pass it as torch.profiler.profile(on_trace_ready=...)."""
    return TraceHandler(dir_name, worker_name, use_gzip, save_report, on_analysis, ceilings)


def analyze_profiler(prof, ceilings=None):
    """Analyses a finished profiler (torch.profiler.profile or
    torch.autograd.profiler.profile) through its Chrome trace, written to a
    temporary file that is removed afterwards."""
    with tempfile.TemporaryDirectory(prefix="opscope-torch-") as tmp:
        path = os.path.join(tmp, "trace.pt.trace.json")
        prof.export_chrome_trace(path)
        return analyze(path, ceilings=ceilings, events=True)
