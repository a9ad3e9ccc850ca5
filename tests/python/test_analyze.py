"""opscope.analyze: the CLI's analyses as DataFrames, checked against figures
computed independently from the raw samples (tests/analyze/golden) and
against the CLI's own analysis.json on the same input."""
import json
import os
import shutil
import signal
import math
import sys
import subprocess
import time

import numpy as np
import pandas as pd
import pytest

import opscope

OP_TABLES = ("operators", "kernels", "host_calls", "annotations")


def all_ops(a):
    return pd.concat([a.table(s) for s in OP_TABLES if s in a.tables], ignore_index=True)


@pytest.mark.parametrize("sample,expected", [
    ("kineto/sampled_rank-0.json.gz", "sampled_rank-0.json"),
    ("torch-cpu/small_transformer_train_3steps_torch1.13.json",
     "torch_cpu_transformer_3steps.json"),
])
def test_operator_figures_match_independent_computation(data, golden, sample, expected):
    want = golden(expected)
    a = opscope.analyze(data / sample)
    assert a.traces["format"][0] == want["format"]
    assert a.traces["events"][0] == want["complete_events"]
    ops = all_ops(a).set_index("operator")
    assert set(want["operators"]) <= set(ops.index)
    for name, w in want["operators"].items():
        got = ops.loc[name]
        assert got["count"] == w["count"], name
        assert got["total_ns"] == w["total_ns"], name
        assert got["p50_ns"] == w["p50_ns"], name
        assert got["p99_ns"] == w["p99_ns"], name
        assert got["max_ns"] == w["max_ns"], name
        if "self_ns" in w:
            assert got["self_ns"] == w["self_ns"], name


def test_tables_have_every_row_and_analysis_json_names(data, cli, tmp_path):
    sample = data / "kineto/sampled_rank-0.json.gz"
    a = opscope.analyze(sample)
    out = subprocess.run([cli, "analyze", str(sample), "--top", "0", "--format", "json",
                          "--out", str(tmp_path / "r")], capture_output=True, text=True,
                         check=True, timeout=120)
    doc = json.loads(out.stdout)
    by_section = {}
    for r in doc["results"]:
        by_section.setdefault(r["section"], []).append(r)
    # Every table the JSON lists, empty ones too, is a DataFrame with its columns.
    assert {t["section"] for t in doc["tables"]} == set(a.tables)
    for t in doc["tables"]:
        if t["rows"] == 0:
            frame = a.table(t["section"])
            assert len(frame) == 0
            assert [c for c in frame.columns if c != "rank"] == [c["key"] for c in t["columns"]]
    for section, want in by_section.items():
        frame = a.table(section)
        assert len(frame) == len(want), section
        keys = [k for k in want[0] if k != "section"]
        assert [c for c in frame.columns if c != "rank"] == keys, section
        for i, w in enumerate(want):
            for k in keys:
                got = frame[k].iloc[i]
                if w[k] is None:
                    assert got is None or (isinstance(got, float) and math.isnan(got)) \
                        or got is pd.NA, (section, k)
                elif isinstance(w[k], (int, float)) and not isinstance(w[k], bool):
                    assert float(got) == pytest.approx(float(w[k]), rel=1e-12), (section, k)
                else:
                    assert got == w[k], (section, k)


def test_named_tables_and_units(data):
    a = opscope.analyze(data / "kineto/sampled_rank-0.json.gz")
    assert {"self_ns", "total_ns", "count", "p50_ns", "p99_ns", "flops", "bytes", "bound"} <= \
        set(a.ops.columns)
    assert a.ops["self_ns"].dtype == np.int64  # whole nanoseconds: integers
    assert not a.kernels.empty and (a.kernels["rank"] == 0).all()
    assert not a.steps.empty
    assert "cause" in a.gaps.columns or a.gaps.empty
    for name in ("transfers", "roofline"):
        assert isinstance(getattr(a, name), pd.DataFrame)
    f = a.findings
    assert list(f.columns) == ["trace", "rank", "severity", "rule", "title", "evidence",
                               "action"]
    assert len(f) >= 1 and f["evidence"].str.len().min() > 0
    with pytest.raises(AttributeError):
        a.no_such_table


