"""opscope for Python: analysis as pandas DataFrames, profiling scopes, a
torch.profiler hand-off.

    import opscope
    a = opscope.analyze("rank0.pt.trace.json.gz")
    a.ops.head()            # operators: self/total time (ns), count, p50/p99, FLOPs, bytes, bound
    a.findings              # rule, severity, evidence, action
    a.events(cls="kernel", start_ns=..., end_ns=...)
    a.save("report")        # analysis.html, analysis.json, summary.csv, tables/*.csv

    with opscope.Profiler(output_dir="traces") as prof:
        with opscope.scope("train_step"):
            ...

The same C++ library as the `opscope` command: the same importers, passes,
advisor and report files, and the same column names and units as
analysis.json.
"""

from . import _opscope
from ._analysis import Analysis, Diff, analyze, diff
from ._profiler import (Profiler, Schedule, counter, instant, is_recording, scope,
                        set_thread_name)
from .errors import (FailedPreconditionError, InternalError, InvalidArgumentError,
                     OpscopeError, OpscopeIOError, ResourceExhaustedError, TraceFormatError,
                     UnsupportedError, _from_native)

__version__ = _opscope.version
_opscope._set_error_factory(_from_native)

__all__ = [
    "Analysis", "Diff", "analyze", "diff",
    "Profiler", "Schedule", "scope", "instant", "counter", "is_recording", "set_thread_name",
    "OpscopeError", "TraceFormatError", "InvalidArgumentError", "OpscopeIOError",
    "UnsupportedError", "ResourceExhaustedError", "FailedPreconditionError", "InternalError",
]
