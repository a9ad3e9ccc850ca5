#!/usr/bin/env python3
"""Ascend's SQLite exports, checked two ways with Python's sqlite3 and json
modules (nothing of opscope's):

1. The real level-1 database sample (tests/data/ascend/level1_db): its kernels
   by the join recipe of docs/formats/ascend.md 4.5 (COMPUTE_TASK_INFO JOIN TASK,
   COMMUNICATION_OP, and the collectives' tasks by COMMUNICATION_TASK_INFO JOIN
   TASK, whose Notify Waits name the peer rank waited on longest, which the
   first finding must name), its step breakdown (analysis.db StepTraceTime, in
   microseconds) and its communication (CommAnalyzerTime, in ms) against what
   `opscope analyze` reports for the folder.
2. The same figures from the text and the database forms of one run: the
   level-1 text sample is written into a database twin built to the
   documented schema (docs/formats/ascend.md 4.3, 4.4, 4.6: STRING_IDS, TASK,
   COMPUTE_TASK_INFO, TASK_PMU_INFO without unit suffixes, COMMUNICATION_OP;
   analysis.db's StepTraceTime, CommAnalyzerTime, CommAnalyzerBandwidth with
   one row per packet-size bucket and the totals repeated, CommAnalyzerMatrix),
   and both trees must give the same kernels, AI Core pipeline (but for L2
   rates and cube utilisation, which the database schema does not carry),
   steps, communication and links.

    db_test.py OPSCOPE DATA_DIR
"""
import collections
import csv
import decimal
import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import tempfile


def ns(text):
    return int((decimal.Decimal(str(text).strip()) * 1000).to_integral_value(
        decimal.ROUND_HALF_UP))


def connect(path):
    # immutable: no -wal/-shm files are left beside a sample
    return sqlite3.connect("file:%s?immutable=1" % path, uri=True)


def analyze(opscope, tree, out):
    subprocess.run([opscope, "analyze", tree, "--top", "0", "--format", "json", "--out", out],
                   check=True, stdout=subprocess.DEVNULL)
    with open(os.path.join(out, "analysis.json")) as f:
        return json.load(f)["results"]


def section(results, name):
    return [r for r in results if r.get("section") == name]