def test_operators_carry_their_device_time(data):
    """a.ops, a.ops_by_shape and a.modules against op_device_expected.py, the
    independent computation over the raw JSON (tests/analyze)."""
    sys.path.insert(0, str(data.parent / "analyze"))
    import op_device_expected
    path = data / "kineto/h100_Qwen1.5-0.5B-Chat.json.gz"
    want = op_device_expected.expected(str(path))
    a = opscope.analyze(path)
    ops = a.ops.set_index("operator")
    for name, w in want["operators"].items():
        assert ops.loc[name, "device_self_ns"] == w["device_self_ns"], name
        assert ops.loc[name, "device_total_ns"] == w["device_total_ns"], name
        assert ops.loc[name, "kernels"] == w["kernels"], name
    # Ranked by device self time where the trace has device work.
    assert list(a.ops["device_self_ns"]) == sorted(a.ops["device_self_ns"], reverse=True)
    # Per input shapes, the rows of a name add up to the name's row.
    by_shape = a.ops_by_shape.groupby("operator")["device_self_ns"].sum()
    for name, ns in by_shape.items():
        assert ns == ops.loc[name, "device_self_ns"], name
    assert a.ops_by_shape["input_shapes"].str.startswith("[").all()
    modules = a.modules.set_index("module")
    for path_, w in want["modules"].items():
        assert modules.loc[path_, "device_total_ns"] == w["device_total_ns"], path_
    # A CPU-only trace has no device figures: not applicable, not zero.
    cpu = opscope.analyze(data / "kineto/cpu_only.pt.trace.json.gz")
    assert cpu.ops["device_self_ns"].isna().all()


def test_diff_of_two_vendors_compares_framework_operators(data):
    d = opscope.diff(data / "kineto/h100_Qwen1.5-0.5B-Chat.json.gz",
                     data / "kineto/mi300_Qwen1.5-0.5B-Chat.json.gz", top=0)
    assert d.devices_differ
    ops = d.framework_operators.set_index("operator")
    a = opscope.analyze(data / "kineto/h100_Qwen1.5-0.5B-Chat.json.gz").ops.set_index("operator")
    assert ops.loc["aten::mm", "before_device_ns"] == a.loc["aten::mm", "device_self_ns"]
    assert not d.framework_operators_by_shape.empty


def test_events_columnar_and_filtered(data):
    raw = json.loads(open(data / "torch-cpu/small_cnn_train_3steps_torch1.13.json").read())
    raw = raw["traceEvents"] if isinstance(raw, dict) else raw
    complete = [e for e in raw if e.get("ph") == "X"]
    a = opscope.analyze(data / "torch-cpu/small_cnn_train_3steps_torch1.13.json")
    ev = a.events()
    assert len(ev) == len(complete)
    # Views on the model: read-only, no per-event Python objects for strings.
    assert not ev["start_ns"].values.flags.writeable
    assert isinstance(ev["name"].dtype, pd.CategoricalDtype)
    # Total time per name equals the raw file's (us -> ns).
    want = {}
    for e in complete:
        want[e["name"]] = want.get(e["name"], 0) + round(float(e["dur"]) * 1000)
    got = ev.groupby("name", observed=True)["duration_ns"].sum().to_dict()
    assert got == want
    # A window: events meeting [t0, t1), computed here from the raw file.
    t0 = min(round(float(e["ts"]) * 1000) for e in complete)
    lo, hi = t0 + 2_000_000, t0 + 5_000_000
    expect = sum(1 for e in complete
                 if round(float(e["ts"]) * 1000) < hi
                 and round(float(e["ts"]) * 1000) + round(float(e["dur"]) * 1000) >= lo)
    base = int(ev["start_ns"].min()) - t0  # the model's clock may be shifted
    window = a.events(start_ns=lo + base, end_ns=hi + base)
    assert len(window) == expect
    mm = a.events(name="aten::mm")
    assert len(mm) == sum(1 for e in complete if e["name"] == "aten::mm")
    assert set(a.events(cls=["host_op"])["cls"].unique()) == {"host_op"}
    with pytest.raises(opscope.InvalidArgumentError, match="unknown event class"):
        a.events(cls="kernels")
    assert len(a.events(name="no such operator")) == 0


