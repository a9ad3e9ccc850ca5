"""opscope.analyze and opscope.diff: the CLI's analyses as pandas DataFrames."""

import importlib
import os
import threading

import numpy as np

from . import _opscope
from .errors import _path


class _Lazy:
    """A module imported on first use: `import opscope` stays quick, and
    analyze() imports pandas while the C++ side works (it holds no GIL)."""

    def __init__(self, name):
        self._name = name
        self._module = None

    def load(self):
        if self._module is None:
            self._module = importlib.import_module(self._name)
        return self._module

    def __getattr__(self, attr):
        return getattr(self.load(), attr)


pd = _Lazy("pandas")

# Tables by the name their section has in analysis.json.
_NAMED = {
    "ops": "operators",
    "ops_by_shape": "operators_by_shape",
    "modules": "modules",
    "kernels": "kernels",
    "steps": "steps",
    "gaps": "idle_gaps",
    "transfers": "transfers",
    "ranks": "ranks",
    "roofline": "roofline",
}


def _paths(paths):
    if isinstance(paths, (str, bytes, os.PathLike)):
        paths = [paths]
    return [os.fsdecode(_path(p, "analyze")) for p in paths]


def _frames(native_tables, ranks_by_trace=None):
    """{section: DataFrame}: a section's tables (one per trace) concatenated,
    with a `rank` column beside `trace` where the tables name traces."""
    parts = {}
    titles = {}
    notes = {}
    for section, title, table_notes, columns in native_tables:
        frame = pd.DataFrame(dict(columns), columns=[key for key, _ in columns])
        if ranks_by_trace and "trace" in frame.columns and "rank" not in frame.columns:
            frame.insert(frame.columns.get_loc("trace") + 1, "rank",
                         frame["trace"].map(ranks_by_trace).astype("Int64"))
        parts.setdefault(section, []).append(frame)
        titles.setdefault(section, title)
        notes.setdefault(section, [])
        notes[section].extend(n for n in table_notes if n not in notes[section])
    frames = {}
    for section, frames_of in parts.items():
        # Tables of one section may differ in columns (a section written per
        # kind of trace): concat keeps every column, absent values as NaN.
        frame = frames_of[0] if len(frames_of) == 1 else \
            pd.concat(frames_of, ignore_index=True, sort=False)
        frame.attrs["title"] = titles[section]
        frame.attrs["notes"] = notes[section]
        frames[section] = frame
    return frames


