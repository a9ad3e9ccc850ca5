"""Profiling Python code: Profiler sessions, scopes, instants and counters.

A scope costs one native call on entry and one on exit when no session
records; with a session, its name and arguments are copied into the
session's buffer and written to the Chrome trace like the C++ API's scopes.
"""

import functools
import os
from dataclasses import dataclass

from . import _opscope
from .errors import _path

is_recording = _opscope.is_recording
instant = _opscope.instant
counter = _opscope.counter
set_thread_name = _opscope.set_thread_name


@dataclass(frozen=True)
class Schedule:
    """Which steps record, as torch.profiler.schedule: skip `skip_first`
    steps, then cycles of `wait` idle, `warmup` recording-and-discarding and
    `active` recorded steps, `repeat` cycles (0: until stopped). Each cycle
    writes one trace."""

    wait: int = 0
    warmup: int = 0
    active: int = 1
    repeat: int = 0
    skip_first: int = 0

    def _native(self):
        return (self.skip_first, self.wait, self.warmup, self.active, self.repeat)


class Profiler:
    """A recording session of this process's scopes, as a context manager:

        with opscope.Profiler(output_dir="traces", schedule=opscope.Schedule(
                wait=1, warmup=1, active=3)) as prof:
            for batch in data:
                train(batch)
                prof.step()

    Without a schedule it records from start to stop. Each recorded window is
    written to `output_dir` as a Chrome trace (`trace_files` lists them);
    `on_trace_ready(prof)` is called after each, with `prof.last_trace` its
    path (e.g. opscope.analyze it). One profiler records at a time in a
    process.
    """

    def __init__(self, output_dir=".", schedule=None, record_shapes=False, gzip=False,
                 max_buffer_bytes=0, worker_name="", on_trace_ready=None):
        if schedule is not None and not isinstance(schedule, Schedule):
            raise TypeError("schedule: an opscope.Schedule")
        if on_trace_ready is not None and not callable(on_trace_ready):
            raise TypeError("on_trace_ready: a callable taking the profiler")
        self._native = _opscope.NativeProfiler(
            _path(output_dir, "Profiler: output_dir"),
            None if schedule is None else schedule._native(),
            bool(record_shapes), bool(gzip), int(max_buffer_bytes), str(worker_name))
        self._on_trace_ready = on_trace_ready
        self._handled = 0
        self.last_trace = None

    def start(self):
        self._native.start()
        return self

    def step(self):
        """Ends the current step and begins the next (the schedule advances)."""
        self._native.step()
        self._hand_off()

    def stop(self):
        self._native.stop()
        self._hand_off()

    def _hand_off(self):
        files = self._native.trace_files
        while self._handled < len(files):
            self.last_trace = files[self._handled]
            self._handled += 1
            if self._on_trace_ready is not None:
                self._on_trace_ready(self)

    @property
    def trace_files(self):
        """The traces written so far, in order."""
        return list(self._native.trace_files)

    @property
    def step_num(self):
        return self._native.step_num

    @property
    def current_action(self):
        """"NONE", "WARMUP", "RECORD" or "RECORD_AND_SAVE": the schedule's state,
        named as torch.profiler.ProfilerAction names it."""
        return self._native.current_action

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()
        return False


class scope(_opscope.Scope):
    """A named span of this thread's time, recorded while a Profiler records:

        with opscope.scope("forward", module="encoder"):
            ...

        @opscope.scope("load_batch")
        def load_batch(): ...

    Keyword arguments are the trace's operator arguments: shapes (as
    "[[8,64,56,56]]"), dtype, flops, bytes, category (default
    "user_annotation"), layout and module. Scopes end in the order they began
    on the thread that began them (as `with` ensures).
    """

    def __call__(self, func):
        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            with self:
                return func(*args, **kwargs)

        return wrapper