def check_real(opscope, data, tmp, failures):
    out_dir = os.path.join(data, "ascend", "level1_db", "rank0_ascend_pt", "ASCEND_PROFILER_OUTPUT")
    db = connect(os.path.join(out_dir, "ascend_pytorch_profiler_0.db"))
    strings = dict(db.execute("SELECT id, value FROM STRING_IDS"))
    want = collections.defaultdict(lambda: [0, 0])
    for name, start, end in db.execute(
            "SELECT c.name, t.startNs, t.endNs FROM COMPUTE_TASK_INFO c "
            "JOIN TASK t ON t.globalTaskId = c.globalTaskId"):
        want[strings[name]][0] += 1
        want[strings[name]][1] += end - start
    for name, start, end in db.execute("SELECT opName, startNs, endNs FROM COMMUNICATION_OP"):
        want[strings[name]][0] += 1
        want[strings[name]][1] += end - start
    # The collectives' tasks, by task type (COMMUNICATION_TASK_INFO JOIN TASK),
    # and the rank the Notify Waits wait on longest: the other end of each.
    waited = collections.defaultdict(int)
    ranks = collections.Counter()
    for kind, start, end, src, dst in db.execute(
            "SELECT i.taskType, t.startNs, t.endNs, i.srcRank, i.dstRank FROM "
            "COMMUNICATION_TASK_INFO i JOIN TASK t ON t.globalTaskId = i.globalTaskId"):
        want[strings[kind]][0] += 1
        want[strings[kind]][1] += end - start
        ranks.update(r for r in (src, dst) if 0 <= r < 2**31 - 1)
        if strings[kind] == "Notify_Wait":
            waited[(src, dst)] += end - start
    own = ranks.most_common(1)[0][0]
    by_peer = collections.defaultdict(int)
    for (src, dst), ns in waited.items():
        by_peer[dst if src == own else src] += ns
    peer = max(by_peer, key=by_peer.get)
    results = analyze(opscope, os.path.join(data, "ascend", "level1_db"),
                      os.path.join(tmp, "real"))
    first = section(results, "findings")[0]
    if first["id"] != "step_device_waiting" or f"rank {peer} above all" not in first["title"] or \
            "most of it waiting for other ranks" not in first["title"]:
        failures.append("real db: the first finding names rank %d waited on, mostly waiting: %s" %
                        (peer, first["title"][:200]))
    # The DataLoader's iterator among PYTORCH_API's operator rows (type "op",
    # docs/formats/ascend.md 4.3; the Python frames are other types) is data
    # loading, as it is on a Kineto or torch_npu timeline: the attribution's
    # data-loading state (over the one step, the window) is the time of those
    # rows inside the step (one here).
    api = [(strings.get(name, str(name)), int(start), int(end)) for name, start, end in
           db.execute("SELECT name, startNs, endNs FROM PYTORCH_API WHERE type = "
                      "(SELECT id FROM ENUM_API_TYPE WHERE name = 'op')")]
    (_, step_b, step_e), = [r for r in api if r[0].startswith("ProfilerStep#")]
    loading = [(max(b, step_b), min(e, step_e)) for n, b, e in api
               if re.search(r"(?i)dataloader|data_loader", n) and b < step_e and e > step_b]
    states = {r["state"]: r["time_ns"] for r in section(results, "attribution")}
    if not loading or states.get("data_loading") != sum(e - b for b, e in loading):
        failures.append("real db: data loading %s ns, expected %s ns from %d DataLoader rows" %
                        (states.get("data_loading"), sum(e - b for b, e in loading), len(loading)))
    if any("DataLoader" in r["title"] for r in section(results, "findings")
           if r["id"] == "host_only_operators"):
        failures.append("real db: the DataLoader is called a host-only operator")
    got = {r["operator"]: r for r in section(results, "kernels")}
    if set(got) != set(want):
        failures.append("real db: kernels differ: %s" % sorted(set(got) ^ set(want))[:5])
    for name, (count, total) in want.items():
        g = got.get(name)
        if g and (g["count"] != count or abs(g["total_ns"] - total) > 0.5):
            failures.append("real db: %s: %s/%s ns, expected %s/%s ns" %
                            (name, g["count"], g["total_ns"], count, total))
    analysis = connect(os.path.join(out_dir, "analysis.db"))
    (step, computing, free), = analysis.execute("SELECT step, computing, free FROM StepTraceTime")
    steps = section(results, "reported_steps")
    if len(steps) != 1 or steps[0]["step"] != step or \
            abs(steps[0]["computing_ns"] - computing * 1e3) > 1 or \
            abs(steps[0]["free_ns"] - free * 1e3) > 1:
        failures.append("real db: steps %s, expected step %s computing %s us free %s us" %
                        (steps, step, computing, free))
    (ops, elapse, wait), = analysis.execute(
        "SELECT count(*), sum(elapse_time), sum(wait_time) FROM CommAnalyzerTime")
    comm = section(results, "reported_communication")
    if len(comm) != 1 or comm[0]["operations"] != ops or \
            abs(comm[0]["elapse_ns"] - elapse * 1e6) > 10 or \
            abs(comm[0]["wait_ns"] - wait * 1e6) > 10:
        failures.append("real db: communication %s, expected %s ops, %s ms, wait %s ms" %
                        (comm, ops, elapse, wait))
    if not section(results, "core_pipes"):
        failures.append("real db: no AI Core pipeline from TASK_PMU_INFO")
    # The same database as msprof writes it (--type=db): PROF_*/msprof_{ts}.db.
    prof = os.path.join(tmp, "PROF_000001_20250109080000000_ABCDEFGH")
    os.makedirs(prof)
    shutil.copy(os.path.join(out_dir, "ascend_pytorch_profiler_0.db"),
                os.path.join(prof, "msprof_20250109080000.db"))
    msprof = analyze(opscope, prof, os.path.join(tmp, "msprof"))
    if len(section(msprof, "kernels")) != len(want):
        failures.append("msprof db: %d kernels, expected %d" %
                        (len(section(msprof, "kernels")), len(want)))


# kernel_details.csv PMU columns -> TASK_PMU_INFO names (no unit suffix; the
# per-core time is aic_total_time / aiv_total_time, as in the real database).
def metric_name(column):
    if column == "aicore_time(us)":
        return "aic_total_time"
    if column == "aiv_time(us)":
        return "aiv_total_time"
    if column.startswith(("aic_", "aiv_")):
        return column.replace("(us)", "")
    return None