class Analysis:
    """What `opscope analyze` computes for a set of traces, as DataFrames.

    Column names and units are analysis.json's: times in ns (``self_ns``),
    sizes in bytes, rates in bytes/s and FLOP/s. Every table has every row
    (the CLI's report lists the top 20).
    """

    def __init__(self, native):
        self._native = native
        self.traces = pd.DataFrame(native.traces())
        self._ranks = dict(zip(self.traces["path"], self.traces["rank"])) \
            if len(self.traces) else {}
        self._tables = None
        self._strings = {}
        self._classes = None

    # --- tables ------------------------------------------------------------
    @property
    def tables(self):
        """Every table, {section: DataFrame}, in analysis.json's order."""
        if self._tables is None:
            self._tables = _frames(self._native.tables(), self._ranks)
        return self._tables

    def table(self, section):
        """One table by its section name; an empty DataFrame when the traces
        gave none (a CPU trace has no kernels)."""
        frame = self.tables.get(section)
        return frame if frame is not None else pd.DataFrame()

    @property
    def findings(self):
        """The advisor's findings: trace, rank, severity, rule, title, evidence, action."""
        return pd.DataFrame(self._native.findings(),
                            columns=["trace", "rank", "severity", "rule", "title", "evidence",
                                     "action"])

    def __getattr__(self, name):
        if name in _NAMED:
            frame = self.table(_NAMED[name])
            if name == "ops":
                frame = self._with_bound(frame)
            return frame
        raise AttributeError(name)

    def __dir__(self):
        return sorted(set(super().__dir__()) | set(_NAMED))

    def _with_bound(self, ops):
        """ops with the roofline's verdict (compute/memory) where it rates the operator."""
        roofline = self.table("roofline")
        if ops.empty or roofline.empty or "bound" not in roofline.columns:
            if not ops.empty and "bound" not in ops.columns:
                ops = ops.assign(bound=pd.Series([None] * len(ops), dtype=object))
            return ops
        bound = roofline.drop_duplicates(["trace", "operator"])[["trace", "operator", "bound"]]
        return ops.merge(bound, on=["trace", "operator"], how="left")

    # --- events ------------------------------------------------------------
    def events(self, start_ns=None, end_ns=None, cls=None, category=None, name=None, rank=None):
        """The traces' events as a DataFrame, filtered in C++ before anything
        reaches Python: those meeting [start_ns, end_ns) (ns on the trace's
        clock), of the classes `cls` ("kernel" or a list: host_op, kernel,
        memcpy, memset, runtime, sync, step, annotation, ...), with this
        `category` or `name` (exact), of these ranks (an int or a list).

        Numbers are numpy columns (views on the model when nothing is
        filtered); names, categories and classes are pandas Categoricals over
        the trace's interned strings, so no Python object is made per event.
        -1 in flops, bytes, correlation and external_id means unknown.
        """
        traces = range(len(self.traces))
        if rank is not None:
            wanted = {rank} if isinstance(rank, (int, np.integer)) else set(rank)
            traces = [i for i in traces if int(self.traces["rank"][i]) in wanted]
        if isinstance(cls, str):
            cls = [cls]
        frames = [self._events_of(i, start_ns, end_ns, cls, category, name) for i in traces]
        if not frames:
            return self._events_of(None, None, None, None, None, None)
        if len(frames) == 1:
            return frames[0]
        # Categories differ between traces: each string column over the union
        # of the traces' strings (codes remapped, no Python string per event).
        union = pd.api.types.union_categoricals
        data = {}
        for column in frames[0].columns:
            parts = [f[column] for f in frames]
            data[column] = union(parts) if column in _STRING_COLUMNS else \
                np.concatenate([p.to_numpy() for p in parts])
        return pd.DataFrame(data, copy=False)

    def _events_of(self, trace, start_ns, end_ns, cls, category, name):
        if self._classes is None:
            self._classes = pd.Index(_opscope.class_names())
        if trace is None:
            columns = {c: pd.Series([], dtype=t) for c, t in _EMPTY_EVENTS.items()}
            return pd.DataFrame(columns)
        native = self._native.events(trace, start_ns, end_ns, None if cls is None else list(cls),
                                     category, name)
        if trace not in self._strings:
            self._strings[trace] = pd.Index(self._native.strings(trace))
        strings = self._strings[trace]
        data = {"rank": np.full(len(native["start_ns"]), int(self.traces["rank"][trace]),
                                dtype=np.int32)}
        for key in ("start_ns", "duration_ns"):
            data[key] = native[key]
        data["name"] = _categorical(native["name"], strings)
        data["category"] = _categorical(native["category"], strings)
        data["cls"] = _categorical(native["cls"], self._classes)
        data["track"] = native["track"]
        for key in ("flops", "bytes", "correlation", "external_id"):
            data[key] = native[key]
        for key in ("module", "shapes", "dtype"):
            data[key] = _categorical(native[key], strings)
        for value in data.values():
            if isinstance(value, np.ndarray):
                value.flags.writeable = False
        return pd.DataFrame(data, copy=False)

    def tracks(self, rank=None):
        """Each trace's tracks (streams, threads): rank, track (the events'
        `track`), process, thread, pid, tid."""
        frames = []
        for i in range(len(self.traces)):
            r = int(self.traces["rank"][i])
            if rank is not None and r != rank:
                continue
            t = pd.DataFrame(self._native.tracks(i))
            t.insert(0, "track", np.arange(len(t), dtype=np.uint32))
            t.insert(0, "rank", r)
            frames.append(t)
        return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()

    # --- reports -----------------------------------------------------------
    def to_html(self):
        """analysis.html as one string: the CLI's self-contained page."""
        return self._native.html()

    def _repr_html_(self):
        return self._native.fragment_html()

    def save(self, directory):
        """Writes the CLI's files into `directory`: summary.csv, analysis.json,
        analysis.html and tables/*.csv. Returns the directory."""
        self._native.save(_path(directory, "save"))
        return directory

    def __repr__(self):
        n = len(self.traces)
        events = int(self.traces["events"].sum()) if n else 0
        return (f"<opscope.Analysis of {n} trace{'s' if n != 1 else ''}, {events} events, "
                f"{len(self.findings)} findings, tables: {', '.join(self.tables)}>")


def _categorical(codes, strings):
    """A Categorical of `codes` (ids into `strings`, -1 for none) whose
    categories are the strings the column uses, in the strings' order: a
    column's groupby lists its own values, not every string of the trace.
    One pass over the codes (bincount), no Python string per event."""
    codes = np.asarray(codes)
    valid = codes >= 0
    counts = np.bincount(codes[valid].astype(np.intp), minlength=len(strings))
    used = np.flatnonzero(counts)
    remap = np.full(len(strings) + 1, -1, dtype=np.int32)  # the last slot: -1 stays -1
    remap[used] = np.arange(len(used), dtype=np.int32)
    compact = remap[np.where(valid, codes, len(strings))]
    return pd.Categorical.from_codes(compact, strings[used])


