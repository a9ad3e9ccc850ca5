#!/usr/bin/env python3
"""The small_packets and rdma_retransmission rules against msprof-analyze's
published packet and retransmission rules (the latter at the end). The
packet rule
(its advisor's rules/en/packet.yaml: min_sdma_size 16 MB, min_rdma_size 1 MB,
min_sdma_ratio and min_rdma_ratio 0.2), applied here to each rank's
communication.json read with Python's json module (docs/formats/ascend.md
3.5: per operation, "Communication Bandwidth Info" by transport with
"Transit Size(MB)" in 10^6 bytes; SDMA is HCCS + PCIE + SIO):

- of the operations whose SDMA size is above 0, those under 16 MB are small;
  of those whose RDMA size is above 0, those under 1 MB;
- the rule fires where the small ones are more than 20% of either, and its
  title gives how many small operations and their transfer time.

Checked on every real rank with a communication.json (no operation is small
there: no finding) and on copies of one rank whose operations were rewritten
small: half of them over HCCS (fires), one of five (20%, not more: silent),
and over RDMA under 1 MB (fires).

    small_packets_test.py OPSCOPE DATA_DIR
"""
import json
import os
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from checks import Checks  # noqa: E402

opscope, data = sys.argv[1:3]
c = Checks()
RULE = {"SDMA": (16.0, 0.2), "RDMA": (1.0, 0.2)}  # MB, share


def expected(path):
    with open(path) as f:
        doc = json.load(f)
    count = {t: [0, 0, 0.0] for t in RULE}  # ops, small, small transit ms
    for step in doc.values():
        for ops in step.values():
            for name, op in ops.items():
                if name == "Total Op Info":
                    continue
                bw = op.get("Communication Bandwidth Info", {})
                sizes = {"SDMA": sum(bw.get(t, {}).get("Transit Size(MB)", 0) for t in ("HCCS", "PCIE", "SIO")),
                         "RDMA": bw.get("RDMA", {}).get("Transit Size(MB)", 0)}
                times = {"SDMA": sum(bw.get(t, {}).get("Transit Time(ms)", 0) for t in ("HCCS", "PCIE", "SIO")),
                         "RDMA": bw.get("RDMA", {}).get("Transit Time(ms)", 0)}
                for t, (min_mb, _) in RULE.items():
                    if sizes[t] > 0:
                        count[t][0] += 1
                        if sizes[t] < min_mb:
                            count[t][1] += 1
                            count[t][2] += times[t]
    small = sum(n[1] for t, n in count.items() if n[0] and n[1] > RULE[t][1] * n[0])
    ms = sum(n[2] for t, n in count.items() if n[0] and n[1] > RULE[t][1] * n[0])
    return (small, ms) if small else None


def finding(rank, name):
    run, out = c.analyze(opscope, rank, name)
    if run.returncode != 0:
        return "failed: " + run.stderr[:200]
    with open(os.path.join(out, "analysis.json")) as f:
        got = [r for r in json.load(f)["results"]
               if r.get("section") == "findings" and r["id"] == "small_packets"]
    return got[0]["title"] if got else None


def check(rank, path, label):
    want = expected(path)
    got = finding(rank, label)
    if want is None:
        c.check(got is None, f"{label}: no small_packets finding (got {got})")
    else:
        text = f"{want[0]} communication operations move little data each ({want[1]:.3f} ms"
        c.check(got is not None and text in got, f"{label}: '{text}' (got {got})")


ranks = []
for root, _, files in sorted(os.walk(os.path.join(data, "ascend"))):
    if "communication.json" in files and root.endswith("ASCEND_PROFILER_OUTPUT"):
        ranks.append(os.path.dirname(root))
        check(os.path.dirname(root), os.path.join(root, "communication.json"),
              os.path.relpath(os.path.dirname(root), data))
c.check(bool(ranks), "a real rank with communication.json was checked")

source = os.path.join(data, "ascend", "level1_text", "rank0_ascend_pt")


def edited_rank(edit):
    """A copy of the level-1 rank whose communication.json `edit(ops, kind)`
    changed (kind: the first step's collectives by name; ops: its
    operations): the rank's folder and the file."""
    tmp = tempfile.mkdtemp(dir=c.scratch)
    rank = os.path.join(tmp, "rank0_ascend_pt")
    shutil.copytree(source, rank)
    path = os.path.join(rank, "ASCEND_PROFILER_OUTPUT", "communication.json")
    with open(path) as f:
        doc = json.load(f)
    kind = next(iter(doc.values()))["collective"]
    edit([op for name, op in kind.items() if name != "Total Op Info"], kind)
    with open(path, "w") as f:
        json.dump(doc, f)
    return rank, path


def rewritten(label, edit):
    check(*edited_rank(edit), label)


def hccs(mb, ms):
    return {"Transit Size(MB)": mb, "Transit Time(ms)": ms, "Bandwidth(GB/s)": mb / ms,
            "Large Packet Ratio": 0.0, "Size Distribution": {}}


def half_small(ops, kind):
    for op in ops[: len(ops) // 2]:
        op["Communication Bandwidth Info"]["HCCS"] = hccs(4.0, 0.5)


def one_in_five(ops, kind):
    while len(ops) < 5:  # five operations, one of them small: 20%, not more
        ops.append(json.loads(json.dumps(ops[-1])))
        kind[f"hcom_allReduce__999_{len(ops)}_1@1"] = ops[-1]
    ops[0]["Communication Bandwidth Info"]["HCCS"] = hccs(4.0, 0.5)


def rdma_small(ops, kind):
    for op in ops:
        op["Communication Bandwidth Info"]["RDMA"] = hccs(0.25, 0.1)


rewritten("half of the operations under 16 MB over HCCS", half_small)
rewritten("one of five under 16 MB", one_in_five)
rewritten("every operation under 1 MB over RDMA", rdma_small)

# The retransmission rule (msprof-analyze's rules/en/rdma_analysis.yaml:
# min_retransmission_time 4000 ms): an operation of 4 s or more whose RDMA
# transit time exceeds 4 s is named; one whose transit is 3 s is not.


def retransmission(label, transit_ms, fires):
    def slow(ops, kind):
        ops[0]["Communication Time Info"]["Elapse Time(ms)"] = transit_ms + 100.0
        ops[0]["Communication Bandwidth Info"]["RDMA"] = hccs(64.0, transit_ms)

    rank, path = edited_rank(slow)
    with open(path) as f:
        name = next(n for n in next(iter(json.load(f).values()))["collective"]
                    if n != "Total Op Info")
    run, out = c.analyze(opscope, rank, label)
    with open(os.path.join(out, "analysis.json")) as f:
        got = [r for r in json.load(f)["results"]
               if r.get("section") == "findings" and r["id"] == "rdma_retransmission"]
    op_name = name.split("@")[0]
    c.check(bool(got) == fires and (not fires or op_name in got[0]["evidence"]),
            f"{label}: RDMA transit {transit_ms} ms: {'named' if fires else 'no finding'} "
            f"({[g['title'] for g in got]})")


retransmission("an RDMA transfer of 5 s", 5000.0, True)
retransmission("an RDMA transfer of 3 s", 3000.0, False)
sys.exit(c.done())