def build_twin(text_dir, db_dir):
    class Ids:
        def __init__(self):
            self.ids = {}

        def __call__(self, value):
            return self.ids.setdefault(value, len(self.ids))

    sid = Ids()
    db = sqlite3.connect(os.path.join(db_dir, "ascend_pytorch_profiler_0.db"))
    db.executescript("""
        CREATE TABLE STRING_IDS (id INTEGER PRIMARY KEY, value TEXT);
        CREATE TABLE TASK (startNs INTEGER, endNs INTEGER, deviceId INTEGER, connectionId INTEGER,
            globalTaskId INTEGER, globalPid INTEGER, taskType INTEGER, contextId INTEGER,
            streamId INTEGER, taskId INTEGER, modelId INTEGER);
        CREATE TABLE COMPUTE_TASK_INFO (name INTEGER, globalTaskId INTEGER PRIMARY KEY,
            blockNum INTEGER, mixBlockNum INTEGER, taskType INTEGER, opType INTEGER,
            inputFormats INTEGER, inputDataTypes INTEGER, inputShapes INTEGER,
            outputFormats INTEGER, outputDataTypes INTEGER, outputShapes INTEGER,
            attrInfo INTEGER, opState INTEGER, hf32Eligible INTEGER);
        CREATE TABLE TASK_PMU_INFO (globalTaskId INTEGER, name INTEGER, value NUMERIC);
        CREATE TABLE COMMUNICATION_OP (opName INTEGER, startNs INTEGER, endNs INTEGER,
            connectionId INTEGER, groupName INTEGER, opId INTEGER PRIMARY KEY, relay INTEGER,
            retry INTEGER, dataType INTEGER, algType INTEGER, count NUMERIC, opType INTEGER);
        CREATE TABLE RANK_DEVICE_MAP (rankId INTEGER, deviceId INTEGER);
        CREATE TABLE NPU_INFO (id INTEGER, name TEXT);
        INSERT INTO RANK_DEVICE_MAP VALUES (0, 0);
        INSERT INTO NPU_INFO VALUES (0, 'Ascend910B');
    """)
    with open(os.path.join(text_dir, "kernel_details.csv"), newline="") as f:
        rows = list(csv.DictReader(f))
    for gid, r in enumerate(rows):
        start = ns(r["Start Time(us)"])
        end = start + ns(r["Duration(us)"])
        if r["Accelerator Core"] in ("HCCL", "COMMUNICATION"):
            db.execute("INSERT INTO COMMUNICATION_OP (opName, startNs, endNs, opId) "
                       "VALUES (?, ?, ?, ?)", (sid(r["Name"]), start, end, gid))
            continue
        db.execute("INSERT INTO TASK (startNs, endNs, deviceId, globalTaskId, streamId, taskId, "
                   "taskType) VALUES (?, ?, 0, ?, ?, ?, ?)",
                   (start, end, gid, int(r["Stream ID"]), int(r["Task ID"]), sid("AI_CORE")))
        db.execute("INSERT INTO COMPUTE_TASK_INFO (name, globalTaskId, blockNum, taskType, opType, "
                   "inputShapes, inputDataTypes, outputDataTypes, inputFormats, outputFormats) "
                   "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                   (sid(r["Name"]), gid, int(r["Block Dim"]), sid(r["Accelerator Core"]),
                    sid(r["Type"]), sid(r["Input Shapes"]), sid(r["Input Data Types"]),
                    sid(r["Output Data Types"]), sid(r["Input Formats"]),
                    sid(r["Output Formats"])))
        for column, value in r.items():
            name = metric_name(column)
            if name and value.strip() not in ("", "N/A"):
                db.execute("INSERT INTO TASK_PMU_INFO VALUES (?, ?, ?)",
                           (gid, sid(name), float(value)))
    db.executemany("INSERT INTO STRING_IDS VALUES (?, ?)",
                   [(i, v) for v, i in sid.ids.items()])
    db.commit()
    db.close()

    a = sqlite3.connect(os.path.join(db_dir, "analysis.db"))
    a.executescript("""
        CREATE TABLE StepTraceTime (step TEXT, computing NUMERIC, communication_not_overlapped
            NUMERIC, overlapped NUMERIC, communication NUMERIC, free NUMERIC, stage NUMERIC,
            bubble NUMERIC, communication_not_overlapped_and_exclude_receive NUMERIC,
            preparing NUMERIC);
        CREATE TABLE CommAnalyzerTime (hccl_op_name TEXT, group_name TEXT, start_timestamp NUMERIC,
            elapse_time NUMERIC, transit_time NUMERIC, wait_time NUMERIC,
            synchronization_time NUMERIC, idle_time NUMERIC, step TEXT, type TEXT);
        CREATE TABLE CommAnalyzerBandwidth (hccl_op_name TEXT, group_name TEXT,
            transport_type TEXT, transit_size NUMERIC, transit_time NUMERIC, bandwidth NUMERIC,
            large_packet_ratio NUMERIC, package_size NUMERIC, count NUMERIC,
            total_duration NUMERIC, step TEXT, type TEXT);
        CREATE TABLE CommAnalyzerMatrix (hccl_op_name TEXT, group_name TEXT, src_rank TEXT,
            dst_rank TEXT, transport_type TEXT, transit_size NUMERIC, transit_time NUMERIC,
            bandwidth NUMERIC, step TEXT, type TEXT, op_name TEXT);
    """)
    with open(os.path.join(text_dir, "step_trace_time.csv"), newline="") as f:
        for r in csv.DictReader(f):
            a.execute("INSERT INTO StepTraceTime VALUES (?,?,?,?,?,?,?,?,?,?)",
                      (r["Step"], float(r["Computing"]),
                       float(r["Communication(Not Overlapped)"]), float(r["Overlapped"]),
                       float(r["Communication"]), float(r["Free"]), float(r["Stage"]),
                       float(r["Bubble"]),
                       float(r["Communication(Not Overlapped and Exclude Receive)"]),
                       float(r["Preparing"])))
    comm = json.load(open(os.path.join(text_dir, "communication.json")))
    for step, kinds in comm.items():
        for kind, ops in kinds.items():
            for key, info in ops.items():
                if key.lower().startswith("total"):
                    continue
                op, group = key.split("@")
                t = info["Communication Time Info"]
                a.execute("INSERT INTO CommAnalyzerTime VALUES (?,?,?,?,?,?,?,?,?,?)",
                          (op, group, t["Start Timestamp(us)"], t["Elapse Time(ms)"],
                           t["Transit Time(ms)"], t["Wait Time(ms)"],
                           t["Synchronization Time(ms)"], t["Idle Time(ms)"], step, kind))
                for transport, b in info["Communication Bandwidth Info"].items():
                    buckets = list(b["Size Distribution"].items()) or [("0", [0, 0])]
                    for size, (count, duration) in buckets:
                        a.execute("INSERT INTO CommAnalyzerBandwidth VALUES "
                                  "(?,?,?,?,?,?,?,?,?,?,?,?)",
                                  (op, group, transport, b["Transit Size(MB)"],
                                   b["Transit Time(ms)"], b["Bandwidth(GB/s)"],
                                   b["Large Packet Ratio"], float(size), count, duration, step,
                                   kind))
    matrix = json.load(open(os.path.join(text_dir, "communication_matrix.json")))
    for step, kinds in matrix.items():
        for kind, groups in kinds.items():
            for key, links in groups.items():
                name, group = key.split("@")
                for pair, f in links.items():
                    src, dst = pair.split("-")
                    a.execute("INSERT INTO CommAnalyzerMatrix VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                              (name, group, src, dst, f["Transport Type"], f["Transit Size(MB)"],
                               f["Transit Time(ms)"], f["Bandwidth(GB/s)"], step, kind,
                               f.get("Op Name", "")))
    a.commit()
    a.close()


