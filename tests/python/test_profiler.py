"""Profiling Python code: sessions, schedules, scopes (context manager and
decorator), instants and counters, checked by reading the written Chrome
traces with Python's json module."""
import gzip
import json
import threading

import pytest

import opscope


def events_of(path):
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "rt") as f:
        doc = json.load(f)
    return doc["traceEvents"] if isinstance(doc, dict) else doc


def test_scopes_without_a_session_record_nothing():
    assert not opscope.is_recording()
    with opscope.scope("idle"):
        pass

    @opscope.scope("decorated")
    def f(x):
        return x + 1

    assert f(1) == 2
    opscope.instant("nothing")
    opscope.counter("nothing", 1.0)


def test_schedule_records_the_active_steps(tmp_path):
    ready = []
    schedule = opscope.Schedule(wait=1, warmup=1, active=3, repeat=1)
    with opscope.Profiler(output_dir=tmp_path, schedule=schedule,
                          on_trace_ready=lambda p: ready.append(p.last_trace)) as prof:
        for step in range(8):
            with opscope.scope("work", shapes="[[4,4]]", dtype="fp32", flops=128, bytes=64,
                               module="layer1"):
                with opscope.scope("inner"):
                    pass
            opscope.counter("loss", 1.0 / (step + 1))
            opscope.instant(f"mark{step}")
            prof.step()
    assert len(prof.trace_files) == 1 and ready == prof.trace_files
    events = events_of(prof.trace_files[0])
    work = [e for e in events if e.get("name") == "work" and e.get("ph") == "X"]
    assert len(work) == 3  # steps 2, 3, 4: wait 1, warm-up 1, active 3
    assert work[0]["args"]["flops"] == 128 and work[0]["args"]["module"] == "layer1"
    assert len([e for e in events if e.get("name") == "inner"]) == 3
    for w in work:  # inner nests inside work on the same thread
        inner = [e for e in events if e.get("name") == "inner" and e["tid"] == w["tid"]
                 and w["ts"] <= e["ts"] <= w["ts"] + w["dur"]]
        assert len(inner) == 1
    assert len([e for e in events if e.get("ph") == "C" and e.get("name") == "loss"]) == 3
    assert len([e for e in events if e.get("ph") == "i" and
                str(e.get("name", "")).startswith("mark")]) == 3
    steps = [e for e in events if str(e.get("name", "")).startswith("ProfilerStep#")]
    assert len(steps) == 3
    # The analysis reads its own trace back.
    a = opscope.analyze(prof.trace_files[0])
    annotations = a.table("annotations").set_index("operator")
    assert annotations.loc["work", "count"] == 3


def test_decorator_and_threads(tmp_path):
    @opscope.scope("decorated", category="user_fn")
    def work(n):
        return sum(range(n))

    def thread_body():
        opscope.set_thread_name("helper")
        for _ in range(5):
            work(100)

    with opscope.Profiler(output_dir=tmp_path) as prof:
        assert opscope.is_recording()
        t = threading.Thread(target=thread_body)
        t.start()
        t.join()
        for _ in range(2):
            work(10)
    assert not opscope.is_recording()
    events = events_of(prof.trace_files[0])
    decorated = [e for e in events if e.get("name") == "decorated" and e.get("ph") == "X"]
    assert len(decorated) == 7
    assert {e["cat"] for e in decorated} == {"user_fn"}
    assert len({e["tid"] for e in decorated}) == 2
    assert work.__name__ == "work"


def test_a_scope_open_when_its_thread_ends_ends_there(tmp_path):
    """As the C API's scopes do (issue 51): a scope entered on a thread and
    never exited ends into the trace when the thread exits."""
    def thread_body():
        opscope.scope("left_open").__enter__()
        with opscope.scope("closed"):
            pass

    with opscope.Profiler(output_dir=tmp_path) as prof:
        t = threading.Thread(target=thread_body)
        t.start()
        t.join()
    events = events_of(prof.trace_files[0])
    names = [e.get("name") for e in events if e.get("ph") == "X"]
    assert names.count("closed") == 1
    assert names.count("left_open") == 1
    left = next(e for e in events if e.get("name") == "left_open")
    closed = next(e for e in events if e.get("name") == "closed")
    assert left["tid"] == closed["tid"] and left["ts"] <= closed["ts"]
    assert left["ts"] + left["dur"] >= closed["ts"] + closed["dur"]


def test_exception_inside_scope_still_ends_it(tmp_path):
    with opscope.Profiler(output_dir=tmp_path, gzip=True) as prof:
        with pytest.raises(KeyError):
            with opscope.scope("fails"):
                raise KeyError("x")
        with opscope.scope("after"):
            pass
    assert prof.trace_files[0].endswith(".gz")
    names = [e.get("name") for e in events_of(prof.trace_files[0]) if e.get("ph") == "X"]
    assert "fails" in names and "after" in names


def test_one_profiler_at_a_time(tmp_path):
    with opscope.Profiler(output_dir=tmp_path):
        with pytest.raises(opscope.FailedPreconditionError, match="already recording"):
            opscope.Profiler(output_dir=tmp_path).start()


def test_bad_arguments():
    with pytest.raises(TypeError):
        opscope.Profiler(schedule=(1, 2, 3))
    with pytest.raises(opscope.InvalidArgumentError):
        opscope.Profiler(schedule=opscope.Schedule(active=0))
    with pytest.raises(TypeError):
        opscope.scope("x", colour="red")