_STRING_COLUMNS = ("name", "category", "cls", "module", "shapes", "dtype")
_EMPTY_EVENTS = {"rank": "int32", "start_ns": "int64", "duration_ns": "int64",
                 "name": "category", "category": "category", "cls": "category",
                 "track": "uint32", "flops": "int64", "bytes": "int64",
                 "correlation": "int64", "external_id": "int64", "module": "category",
                 "shapes": "category", "dtype": "category"}


def analyze(paths, ceilings=None, events=True):
    """Analyses traces as `opscope analyze` does: the same importers, passes
    and advisor. `paths`: a trace file, a folder of rank traces, an Ascend
    output tree, or a list of them. `ceilings`: a ceilings.json path from
    `opscope bench roofline`, or a dict {"bytes_per_s": ..., "flop_per_s":
    {"fp32": ...}, "device": ...}; else the datasheet figures of a device the
    trace names. `events=False` drops each trace's events once analysed
    (Analysis.events is then unavailable; peak memory stays that of one
    trace). Raises opscope.TraceFormatError and the other OpscopeErrors.
    """
    if ceilings is not None and not isinstance(ceilings, (dict, str, os.PathLike)):
        raise TypeError("ceilings: a path to ceilings.json or a dict")
    if isinstance(ceilings, (str, os.PathLike)):
        ceilings = _path(ceilings, "ceilings")
    paths = _paths(paths)
    if pd._module is not None:
        return Analysis(_opscope.analyze(paths, ceilings, bool(events)))
    # The first analysis of a process: pandas is imported while it runs.
    outcome = {}
    cancel = _opscope.CancelFlag()
    # An Event, not Thread.join: a join that Ctrl-C interrupted can return at
    # once the next time while the thread still runs (Python 3.11).
    finished = threading.Event()

    def work():
        try:
            outcome["native"] = _opscope.analyze(paths, ceilings, bool(events), cancel)
        except BaseException as e:  # re-raised in the caller's thread
            outcome["error"] = e
        finally:
            finished.set()

    worker = threading.Thread(target=work, name="opscope-analyze")
    worker.start()
    try:
        pd.load()
        finished.wait()
    except BaseException:  # Ctrl-C: the analysis stops at its next chunk or pass
        cancel.set()
        finished.wait()
        raise
    worker.join()
    if "error" in outcome:
        raise outcome["error"]
    return Analysis(outcome["native"])


class Diff:
    """What `opscope diff BEFORE AFTER` computes: the tables (summary and
    operators, or ranks for folders), each pair's statistics, the verdict and
    the gate."""

    def __init__(self, native):
        self.tables = _frames(native["tables"])
        self.comparisons = pd.DataFrame(native["diffs"])
        self.failed = bool(native["failed"])
        self.failure = native["failure"]

    @property
    def verdict(self):
        """The verdict of the first pair ("slower", "faster", "no change
        beyond noise", "noise unknown: ..."); see `comparisons` for every rank."""
        return self.comparisons["verdict"].iloc[0] if len(self.comparisons) else None

    @property
    def change_pct(self):
        return float(self.comparisons["change_pct"].iloc[0]) if len(self.comparisons) else None

    @property
    def summary(self):
        return self.tables.get("summary", pd.DataFrame())

    @property
    def operators(self):
        return self.tables.get("operators", pd.DataFrame())

    @property
    def framework_operators(self):
        """Framework operators matched by name, each side's device time: what
        compares one model on two devices or vendors."""
        return self.tables.get("framework_operators", pd.DataFrame())

    @property
    def framework_operators_by_shape(self):
        return self.tables.get("framework_operators_by_shape", pd.DataFrame())

    @property
    def devices_differ(self):
        """True when the two traces name different devices."""
        verdict = self.tables.get("verdict")
        return verdict is not None and len(verdict) > 0 and \
            "devices_differ" in verdict.columns and (verdict["devices_differ"] == "yes").any()

    def __repr__(self):
        return (f"<opscope.Diff {self.verdict!r}, change {self.change_pct:+.1f}%"
                f"{', gate failed' if self.failed else ''}>")


def diff(before, after, top=20, fail_if_slower=None):
    """Compares two traces (or folders of rank traces) as `opscope diff` does.
    With `fail_if_slower` (a percentage), `Diff.failed` tells whether the gate
    fails, `Diff.failure` why."""
    if fail_if_slower is not None:
        fail_if_slower = float(fail_if_slower)
    return Diff(_opscope.diff(_path(before, "diff"), _path(after, "diff"), int(top),
                              fail_if_slower))