# Per section: the key of a row and the fields compared.
COMPARED = {
    "kernels": (("operator",), ("count", "total_ns", "category")),
    "core_pipes": (("name",), ("count", "total_ns", "measured", "cube_ratio", "vector_ratio",
                                   "scalar_ratio", "mte1_ratio", "mte2_ratio", "mte3_ratio",
                                   "fixpipe_ratio", "mean_blocks", "bound")),
    "reported_steps": (("step",), ("step_ns", "computing_ns", "comm_not_overlapped_ns",
                                 "overlapped_ns", "free_ns", "bubble_ns", "preparing_ns")),
    "reported_communication": (("rank",), ("operations", "elapse_ns", "transit_ns", "wait_ns",
                                         "sync_ns", "idle_ns", "transports")),
    "reported_collectives": (("operation",), ("elapse_ns", "transit_ns", "wait_ns", "bytes_per_s",
                                            "bytes")),
    "reported_links": (("src", "dst"), ("transport", "bytes", "transit_ns", "bytes_per_s",
                                      "median_bytes_per_s", "slow")),
    "layout_conversions": (("name",), ("count", "total_ns", "formats")),
}


def same(a, b):
    # Base units (ns, bytes) come as integers when whole: compare numbers by value.
    if isinstance(a, (int, float)) and isinstance(b, (int, float)) and \
            not isinstance(a, bool) and not isinstance(b, bool):
        return abs(a - b) <= 1e-6 * max(1, abs(a))
    return a == b


