#!/usr/bin/env python3
"""Issue "Ascend, whole", done-when: one job in three forms, each analysed with
one command, against an independent computation with Python's csv, json and
sqlite3 modules.

1. text: a two-rank folder of torch_npu `*_ascend_pt` trees, each a copy of
   the real level-1 sample (tests/data/ascend/level1_text: every file of
   ASCEND_PROFILER_OUTPUT the sample has), rank 1 late to every collective and
   its link 1-5 slow (communication_test.build plants both).
2. db: the same job as SQLite exports (db_test.build_twin per rank:
   ascend_pytorch_profiler_{rank}.db and analysis.db to the documented schema).
3. msprof: the same job as two native `PROF_*` runs, one per rank
   (device_0/info.json.0 carries rank_id), their mindstudio_profiler_output
   files converted from the rank's torch_npu files as docs/formats/ascend.md 3.2, 3.10 and
   5.2 document (op_summary: kernel_details' renamed columns, Device_id first;
   op_statistic, api_statistic, npu_module_mem (KB), l2_cache with Device_id;
   task_time and communication_statistic from the same tasks; operator_memory
   with totals in KB and Duration(us) for the release time, memory_record with
   GE's rows in KB) and two files
   no sample has, built to their documented headers: npu_mem (from the APP
   rows of memory_record.csv) and step_trace (graph-mode iterations, three
   made-up rows). analyze/ holds the two communication files.

Checked: two ranks in each form; rank 1 is the one waited for and 1-5 the one
slow link in each; the same kernels, AI Core pipeline, steps, communication and
links from all three forms; every summary table equal to the raw files' rows
(op_statistic, api_statistic, operator_details summed per operator, module
memory peaks, communication_statistic, npu_mem peaks, step_trace; msprof's
operator_memory and memory_record: the blocks live at the peak and GE's peak
reserved, from the torch_npu files they were made from); online
compilation found from api_statistic.csv's aclopCompile* rows.

    job_test.py OPSCOPE DATA_DIR
"""
import collections
import csv
import decimal
import json
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import communication_test  # noqa: E402
import db_test  # noqa: E402

TS = "20260101000000"
RENAMED = {"Name": "Op Name", "Type": "OP Type", "Accelerator Core": "Task Type",
           "Start Time(us)": "Task Start Time(us)", "Duration(us)": "Task Duration(us)",
           "Wait Time(us)": "Task Wait Time(us)"}
KERNEL_TYPES = {"AI_CORE": "KERNEL_AICORE", "AI_VECTOR_CORE": "KERNEL_AIVEC",
                "AI_CPU": "KERNEL_AICPU", "MIX_AIC": "KERNEL_MIX_AIC", "MIX_AIV": "KERNEL_MIX_AIV"}
ITERATIONS = [("1", "120000.5", "90000.25", "1000", "N/A"),
              ("2", "118000", "89000", "1200.5", "350.75"),
              ("3", "119500.125", "89500", "900", "2500")]


def ns(text):
    text = str(text).strip().strip("\t")
    return int((decimal.Decimal(text) * 1000).to_integral_value(decimal.ROUND_HALF_UP))