def test_each_string_column_has_its_own_categories(data):
    raw = json.loads(open(data / "torch-cpu/small_cnn_train_3steps_torch1.13.json").read())
    raw = raw["traceEvents"] if isinstance(raw, dict) else raw
    complete = [e for e in raw if e.get("ph") == "X"]
    ev = opscope.analyze(data / "torch-cpu/small_cnn_train_3steps_torch1.13.json").events()
    # groupby with pandas' default (observed=False) lists a column's own values.
    names = {e["name"] for e in complete}
    assert set(ev["name"].cat.categories) == names
    assert len(ev.groupby("name", observed=False).size()) == len(names)
    categories = {e.get("cat", "") for e in complete}
    assert set(ev["category"].cat.categories) == categories
    assert set(ev["cls"].cat.categories) == set(ev["cls"].astype(str).unique())
    mm = opscope.analyze(data / "torch-cpu/small_cnn_train_3steps_torch1.13.json").events(
        name="aten::mm")
    assert list(mm["name"].cat.categories) == ["aten::mm"]


def test_events_of_several_ranks(data):
    a = opscope.analyze([data / "kineto/sampled_rank-0.json.gz",
                         data / "kineto/sampled_rank-1.json.gz"])
    assert sorted(a.traces["rank"]) == [0, 1]
    both = a.events(cls="kernel")
    one = a.events(cls="kernel", rank=1)
    assert 0 < len(one) < len(both)
    assert set(both["rank"].unique()) == {0, 1}
    assert (one["rank"] == 1).all()
    # Names stay categorical across ranks, and each rank's names are its own.
    assert isinstance(both["name"].dtype, pd.CategoricalDtype)
    zero = a.events(cls="kernel", rank=0)
    per_rank = zero["name"].astype(str).value_counts().add(
        one["name"].astype(str).value_counts(), fill_value=0)
    assert both["name"].astype(str).value_counts().sort_index().tolist() == \
        per_rank.sort_index().astype(int).tolist()
    assert int(both["duration_ns"].sum()) == int(zero["duration_ns"].sum()) + \
        int(one["duration_ns"].sum())
    assert set(a.steps["rank"].unique()) == {0, 1}
    assert not a.ranks.empty
    tracks = a.tracks(rank=1)
    assert (tracks["rank"] == 1).all() and one["track"].max() < len(tracks)


def test_events_dropped_on_request(data):
    a = opscope.analyze(data / "kineto/sampled_rank-0.json.gz", events=False)
    assert not a.ops.empty
    with pytest.raises(opscope.FailedPreconditionError, match="events=False"):
        a.events()


def test_ceilings_given_as_dict(data):
    # Measured ceilings apply to the device they were measured on (the trace names it).
    a = opscope.analyze(data / "kineto/mi250_rocm_train.json.gz",
                        ceilings={"device": "AMD Radeon Graphics", "source": "a dict in the test",
                                  "bytes_per_s": 1e12, "flop_per_s": {"fp32": 10e12,
                                                                      "bf16": 10e12}})
    r = a.roofline
    assert not r.empty and "a dict in the test" in r.attrs["title"]
    # The ridge of these ceilings is 10 FLOP/byte: below it memory-bound.
    rated = r[r["bound"].notna() & r["intensity"].notna()]
    assert len(rated) > 0
    for _, row in rated.iterrows():
        assert row["bound"] == ("memory" if row["intensity"] < 10 else "compute"), row
    other = opscope.analyze(data / "kineto/mi250_rocm_train.json.gz",
                            ceilings={"device": "another device", "bytes_per_s": 1e12})
    assert "not used" in other.roofline.attrs["title"]
    with pytest.raises(opscope.InvalidArgumentError, match="flop_per_s"):
        opscope.analyze(data / "kineto/sampled_rank-0.json.gz",
                        ceilings={"flop_per_s": {"fp32": -1}})


def test_save_writes_the_cli_files(data, tmp_path):
    a = opscope.analyze(data / "kineto/sampled_rank-0.json.gz")
    out = a.save(tmp_path / "report")
    names = {p.name for p in (tmp_path / "report").iterdir()}
    assert {"analysis.json", "analysis.html", "summary.csv", "tables"} <= names
    doc = json.loads((tmp_path / "report/analysis.json").read_text())
    assert doc["schema_version"] >= 2
    assert out == tmp_path / "report"
    html = a.to_html()
    assert html.startswith("<!DOCTYPE html>") and 'class="timeline"' in html
    fragment = a._repr_html_()
    assert "<script" not in fragment and "<svg" in fragment
    assert "opscope-report" in fragment