def check_twin(opscope, data, tmp, failures):
    text_tree = os.path.join(tmp, "text")
    shutil.copytree(os.path.join(data, "ascend", "level1_text"), text_tree)
    db_out = os.path.join(tmp, "db", "rank0_ascend_pt", "ASCEND_PROFILER_OUTPUT")
    os.makedirs(db_out)
    shutil.copy(os.path.join(text_tree, "rank0_ascend_pt", "profiler_info_0.json"),
                os.path.join(tmp, "db", "rank0_ascend_pt"))
    build_twin(os.path.join(text_tree, "rank0_ascend_pt", "ASCEND_PROFILER_OUTPUT"), db_out)
    text = analyze(opscope, text_tree, os.path.join(tmp, "text-report"))
    db = analyze(opscope, os.path.join(tmp, "db"), os.path.join(tmp, "db-report"))
    for name, (key, fields) in COMPARED.items():
        t = {tuple(r[k] for k in key): r for r in section(text, name)}
        d = {tuple(r[k] for k in key): r for r in section(db, name)}
        if not t:
            failures.append("twin: the text form has no %s rows" % name)
        if set(t) != set(d):
            failures.append("twin: %s rows differ: %s" % (name, sorted(set(t) ^ set(d))[:4]))
            continue
        for k in t:
            for field in fields:
                if not same(t[k][field], d[k][field]):
                    failures.append("twin: %s %s %s: text %r, db %r" %
                                    (name, k, field, t[k][field], d[k][field]))
    print("twin: %s compared" % ", ".join("%s %d" % (n, len(section(text, n))) for n in COMPARED))


