#!/usr/bin/env python3
"""AI Core operators below the chip's clock (issue 38: the AI Core
down-clocking check of msprof-analyze's advisor, AICoreFreqChecker and
FrequencyCollector), on a real torch_npu timeline and on a copy of it edited
to plant a slow-down.

The real Level1 rank-0 trace_view.json records its "AI Core Freq" counter at
1800 MHz throughout: no operator is below the clock, and the check is silent.
The edited copy adds two samples, 1200 MHz at 25% of the step and 1800 MHz
again at 35% (where most of its AI Core tasks run). Restated here from msprof-analyze's published rule, over the
raw JSON with Python's json module: each sample holds until the next; each
AI_CORE or MIX_AIC task ("Task Type") takes the lowest clock of the samples
that cover it; an operator (by name) is down-clocked where the mean of
(nominal - clock) / nominal over its calls is 5% or more; the nominal is the
highest sample (the trace alone carries no info.json). opscope's core_clock
table must list the same operators with the same calls, time and shortfall,
and its finding give their share of the AI Core tasks' time.

    core_clock_test.py OPSCOPE DATA_DIR
"""
import bisect
import copy
import json
import os
import sqlite3
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from attribution_expected import ns  # noqa: E402
from checks import Checks  # noqa: E402

opscope, data = sys.argv[1:3]
c = Checks()
source = os.path.join(data, "ascend", "level1_text_2rank", "rank0_ascend_pt",
                      "ASCEND_PROFILER_OUTPUT", "trace_view.json")
with open(source) as f:
    events = json.load(f)
events = events if isinstance(events, list) else events["traceEvents"]



def expected(events):
    clock = sorted((ns(e["ts"]), float(e["args"]["MHz"])) for e in events
                   if e.get("ph") == "C" and e.get("name") == "AI Core Freq")
    nominal = max(m for _, m in clock)
    times = [t for t, _ in clock]
    by_name = {}
    checked = 0
    for e in events:
        if e.get("ph") != "X" or (e.get("args") or {}).get("Task Type") not in ("AI_CORE",
                                                                                "MIX_AIC"):
            continue
        b = ns(e["ts"])
        end = b + ns(e["dur"])
        i = bisect.bisect_right(times, b) - 1
        if i < 0:
            continue
        lowest = clock[i][1]
        for t, m in clock[i + 1:]:
            if t >= end:
                break
            lowest = min(lowest, m)
        calls = by_name.setdefault(e["name"], [0, []])
        calls[0] += ns(e["dur"])
        calls[1].append(lowest)
        checked += ns(e["dur"])
    slow = {}
    for name, (total, mhz) in by_name.items():
        shortfall = sum((nominal - m) / nominal for m in mhz) / len(mhz)
        if shortfall >= 0.05:
            slow[name] = (len(mhz), total, 100 * shortfall)
    return slow, checked


def run(events, name):
    results = c.analyze_events(opscope, events, name)
    return ([r for r in results if r["section"] == "findings" and r["id"] == "ai_core_clock"],
            {r["operator"]: r for r in results if r["section"] == "core_clock"})


# The real timeline: the clock never leaves 1800 MHz.
slow, _ = expected(events)
c.check(not slow, f"the real trace: no operator below the clock ({sorted(slow)})")
findings, rows = run(events, "real")
c.check(not findings and not rows, "opscope: no finding, no table on the real trace")