def test_repr_html_escapes_trace_strings(tmp_path):
    trace = tmp_path / "evil.json"
    name = "<script>alert(1)</script>"
    events = [{"name": "ProfilerStep#1", "ph": "X", "ts": 0, "dur": 100, "pid": 1, "tid": 1},
              {"name": name, "ph": "X", "ts": 10, "dur": 50, "pid": 1, "tid": 1,
               "cat": "cpu_op"}]
    trace.write_text(json.dumps({"traceEvents": events}))
    a = opscope.analyze(trace)
    assert name not in a._repr_html_() and name not in a.to_html()
    assert (a.ops["operator"] == name).any()  # the DataFrame has the raw string


def test_errors_are_exceptions_with_file_and_offset(tmp_path):
    bad = tmp_path / "broken.json"
    bad.write_text('{"traceEvents": [{"name": "a", "ph": "X", "ts": 1, "dur": 2}, {"name": ')
    with pytest.raises(opscope.TraceFormatError) as e:
        opscope.analyze(bad)
    assert e.value.path == str(bad)
    assert isinstance(e.value.offset, int) and e.value.offset > 0
    assert isinstance(e.value, ValueError) and isinstance(e.value, opscope.OpscopeError)
    with pytest.raises(opscope.OpscopeIOError) as e:
        opscope.analyze(tmp_path / "missing.json")
    assert isinstance(e.value, OSError)
    with pytest.raises(opscope.InvalidArgumentError):
        opscope.analyze([])
    with pytest.raises(TypeError):
        opscope.analyze(tmp_path / "x.json", ceilings=3)


def test_a_path_holding_a_nul_byte_is_refused(data, tmp_path):
    # The system reads a name only up to a NUL byte: 'x.json\0.gz' would open
    # x.json, another file than the one asked for (issue 39). A real file is
    # named by the part before the NUL, so a truncated read would succeed.
    real = tmp_path / "trace.json.gz"
    shutil.copy(data / "kineto/sampled_rank-0.json.gz", real)
    holding = str(real) + "\0.unused"
    for call, what in ((lambda: opscope.analyze(holding), "analyze"),
                       (lambda: opscope.analyze([os.fsencode(holding)]), "analyze"),
                       (lambda: opscope.diff(holding, real), "diff"),
                       (lambda: opscope.diff(real, holding), "diff"),
                       (lambda: opscope.analyze(real, ceilings=holding), "ceilings"),
                       (lambda: opscope.Profiler(str(tmp_path) + "\0more"), "output_dir")):
        with pytest.raises(opscope.InvalidArgumentError, match=what + ".*NUL byte at") as e:
            call()
        assert isinstance(e.value, ValueError)
    a = opscope.analyze(real)
    with pytest.raises(opscope.InvalidArgumentError, match="save: .*NUL byte at"):
        a.save(str(tmp_path / "report") + "\0x")
    assert not (tmp_path / "report").exists()


def _write_cpu_trace(path, events):
    """A Chrome trace of `events` complete CPU operators on four threads,
    written without json.dumps (fast enough for millions)."""
    with open(path, "w") as f:
        f.write('{"traceEvents": [')
        for block in range(0, events, 100000):
            f.write(("," if block else "") + ",".join(
                f'{{"ph":"X","cat":"cpu_op","name":"aten::op{j % 37}","pid":1,"tid":{j % 4},'
                f'"ts":{j * 2},"dur":1}}' for j in range(block, min(events, block + 100000))))
        f.write("]}")


def test_a_cancelled_analysis_raises_keyboard_interrupt(tmp_path):
    # The flag the package sets on Ctrl-C while the first analyze() of a
    # process runs beside pandas' import: the native analysis stops at its
    # first cancellation point (a chunk read) and raises KeyboardInterrupt.
    path = tmp_path / "trace.json"
    _write_cpu_trace(path, 1000)
    flag = opscope._opscope.CancelFlag()
    flag.set()
    with pytest.raises(KeyboardInterrupt):
        opscope._opscope.analyze([str(path)], None, True, flag)
    assert len(opscope._opscope.analyze([str(path)], None, True, opscope._opscope.CancelFlag())
               .traces()) == 1