def check_errors(opscope, tmp, failures):
    """Bad databases: a clear error naming the file and a non-zero exit."""
    cases = []
    path = os.path.join(tmp, "ascend_pytorch_profiler_1.db")
    with open(path, "wb") as f:
        f.write(b"SQLite format 3\0" + b"\xff" * 4000)
    cases.append((path, 3, "ascend_pytorch_profiler_1.db: SQLite"))
    path = os.path.join(tmp, "ascend_pytorch_profiler_2.db")
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE STRING_IDS (id INTEGER PRIMARY KEY, value TEXT)")
    db.commit()
    db.close()
    cases.append((path, 3, "ascend_pytorch_profiler_2.db: no TASK table"))
    path = os.path.join(tmp, "ascend_pytorch_profiler_3.db")
    db = sqlite3.connect(path)
    db.executescript("""
        CREATE TABLE STRING_IDS (id INTEGER PRIMARY KEY, value TEXT);
        CREATE TABLE TASK (startNs INTEGER, endNs INTEGER, globalTaskId INTEGER, streamId INTEGER,
                           taskId INTEGER, connectionId INTEGER);
        CREATE TABLE COMPUTE_TASK_INFO (name INTEGER, globalTaskId INTEGER, blockNum INTEGER,
                                        taskType INTEGER, opType INTEGER);
        INSERT INTO TASK VALUES (100, 50, 1, 2, 3, 4);
        INSERT INTO COMPUTE_TASK_INFO VALUES (0, 1, 8, 0, 0);""")
    db.commit()
    db.close()
    cases.append((path, 3, "ascend_pytorch_profiler_3.db: TASK: a row runs from 100 to 50 ns"))
    # A NULL start or end is no time: SQLite would read it as 0 (issue 39).
    for table, row in (("TASK", "(NULL, 50, 1, 2, 3, 4)"), ("PYTORCH_API", None)):
        path = os.path.join(tmp, "ascend_pytorch_profiler_null_%s.db" % table)
        db = sqlite3.connect(path)
        db.executescript("""
            CREATE TABLE STRING_IDS (id INTEGER PRIMARY KEY, value TEXT);
            INSERT INTO STRING_IDS VALUES (0, 'mm');
            CREATE TABLE TASK (startNs INTEGER, endNs INTEGER, globalTaskId INTEGER,
                               streamId INTEGER, taskId INTEGER, connectionId INTEGER);
            CREATE TABLE COMPUTE_TASK_INFO (name INTEGER, globalTaskId INTEGER, blockNum INTEGER,
                                            taskType INTEGER, opType INTEGER);
            INSERT INTO COMPUTE_TASK_INFO VALUES (0, 1, 8, 0, 0);
            CREATE TABLE PYTORCH_API (startNs TEXT, endNs TEXT, globalTid INTEGER, name INTEGER);""")
        if row:
            db.execute("INSERT INTO TASK VALUES " + row)
        else:
            db.execute("INSERT INTO TASK VALUES (10, 50, 1, 2, 3, 4)")
            db.execute("INSERT INTO PYTORCH_API VALUES ('5', NULL, 4294967297, 0)")
        db.commit()
        db.close()
        cases.append((path, 3, "%s: a row's %s is NULL: not a time" %
                      (table, "start" if row else "end")))
    # Another producer's SQLite database is not taken for Ascend's: opscope
    # says it does not read it (exit 5). (An Nsight Systems export has its
    # own reader: analyze/nsys_test.py.)
    path = os.path.join(tmp, "report.sqlite")
    db = sqlite3.connect(path)
    db.executescript("""
        CREATE TABLE StringIdsX (id INTEGER PRIMARY KEY, value TEXT);
        CREATE TABLE samples (start INTEGER, end INTEGER, shortName INTEGER);""")
    db.commit()
    db.close()
    cases.append((path, 5, "is not a trace format opscope reads"))
    gz = os.path.join(tmp, "ascend_pytorch_profiler_4.db.gz")
    subprocess.run(["sh", "-c", "gzip -c '%s' > '%s'" % (path, gz)], check=True)
    cases.append((gz, 5, "read from a plain file"))
    for path, code, message in cases:
        p = subprocess.run([opscope, "analyze", path, "--out", os.path.join(tmp, "bad")],
                           capture_output=True, text=True)
        if p.returncode != code or message not in p.stderr:
            failures.append("%s: exit %d (expected %d), stderr %r lacks %r" %
                            (os.path.basename(path), p.returncode, code, p.stderr[-300:], message))


def check_null_times(opscope, data, tmp, failures):
    """Issue 51: the text 'NULL' in a time column is no time (SQLite reads it as
    0: a 55-year window), and NULLs in analysis.db's CommAnalyzerTime are
    absent values, never negative times."""
    src = os.path.join(data, "ascend", "level1_db", "rank0_ascend_pt")
    rank = os.path.join(tmp, "nulls", "rank0_ascend_pt")
    shutil.copytree(src, rank)
    out = os.path.join(rank, "ASCEND_PROFILER_OUTPUT")
    db_path = os.path.join(out, "ascend_pytorch_profiler_0.db")
    db = sqlite3.connect(db_path)
    db.execute("UPDATE TASK SET startNs='NULL' WHERE rowid % 11 = 0")
    db.commit()
    db.close()
    p = subprocess.run([opscope, "analyze", db_path, "--out", os.path.join(tmp, "nulls-report")],
                       capture_output=True, text=True)
    want = r"TASK: a row's start is the text 'NULL': not a time \(row \d+, column startNs\)"
    if p.returncode != 3 or not re.search(want, p.stderr):
        failures.append("text NULL in TASK.startNs: exit %d, stderr %r lacks %r" %
                        (p.returncode, p.stderr[-300:], want))
    shutil.copy(os.path.join(src, "ASCEND_PROFILER_OUTPUT", "ascend_pytorch_profiler_0.db"),
                db_path)
    db = sqlite3.connect(os.path.join(out, "analysis.db"))
    db.execute("UPDATE CommAnalyzerTime SET start_timestamp=NULL, elapse_time=NULL")
    db.commit()
    db.close()
    p = subprocess.run([opscope, "analyze", rank, "--format", "json", "--out",
                        os.path.join(tmp, "nulls-report2")], capture_output=True, text=True)
    if p.returncode != 0:
        failures.append("NULLs in CommAnalyzerTime: exit %d: %s" % (p.returncode, p.stderr[-300:]))
        return
    results = json.loads(p.stdout)["results"]
    negative = [(r.get("section"), k, v) for r in results for k, v in r.items()
                if k.endswith("_ns") and isinstance(v, (int, float)) and v < 0]
    if negative:
        failures.append("NULLs in CommAnalyzerTime: negative times shown: %r" % negative[:5])
    ops = section(results, "reported_collectives")
    if not ops or any(r["elapse_ns"] is not None for r in ops):
        failures.append("NULLs in CommAnalyzerTime: elapse_ns must be absent (null) on every "
                        "operation: %r" % [r["elapse_ns"] for r in ops][:5])
    p = subprocess.run([opscope, "analyze", rank, "--table", "reported_collectives", "--out",
                        os.path.join(tmp, "nulls-report3")], capture_output=True, text=True)
    if "without some of their times in the file (NULL)" not in p.stdout:
        failures.append("NULLs in CommAnalyzerTime: the table does not say the file left times "
                        "out: %r" % p.stdout[-400:])