def rows(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def write_csv(path, header, records):
    with open(path, "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(header)
        w.writerows(records)


def rank_output(root, rank):
    return os.path.join(root, "host", "h_%d_20260101000000000_ascend_pt" % rank,
                        "ASCEND_PROFILER_OUTPUT")


def build_db(text_root, db_root):
    for rank in (0, 1):
        text_out = rank_output(text_root, rank)
        db_out = rank_output(db_root, rank)
        os.makedirs(db_out)
        shutil.copy(os.path.join(os.path.dirname(text_out), "profiler_info_%d.json" % rank),
                    os.path.dirname(db_out))
        db_test.build_twin(text_out, db_out)
        os.rename(os.path.join(db_out, "ascend_pytorch_profiler_0.db"),
                  os.path.join(db_out, "ascend_pytorch_profiler_%d.db" % rank))


def with_device(path, out):
    """A torch_npu copy of a CANN summary with msprof's Device_id column first."""
    with open(path, newline="") as f:
        r = list(csv.reader(f))
    write_csv(out, ["Device_id"] + r[0], [["0"] + x for x in r[1:] if x])


# Each run's chip as msprof's info.json records it (docs/formats/ascend.md 1.4), one with
# strings and one with numbers: the roofline's peaks follow from them.
CHIPS = {0: {"id": 0, "ai_core_num": 24, "aiv_num": 48, "aic_frequency": "1800"},
         1: {"id": 0, "ai_core_num": 20, "aiv_num": 40, "aic_frequency": 1650}}


def build_msprof(text_root, msprof_root):
    for rank in (0, 1):
        text_out = rank_output(text_root, rank)
        prof = os.path.join(msprof_root, "PROF_00000%d_%s000_ABCDEFGH%d" % (rank, TS, rank))
        out = os.path.join(prof, "mindstudio_profiler_output")
        os.makedirs(out)
        os.makedirs(os.path.join(prof, "device_0"))
        with open(os.path.join(prof, "device_0", "info.json.0"), "w") as f:
            json.dump({"rank_id": rank, "devices": "0", "DeviceInfo": [CHIPS[rank]]}, f)
        os.makedirs(os.path.join(prof, "analyze"))
        for name in ("communication.json", "communication_matrix.json"):
            shutil.copy(os.path.join(text_out, name), os.path.join(prof, "analyze", name))
        # op_summary: kernel_details without Step Id, its first columns renamed back.
        with open(os.path.join(text_out, "kernel_details.csv"), newline="") as f:
            r = list(csv.reader(f))
        header = r[0]
        keep = [i for i, c in enumerate(header) if c != "Step Id"]
        write_csv(os.path.join(out, "op_summary_%s.csv" % TS),
                  ["Device_id"] + [RENAMED.get(header[i], header[i]) for i in keep],
                  [["0"] + [x[i] for i in keep] for x in r[1:] if x])
        kd = rows(os.path.join(text_out, "kernel_details.csv"))
        tasks, comm = [], collections.OrderedDict()
        for x in kd:
            start, dur = ns(x["Start Time(us)"]), ns(x["Duration(us)"])
            core = x["Accelerator Core"]
            if core in ("HCCL", "COMMUNICATION"):
                c = comm.setdefault(x["Type"], [])
                c.append(dur)
                continue
            tasks.append(["0", x["Name"], KERNEL_TYPES.get(core, core), x["Stream ID"],
                          x["Task ID"], x["Duration(us)"], x["Start Time(us)"],
                          "%.3f\t" % ((start + dur) / 1000)])
        # Two tasks that are not kernels (N/A names), as msprof lists them too.
        last = max(ns(x["Start Time(us)"]) + ns(x["Duration(us)"]) for x in kd)
        tasks += [["0", "N/A", "EVENT_RECORD", "2", "1", "1.5", "%.3f\t" % (last / 1e3 + 10),
                   "%.3f\t" % (last / 1e3 + 11.5)],
                  ["0", "N/A", "MEMCPY_ASYNC", "2", "2", "20.25", "%.3f\t" % (last / 1e3 + 20),
                   "%.3f\t" % (last / 1e3 + 40.25)]]
        write_csv(os.path.join(out, "task_time_%s.csv" % TS),
                  ["Device_id", "kernel_name", "kernel_type", "stream_id", "task_id",
                   "task_time(us)", "task_start(us)", "task_stop(us)"], tasks)
        total = sum(sum(v) for v in comm.values())
        write_csv(os.path.join(out, "communication_statistic_%s.csv" % TS),
                  ["Device_id", "OP Type", "Count", "Total Time(us)", "Min Time(us)",
                   "Avg Time(us)", "Max Time(us)", "Ratio(%)"],
                  [["0", t, len(v), "%.3f" % (sum(v) / 1e3), "%.3f" % (min(v) / 1e3),
                    "%.3f" % (sum(v) / len(v) / 1e3), "%.3f" % (max(v) / 1e3),
                    "%.3f" % (100.0 * sum(v) / total)] for t, v in comm.items()])
        for name, module in (("op_statistic.csv", "op_statistic"),
                             ("api_statistic.csv", "api_statistic"),
                             ("l2_cache.csv", "l2_cache")):
            with_device(os.path.join(text_out, name), os.path.join(out, "%s_%s.csv" % (module, TS)))
        mods = rows(os.path.join(text_out, "npu_module_mem.csv"))
        write_csv(os.path.join(out, "npu_module_mem_%s.csv" % TS),
                  ["Device_id", "Component", "Timestamp(us)", "Total Reserved(KB)", "Device"],
                  [["0", m["Component"], m["Timestamp(us)"],
                    repr(float(m["Total Reserved(MB)"]) * 1024), m["Device"]] for m in mods])
        app = [m for m in rows(os.path.join(text_out, "memory_record.csv"))
               if m["Component"] == "APP"]
        write_csv(os.path.join(out, "npu_mem_%s.csv" % TS),
                  ["Device_id", "event", "ddr(KB)", "hbm(KB)", "memory(KB)", "timestamp(us)"],
                  [["0", "app", "0", repr(float(m["Total Reserved(MB)"]) * 1024),
                    repr(float(m["Total Reserved(MB)"]) * 1024), m["Timestamp(us)"]]
                   for m in app])
        # operator_memory and memory_record as msprof writes them (docs/formats/ascend.md 5.2):
        # totals in KB, a block's Duration(us) instead of its release time, and
        # memory_record with GE's rows only.
        def kb(mb):
            mb = mb.strip()
            return str(decimal.Decimal(mb) * 1024) if mb else ""
        blocks = []
        for m in rows(os.path.join(text_out, "operator_memory.csv")):
            alloc, release = m["Allocation Time(us)"].strip(), m["Release Time(us)"].strip()
            held = str(decimal.Decimal(release) - decimal.Decimal(alloc)) if release else ""
            blocks.append(["0", m["Name"], m["Size(KB)"], m["Allocation Time(us)"], held,
                           kb(m["Allocation Total Allocated(MB)"]),
                           kb(m["Allocation Total Reserved(MB)"]),
                           kb(m["Release Total Allocated(MB)"]),
                           kb(m["Release Total Reserved(MB)"]), "0"])
        write_csv(os.path.join(out, "operator_memory_%s.csv" % TS),
                  ["Device_id", "Name", "Size(KB)", "Allocation Time(us)", "Duration(us)",
                   "Allocation Total Allocated(KB)", "Allocation Total Reserved(KB)",
                   "Release Total Allocated(KB)", "Release Total Reserved(KB)", "Device"], blocks)
        write_csv(os.path.join(out, "memory_record_%s.csv" % TS),
                  ["Device_id", "Component", "Timestamp(us)", "Total Allocated(KB)",
                   "Total Reserved(KB)", "Device"],
                  [["0", m["Component"], m["Timestamp(us)"], kb(m["Total Allocated(MB)"]),
                    kb(m["Total Reserved(MB)"]), "0"]
                   for m in rows(os.path.join(text_out, "memory_record.csv"))
                   if m["Component"] == "GE"])
        write_csv(os.path.join(out, "step_trace_%s.csv" % TS),
                  ["Device_id", "Iteration ID", "FP Start(us)", "BP End(us)", "Iteration End(us)",
                   "Iteration Time(us)", "FP to BP Time(us)", "Iteration Refresh(us)",
                   "Data Aug Bound(us)", "Model ID"],
                  [["0", i, "N/A", "N/A", "N/A", t, fb, ref, aug, "1"]
                   for i, t, fb, ref, aug in ITERATIONS])


def analyze(opscope, tree, out):
    proc = subprocess.run([opscope, "analyze", tree, "--top", "0", "--format", "json", "--out",
                           out], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if proc.returncode != 0:
        raise SystemExit("opscope analyze %s: exit %d: %s" % (tree, proc.returncode, proc.stderr))
    with open(os.path.join(out, "analysis.json")) as f:
        return json.load(f)["results"]


def section(results, name, rank=None):
    """A table's rows; of one rank: by its rank column, or by its trace column
    (per-trace tables), the rank's trace taken from the communication table."""
    traces = {r["rank"]: r["trace"] for r in results if r.get("section") == "reported_communication"}
    return [r for r in results if r.get("section") == name and
            (rank is None or r.get("rank") == rank or
             ("rank" not in r and r.get("trace") == traces.get(rank)))]


def close(a, b):
    # Base units (ns, bytes) come as integers when whole: compare numbers by value.
    if isinstance(a, (int, float)) and isinstance(b, (int, float)) and \
            not isinstance(a, bool) and not isinstance(b, bool):
        return a is not None and b is not None and abs(a - b) <= 1e-6 * max(1, abs(a))
    return a == b


def check_cluster(name, results, failures):
    ranks = sorted(r["rank"] for r in section(results, "reported_communication"))
    if ranks != [0, 1]:
        failures.append("%s: ranks %s, expected [0, 1]" % (name, ranks))
    late = [r for r in section(results, "reported_communication") if r["arrived_last"] > 0]
    if [r["rank"] for r in late] != [1]:
        failures.append("%s: the rank waited for: %s, expected rank 1" % (name, late))
    slow = [(r["rank"], r["src"], r["dst"]) for r in section(results, "reported_links")
            if r["slow"] == "yes"]
    if slow != [(1, 1, 5)]:
        failures.append("%s: slow links %s, expected rank 1's 1-5" % (name, slow))


def compare(name, a, b, sections, failures):
    for sec, (key, fields) in sections.items():
        for rank in (0, 1):
            x = {tuple(r[k] for k in key): r for r in section(a, sec, rank)}
            y = {tuple(r[k] for k in key): r for r in section(b, sec, rank)}
            if not x:
                failures.append("%s: no %s rows for rank %d" % (name, sec, rank))
            if set(x) != set(y):
                failures.append("%s: %s rows of rank %d differ: %s" %
                                (name, sec, rank, sorted(set(x) ^ set(y))[:4]))
                continue
            for k in x:
                for field in fields:
                    if not close(x[k][field], y[k][field]):
                        failures.append("%s: %s rank %d %s %s: %r against %r" %
                                        (name, sec, rank, k, field, x[k][field], y[k][field]))


def check_summaries(name, results, text_out, failures, msprof_out=None):
    """Every summary table against the raw files, for rank 0 and 1."""
    for rank in (0, 1):
        ops = rows(os.path.join(text_out[rank], "op_statistic.csv"))
        got = section(results, "reported_op_types", rank)
        want = [(o["OP Type"], o["Core Type"], int(o["Count"]), ns(o["Total Time(us)"]) / 1e6)
                for o in ops]
        have = [(r["op_type"], r["core_type"], r["count"], r["total_ns"] / 1e6) for r in got]
        if [w[:3] for w in want] != [h[:3] for h in have] or not all(
                close(w[3], h[3]) for w, h in zip(want, have)):
            failures.append("%s: rank %d op types %s, expected %s" % (name, rank, have[:3],
                                                                      want[:3]))
        apis = rows(os.path.join(text_out[rank], "api_statistic.csv"))
        got = {(r["level"], r["api"]): r for r in section(results, "reported_apis", rank)}
        for a in apis:
            g = got.get((a["Level"], a["API Name"]))
            if g is None or g["calls"] != int(a["Count"]) or not close(
                    g["total_ns"] / 1e6, ns(a["Time(us)"]) / 1e6):
                failures.append("%s: rank %d API %s: %s" % (name, rank, a["API Name"], g))
        compile_ms = sum(ns(a["Time(us)"]) for a in apis
                         if a["API Name"].lower().startswith("aclopcompile")) / 1e6
        calls = sum(int(a["Count"]) for a in apis
                    if a["API Name"].lower().startswith("aclopcompile"))
        title = "CANN compiles operators online: %.3f ms in %d calls" % (compile_ms, calls)
        if not any(r["title"].startswith(title) for r in section(results, "findings", rank)):
            failures.append("%s: rank %d: no finding %r" % (name, rank, title))
        mods = collections.defaultdict(int)
        for m in rows(os.path.join(text_out[rank], "npu_module_mem.csv")):
            mods[m["Component"]] = max(mods[m["Component"]],
                                       round(float(m["Total Reserved(MB)"]) * 1048576))
        got = {r["name"]: r for r in section(results, "reported_module_memory", rank)}
        want = {c: b for c, b in mods.items() if b > 0}
        if set(got) != set(want) or any(not close(got[c]["peak_bytes"] / 1048576, b / 1048576)
                                        for c, b in want.items()):
            failures.append("%s: rank %d module memory %s, expected %s" %
                            (name, rank, {c: r["peak_bytes"] for c, r in got.items()}, want))
        if msprof_out is None:
            details = collections.defaultdict(lambda: [0, 0, 0])
            for d in rows(os.path.join(text_out[rank], "operator_details.csv")):
                t = details[d["Name"]]
                t[0] += 1
                t[1] += ns(d["Host Self Duration(us)"])
                t[2] += ns(d["Device Self Duration(us)"])
            got = {r["operator"]: r for r in section(results, "reported_framework_ops", rank)}
            if set(got) != set(details):
                failures.append("%s: rank %d framework operators differ: %s" %
                                (name, rank, sorted(set(got) ^ set(details))[:4]))
            for op, (n, host, device) in details.items():
                g = got.get(op)
                if g and (g["rows"] != n or not close(g["host_self_ns"] / 1e6, host / 1e6) or
                          not close(g["device_self_ns"] / 1e6, device / 1e6)):
                    failures.append("%s: rank %d operator %s: %s, expected %s" %
                                    (name, rank, op, g, (n, host / 1e6, device / 1e6)))
            continue
        out = msprof_out[rank]
        # Memory from msprof's own files, against the torch_npu files they were
        # made from: the blocks live at the highest allocated total (allocated
        # by then, released after it or never), and GE's peak reserved.
        blocks = [m for m in rows(os.path.join(text_out[rank], "operator_memory.csv"))
                  if float(m["Size(KB)"]) >= 0]
        peak = max(blocks, key=lambda m: float(m["Allocation Total Allocated(MB)"]))
        peak_ns = ns(peak["Allocation Time(us)"])
        live = collections.defaultdict(float)
        for m in blocks:
            release = m["Release Time(us)"].strip()
            if ns(m["Allocation Time(us)"]) <= peak_ns and (not release or ns(release) > peak_ns):
                live[m["Name"]] += float(m["Size(KB)"]) * 1024
        got = {r["operator"]: r["bytes"] for r in section(results, "reported_memory_peak", rank)}
        if set(got) != set(live) or any(abs(got[k] - v) > 1 for k, v in live.items()):
            failures.append("%s: rank %d memory live at the peak %s, expected %s" %
                            (name, rank, got, dict(live)))
        ge = max(float(m["Total Reserved(MB)"])
                 for m in rows(os.path.join(text_out[rank], "memory_record.csv"))
                 if m["Component"] == "GE" and m["Total Reserved(MB)"].strip())
        got = {r["component"]: r for r in section(results, "reported_memory_components", rank)}
        if set(got) != {"GE"} or not close(got["GE"]["peak_reserved_bytes"] / 2**20, ge):
            failures.append("%s: rank %d memory components %s, expected GE %s MiB" %
                            (name, rank, got, ge))
        comm = rows(os.path.join(out, "communication_statistic_%s.csv" % TS))
        got = section(results, "reported_communication_types", rank)
        if [(c["OP Type"], int(c["Count"]), ns(c["Total Time(us)"]) / 1e6) for c in comm] != [
                (r["op_type"], r["count"], r["total_ns"] / 1e6) for r in got]:
            failures.append("%s: rank %d communication types %s" % (name, rank, got))
        peak = max(ns(m["memory(KB)"]) for m in rows(os.path.join(out, "npu_mem_%s.csv" % TS)))
        got = {r["name"]: r for r in section(results, "reported_device_memory", rank)}
        if "app memory" not in got or not close(got["app memory"]["peak_bytes"] / 1048576,
                                                peak / 1000 / 1024):
            failures.append("%s: rank %d npu_mem peak %s, expected %s MiB" %
                            (name, rank, got, peak / 1000 / 1024))
        got = section(results, "reported_iterations", rank)
        want = [(i, ns(t) / 1e6, ns(fb) / 1e6, ns(ref) / 1e6,
                 None if aug == "N/A" else ns(aug) / 1e6) for i, t, fb, ref, aug in ITERATIONS]
        def ms(value):  # analysis.json's ns as the file's ms
            return None if value is None else value / 1e6
        have = [(r["iteration"], ms(r["iteration_ns"]), ms(r["fp_to_bp_ns"]), ms(r["refresh_ns"]),
                 ms(r["data_aug_ns"])) for r in got]
        if have != want:
            failures.append("%s: rank %d iterations %s, expected %s" % (name, rank, have, want))


def check_task_time(opscope, text, msprof_root, tmp, failures):
    """A PROF_* run with task_time_*.csv as its only timeline: the same compute
    kernels as the text form (communication tasks are not in task_time), the
    unnamed EVENT_RECORD task a device wait (the stream signalling an event,
    which computes nothing: not a kernel), the MEMCPY_ASYNC a copy."""
    root = os.path.join(tmp, "task-time-only")
    shutil.copytree(msprof_root, root)
    for rank in (0, 1):
        out = os.path.join(root, "PROF_00000%d_%s000_ABCDEFGH%d" % (rank, TS, rank),
                           "mindstudio_profiler_output")
        os.remove(os.path.join(out, "op_summary_%s.csv" % TS))
    results = analyze(opscope, root, os.path.join(tmp, "task-time-report"))
    for rank in (0, 1):
        want = {r["operator"]: r for r in section(text, "kernels", rank)
                if not r["operator"].startswith("hcom_")}
        got = {r["operator"]: r for r in section(results, "kernels", rank)}
        copy = got.pop("MEMCPY_ASYNC", None)
        if copy is None or copy["count"] != 1 or not close(copy["total_ns"] / 1e3, 20.25) or \
                copy["category"] == "kernel":
            failures.append("task_time: rank %d: the MEMCPY_ASYNC task: %s" % (rank, copy))
        record = got.pop("EVENT_RECORD", None)
        if record is None or record["category"] != "device_wait":
            failures.append("task_time: rank %d: the EVENT_RECORD task: %s" % (rank, record))
        if set(got) != set(want):
            failures.append("task_time: rank %d kernels differ: %s" %
                            (rank, sorted(set(got) ^ set(want))[:4]))
        for k in set(got) & set(want):
            for field in ("count", "total_ns"):
                if not close(got[k][field], want[k][field]):
                    failures.append("task_time: rank %d %s %s: %r, text %r" %
                                    (rank, k, field, got[k][field], want[k][field]))


def hccl_hash(name):
    """docs/formats/ascend.md 1.7: rolling hashes of the name, x29 (high word), x131 (low)."""
    high = low = 0
    for byte in name.encode():
        high = (high * 29 + byte) % 2 ** 32
        low = (low * 131 + byte) % 2 ** 32
    return high << 32 | low


GROUP = "group_name_19"  # the documented example: hash 3985310405473756128
GLOBAL = [0, 1, 8, 9, 16, 17, 24, 25]  # the group's global ranks; ranks 0 and 1 are local 0 and 1


def add_metadata(text_root):
    """Each text rank gets a profiler_metadata.json whose data-parallel group
    is the one its files name (the hash after '@' rewritten to GROUP's)."""
    assert hccl_hash(GROUP) == 3985310405473756128
    for rank in (0, 1):
        out = rank_output(text_root, rank)
        with open(os.path.join(os.path.dirname(out), "profiler_metadata.json"), "w") as f:
            json.dump({"parallel_group_info": {GROUP: {
                "group_name": "dp", "group_rank": rank, "global_ranks": GLOBAL[::-1]}}}, f)
        for name in ("communication.json", "communication_matrix.json"):
            path = os.path.join(out, name)
            doc = json.load(open(path))
            for kinds in doc.values():
                for groups in kinds.values():
                    for key in list(groups):
                        if "@" in key:
                            groups[key.split("@")[0] + "@%d" % hccl_hash(GROUP)] = groups.pop(key)
            json.dump(doc, open(path, "w"))


def check_global_ranks(name, results, failures, from_metadata):
    links = section(results, "reported_links")
    if not links:
        failures.append("%s: no links" % name)
    for r in links:
        if from_metadata:
            want = (GLOBAL[r["src"]], GLOBAL[r["dst"]], "dp", "profiler_metadata.json")
        else:  # each rank's LOCAL self-link k-k: local 0 is rank 0, local 1 rank 1
            known = {0: 0, 1: 1}
            src, dst = known.get(r["src"]), known.get(r["dst"])
            want = (src, dst, None, "self-links" if src is not None or dst is not None else None)
        got = (r["global_src"], r["global_dst"], r["group_role"], r["ranks_from"])
        if got != want:
            failures.append("%s: link %d-%d global ranks %s, expected %s" %
                            (name, r["src"], r["dst"], got, want))


def main():
    opscope, data = sys.argv[1], sys.argv[2]
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        text_root, db_root, msprof_root = (os.path.join(tmp, n) for n in ("text", "db", "msprof"))
        communication_test.build(data, text_root)
        build_db(text_root, db_root)
        build_msprof(text_root, msprof_root)
        add_metadata(text_root)
        text = analyze(opscope, text_root, os.path.join(tmp, "text-report"))
        db = analyze(opscope, db_root, os.path.join(tmp, "db-report"))
        msprof = analyze(opscope, msprof_root, os.path.join(tmp, "msprof-report"))
        for name, results in (("text", text), ("db", db), ("msprof", msprof)):
            check_cluster(name, results, failures)
            check_global_ranks(name, results, failures, from_metadata=name == "text")
        compare("db against text", text, db, db_test.COMPARED, failures)
        # msprof's run has no step_trace_time (graph-mode step_trace instead);
        # its timeline (task_time) has no formats, so no layout conversions by format.
        compare("msprof against text", text, msprof,
                {k: v for k, v in db_test.COMPARED.items()
                 if k not in ("reported_steps", "layout_conversions")}, failures)
        text_out = {r: rank_output(text_root, r) for r in (0, 1)}
        check_summaries("text", text, text_out, failures)
        msprof_out = {r: os.path.join(msprof_root, "PROF_00000%d_%s000_ABCDEFGH%d" % (r, TS, r),
                                      "mindstudio_profiler_output") for r in (0, 1)}
        check_summaries("msprof", msprof, text_out, failures, msprof_out)
        check_task_time(opscope, text, msprof_root, tmp, failures)
        # The chips' peaks: cores x MHz x 8192 FLOP/cycle, named with their file.
        with open(os.path.join(tmp, "msprof-report", "analysis.html")) as f:
            html = f.read()
        for rank, chip in CHIPS.items():
            cores, mhz = chip["ai_core_num"], float(chip["aic_frequency"])
            want = "device_0/info.json.0: %d AI cores x %g MHz x 8192 FLOP/cycle = %.1f TFLOP/s" % (
                cores, mhz, cores * mhz * 1e6 * 8192 / 1e12)
            if want not in html:
                failures.append("msprof: rank %d's roofline does not say %r" % (rank, want))
        unused = [r["file"] for r in section(msprof, "unused_files")]
        for f in unused:
            if "op_statistic_" in f or "api_statistic_" in f or "npu_mem_" in f:
                failures.append("msprof: %s listed as not read" % f)
    if failures:
        print("\n".join(failures[:40]))
        return 1
    print("job: text, db and msprof forms each give ranks 0 and 1, rank 1 waited for, link 1-5 "
          "slow, the same figures, and every summary as the raw files have it")
    return 0


if __name__ == "__main__":
    sys.exit(main())