# The edited copy: 1200 MHz from 25% to 35% of the step.
step = next(e for e in events if e.get("ph") == "X" and e["name"].startswith("ProfilerStep#"))
b, d = ns(step["ts"]), ns(step["dur"])
pid = next(e["pid"] for e in events if e.get("ph") == "C" and e.get("name") == "AI Core Freq")
edited = copy.deepcopy(events)
for at, mhz in ((b + d // 4, 1200.0), (b + 7 * d // 20, 1800.0)):
    edited.append({"name": "AI Core Freq", "ph": "C", "pid": pid, "tid": 0,
                   "ts": f"{at // 1000}.{at % 1000:03d}", "args": {"MHz": mhz}})
slow, checked = expected(edited)
c.check(len(slow) > 0, f"the edited trace: {len(slow)} operators below the clock")
findings, rows = run(edited, "edited")
c.check(sorted(rows) == sorted(slow), f"the operators listed: {sorted(rows)} (expected {sorted(slow)})")
for name, (calls, total, shortfall) in slow.items():
    r = rows.get(name)
    c.check(r is not None and int(r["calls"]) == calls and round(r["total_ns"]) == total and
            abs(r["shortfall_pct"] - shortfall) < 1e-6,
            f"{name}: {calls} calls, {total} ns, {shortfall:.3f}% below "
            f"(opscope: {r and (r['calls'], r['total_ns'], r['shortfall_pct'])})")
share = 100.0 * sum(t for _, t, _ in slow.values()) / checked
c.check(len(findings) == 1 and f"{share:.1f}% of the AI Core tasks' time" in findings[0]["title"],
        f"the finding gives their share, {share:.1f}%: {findings and findings[0]['title']}")
# The database export: its AICORE_FREQ table is the same clock. As recorded
# (1800 MHz throughout) the check is silent; in a copy whose samples after the
# first read 1500 MHz, the operators that run after it are 16.7% below.
database = os.path.join(data, "ascend", "level1_db", "rank0_ascend_pt")
plain = [r for r in c.analyze(opscope, database, "db")[0:1] if r.returncode != 0]
c.check(not plain, "the database rank: analysed")
with open(os.path.join(c.scratch, "db", "analysis.json")) as f:
    ids = [r["id"] for r in json.load(f)["results"] if r["section"] == "findings"]
c.check("ai_core_clock" not in ids, f"the database rank as recorded: no clock finding ({ids})")
slowed, db_file = c.copy_rank(database, "db_slowed")
con = sqlite3.connect(db_file)
con.execute("UPDATE AICORE_FREQ SET freq = 1500 WHERE timestampNs > "
            "(SELECT MIN(timestampNs) FROM AICORE_FREQ)")
con.commit()
con.close()
result, out = c.analyze(opscope, slowed, "db_slowed_out")
c.check(result.returncode == 0, "the slowed database rank: analysed")
with open(os.path.join(out, "analysis.json")) as f:
    results = json.load(f)["results"]
rows = [r for r in results if r["section"] == "core_clock"]
c.check(any(r["id"] == "ai_core_clock" for r in results if r["section"] == "findings") and rows and
        all(r["min_mhz"] == 1500 and abs(r["shortfall_pct"] - 100 / 6) < 1e-6 for r in rows),
        f"the slowed database rank: {len(rows)} operators at 1500 MHz, 16.7% below")
# A multi-die part: AICORE_FREQ with a dieId column (newer exports) and a
# second die's samples, 1500 MHz after the first. No task says which die ran
# it, so the clock check is left out, said in the import notes, and no
# down-clock is claimed.
dies, db_file = c.copy_rank(database, "db_dies")
con = sqlite3.connect(db_file)
con.execute("ALTER TABLE AICORE_FREQ ADD COLUMN dieId INTEGER DEFAULT 0")
con.execute("INSERT INTO AICORE_FREQ (deviceId, timestampNs, freq, dieId) "
            "SELECT deviceId, timestampNs, CASE WHEN timestampNs > (SELECT MIN(timestampNs) "
            "FROM AICORE_FREQ) THEN 1500 ELSE freq END, 1 FROM AICORE_FREQ")
con.commit()
con.close()
result, out = c.analyze(opscope, dies, "db_dies_out")
with open(os.path.join(out, "analysis.json")) as f:
    results = json.load(f)["results"]
notes = " ".join(r["note"] for r in results if r["section"] == "import_notes")
c.check(result.returncode == 0 and
        not any(r["id"] == "ai_core_clock" for r in results if r["section"] == "findings") and
        "the AI Core clocks of 2 dies" in notes,
        f"two dies' clocks: no down-clock claimed, the check said to be left out ({notes[-160:]})")
# The same change left in the database's write-ahead log (a writer still
# open): its tables are read through the log, not as the file alone has them.
logged, db_file = c.copy_rank(database, "db_logged")
writer = sqlite3.connect(db_file)
journal = writer.execute("PRAGMA journal_mode").fetchone()[0]
writer.execute("PRAGMA wal_autocheckpoint = 0")
with writer:
    writer.execute("UPDATE AICORE_FREQ SET freq = 1500 WHERE timestampNs > "
                   "(SELECT MIN(timestampNs) FROM AICORE_FREQ)")
c.check(journal == "wal" and os.path.getsize(db_file + "-wal") > 0,
        f"the sample's database is in WAL mode ({journal}); the change is in its log")
result, out = c.analyze(opscope, logged, "db_logged_out")
writer.close()
with open(os.path.join(out, "analysis.json")) as f:
    rows = [r for r in json.load(f)["results"] if r["section"] == "core_clock"]
c.check(result.returncode == 0 and rows and all(r["min_mhz"] == 1500 for r in rows),
        f"read through the write-ahead log: {len(rows)} operators at 1500 MHz")
sys.exit(c.done())