@pytest.mark.parametrize("first", [True, False])
def test_ctrl_c_stops_an_analysis_at_once(tmp_path, first):
    # Issue 39: Ctrl-C during analyze() of millions of events waited for the
    # whole analysis (2.3 s on 10 million). Now it stops at the next chunk
    # read or pass: SIGINT 0.3 s into the analysis, KeyboardInterrupt within
    # 1.5 s (room for a pass on a loaded machine; 0.06-0.2 s here). `first`:
    # the process's first analyze(), which runs beside pandas' import in a
    # thread of its own.
    path = tmp_path / "big.json"
    _write_cpu_trace(path, 2000000)
    code = f"""
import sys, time, opscope
{"" if first else "opscope.analyze(sys.argv[2])"}
print("ready", flush=True)
began = time.monotonic()
try:
    opscope.analyze(sys.argv[1])
    print("finished", time.monotonic() - began, flush=True)
except KeyboardInterrupt:
    print("interrupted", flush=True)
"""
    small = tmp_path / "small.json"
    _write_cpu_trace(small, 100)
    child = subprocess.Popen([sys.executable, "-c", code, str(path), str(small)],
                             stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout.readline().strip() == "ready"
        time.sleep(0.3)
        sent = time.monotonic()
        child.send_signal(signal.SIGINT)
        said = child.stdout.read().strip()
        child.wait(timeout=30)
        took = time.monotonic() - sent
    finally:
        child.kill()
        child.wait()
    if said.startswith("finished"):
        pytest.skip(f"the analysis ended before the signal came ({said}): a faster machine")
    assert said == "interrupted" and child.returncode == 0
    assert took < 1.5, f"Ctrl-C took {took:.2f} s to stop the analysis"


def test_csv_errors_name_the_line(tmp_path):
    folder = tmp_path / "ASCEND_PROFILER_OUTPUT"
    folder.mkdir()
    (folder / "kernel_details.csv").write_text(
        "Step Id,Name,Type,Accelerator Core,Start Time(us),Duration(us),Wait Time(us)\n"
        "1,MatMul,MatMul,AI_CORE,100.0,not-a-number,0\n")
    with pytest.raises(opscope.TraceFormatError) as e:
        opscope.analyze(folder / "kernel_details.csv")
    assert e.value.line == 2 and e.value.path.endswith("kernel_details.csv")


def test_diff_matches_cli(data, cli):
    before = data / "torch-cpu/small_cnn_train_3steps_torch1.13.json"
    after = data / "torch-cpu/small_transformer_train_3steps_torch1.13.json"
    d = opscope.diff(before, after)
    out = subprocess.run([cli, "diff", str(before), str(after), "--format", "json"],
                         capture_output=True, text=True, timeout=120)
    rows = json.loads(out.stdout)["results"]
    summary = [r for r in rows if r["section"] == "summary"]
    assert len(d.summary) == len(summary)
    assert d.summary["metric"].tolist() == [r["metric"] for r in summary]
    assert d.summary["before"].tolist() == pytest.approx([r["before"] for r in summary])
    ops = [r for r in rows if r["section"] == "operators"]
    assert d.operators["operator"].tolist() == [r["operator"] for r in ops]
    assert d.verdict in ("slower", "faster", "no change beyond noise") or \
        d.verdict.startswith("noise unknown")
    gated = opscope.diff(before, after, fail_if_slower=0)
    cli_gate = subprocess.run([cli, "diff", str(before), str(after), "--fail-if-slower", "0"],
                              capture_output=True, text=True, timeout=120)
    assert gated.failed == (cli_gate.returncode == 7)
    with pytest.raises(opscope.InvalidArgumentError):
        opscope.diff(before, after, fail_if_slower=-1)


def test_empty_tables_keep_their_columns(data, tmp_path):
    # A CPU-only trace: no kernels, no transfers. The tables are there, empty,
    # with the columns a trace with device work gets (checked against one).
    cpu = opscope.analyze(data / "torch-cpu/small_cnn_train_3steps_torch1.13.json")
    gpu = opscope.analyze(data / "kineto/sampled_rank-0.json.gz")
    for name in ("kernels", "transfers"):
        empty, full = getattr(cpu, name), getattr(gpu, name)
        assert len(empty) == 0 and len(full) > 0, name
        assert list(empty.columns) == list(full.columns), name
    assert cpu.kernels["operator"].tolist() == []  # no KeyError
    cpu.save(tmp_path / "report")
    doc = json.loads((tmp_path / "report" / "analysis.json").read_text())
    listed = {t["section"]: t for t in doc["tables"]}
    assert listed["transfers"]["rows"] == 0
    assert [c["key"] for c in listed["transfers"]["columns"]] == list(gpu.transfers.columns.drop(
        "rank", errors="ignore"))
    frame = pd.read_csv(tmp_path / "report" / "tables" / "transfers.csv")
    assert len(frame) == 0 and list(frame.columns) == [c["key"] for c in listed["transfers"]["columns"]]