def check_minimal_schema(opscope, tmp, failures):
    """A database with fewer columns than torch_npu writes (no connectionId in
    COMMUNICATION_OP or CANN_API, no type in PYTORCH_API) is still read."""
    path = os.path.join(tmp, "minimal", "ascend_pytorch_profiler_5.db")
    os.makedirs(os.path.dirname(path))
    db = sqlite3.connect(path)
    db.executescript("""
        CREATE TABLE STRING_IDS (id INTEGER PRIMARY KEY, value TEXT);
        INSERT INTO STRING_IDS VALUES (0, 'mm'), (1, 'MatMulV2'), (2, 'AI_CORE'),
                                      (3, 'hcom_allReduce_1'), (4, 'aten::mm'), (5, 'launch');
        CREATE TABLE TASK (startNs INTEGER, endNs INTEGER, globalTaskId INTEGER,
                           streamId INTEGER, taskId INTEGER, connectionId INTEGER);
        INSERT INTO TASK VALUES (1000, 3000, 1, 2, 7, NULL);
        CREATE TABLE COMPUTE_TASK_INFO (name INTEGER, globalTaskId INTEGER, blockDim INTEGER,
                                        taskType INTEGER, opType INTEGER);
        INSERT INTO COMPUTE_TASK_INFO VALUES (0, 1, 8, 2, 1);
        CREATE TABLE COMMUNICATION_OP (opName INTEGER, startNs INTEGER, endNs INTEGER);
        INSERT INTO COMMUNICATION_OP VALUES (3, 4000, 9000);
        CREATE TABLE PYTORCH_API (startNs TEXT, endNs TEXT, globalTid INTEGER, name INTEGER);
        INSERT INTO PYTORCH_API VALUES ('500', '3500', 4294967297, 4);
        CREATE TABLE CANN_API (startNs INTEGER, endNs INTEGER, globalTid INTEGER, name INTEGER);
        INSERT INTO CANN_API VALUES (600, 900, 4294967297, 5);""")
    db.commit()
    db.close()
    results = analyze(opscope, path, os.path.join(tmp, "minimal-report"))
    kernels = {r["operator"]: r["count"] for r in section(results, "kernels")}
    if kernels != {"mm": 1, "hcom_allReduce_1": 1}:
        failures.append("minimal schema: kernels %s" % kernels)


def main():
    opscope, data = sys.argv[1], sys.argv[2]
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        check_real(opscope, data, tmp, failures)
        check_twin(opscope, data, tmp, failures)
        check_errors(opscope, tmp, failures)
        check_null_times(opscope, data, tmp, failures)
        check_minimal_schema(opscope, tmp, failures)
    if failures:
        print("\n".join(failures[:40]))
        return 1
    print("SQLite exports: the real sample matches its SQL, and the twin matches the text form")
    return 0


if __name__ == "__main__":
    sys.exit(main())
