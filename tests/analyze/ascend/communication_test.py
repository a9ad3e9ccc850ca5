#!/usr/bin/env python3
"""Communication across ranks, checked against an independent computation with
Python's json module.

The fixture: a job folder of two ranks, each a copy of the real level-1
torch_npu sample (tests/data/ascend/level1_text). Rank 1's files are changed
as a real second rank's would differ, with two planted faults:
- communication.json: rank 1 waits 0.01 ms in every operation, so it is the
  rank that arrives last and the one rank 0 waits for;
- communication_matrix.json: local ranks 0 and 1 swap places (rank 1's own
  links: its LOCAL self-link 1-1, and 1-k), and link 1-5 takes three times as
  long (a slow HCCS link).
The expected figures follow docs/formats/ascend.md 3.5/3.6: times in ms, sizes in MB of
10^6 bytes, bandwidth = size / time; "Total Op Info" and SDMA (the sum of the
other transports) left out; only the "total" entries of the matrix; links of
one transport compared with their median when three or more moved >= 1 MB,
LOCAL left out, slow below 80% of it.

    communication_test.py OPSCOPE DATA_DIR
"""
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

TRANSPORTS = ("RDMA", "HCCS", "PCIE", "SIO")


def ops_of(doc):
    for step, kinds in doc.items():
        for kind, ops in kinds.items():
            for key, info in ops.items():
                if key.lower().startswith("total"):
                    continue
                yield step, kind, key, info


def build(data, root):
    sample = os.path.join(data, "ascend", "level1_text", "rank0_ascend_pt")
    for rank in (0, 1):
        dst = os.path.join(root, "host", "h_%d_20260101000000000_ascend_pt" % rank)
        shutil.copytree(sample, dst)
        os.remove(os.path.join(dst, "profiler_info_0.json"))
        with open(os.path.join(dst, "profiler_info_%d.json" % rank), "w") as f:
            json.dump({"rank_id": rank}, f)
    out = os.path.join(root, "host", "h_1_20260101000000000_ascend_pt", "ASCEND_PROFILER_OUTPUT")
    path = os.path.join(out, "communication.json")
    doc = json.load(open(path))
    for _, _, _, info in ops_of(doc):
        info["Communication Time Info"]["Wait Time(ms)"] = 0.01
    json.dump(doc, open(path, "w"))
    path = os.path.join(out, "communication_matrix.json")
    doc = json.load(open(path))
    for kinds in doc.values():
        for groups in kinds.values():
            for key in list(groups):
                links = groups[key]
                renamed = {}
                for pair, figures in links.items():
                    src, dst = pair.split("-")
                    swap = {"0": "1", "1": "0"}  # rank 1's view: local ranks 0 and 1 swapped
                    src, dst = swap.get(src, src), swap.get(dst, dst)
                    if pair == "0-5":
                        figures["Transit Time(ms)"] *= 3
                    renamed[src + "-" + dst] = figures
                groups[key] = renamed
    json.dump(doc, open(path, "w"))


def expected(root):
    ranks, links, waits = {}, [], {}
    for rank in (0, 1):
        out = os.path.join(root, "host", "h_%d_20260101000000000_ascend_pt" % rank,
                           "ASCEND_PROFILER_OUTPUT")
        comm = json.load(open(os.path.join(out, "communication.json")))
        r = {"operations": 0, "elapse": 0.0, "transit": 0.0, "wait": 0.0, "bytes": {}, "ms": {}}
        for step, kind, key, info in ops_of(comm):
            t = info["Communication Time Info"]
            r["operations"] += 1
            r["elapse"] += t["Elapse Time(ms)"]
            r["transit"] += t["Transit Time(ms)"]
            r["wait"] += t["Wait Time(ms)"]
            waits.setdefault((step, kind, key), {})[rank] = t["Wait Time(ms)"]
            for transport, b in info["Communication Bandwidth Info"].items():
                if transport in TRANSPORTS and b["Transit Size(MB)"] > 0:
                    r["bytes"][transport] = r["bytes"].get(transport, 0) + b["Transit Size(MB)"]
                    r["ms"][transport] = r["ms"].get(transport, 0) + b["Transit Time(ms)"]
        ranks[rank] = r
        matrix = json.load(open(os.path.join(out, "communication_matrix.json")))
        for step, kinds in matrix.items():
            for kind, groups in kinds.items():
                for key, pairs in groups.items():
                    type_agg = key.split("@")[0]
                    if not type_agg.endswith("-total"):
                        continue
                    for pair, f in pairs.items():
                        if f["Transport Type"] == "LOCAL" or f["Transit Size(MB)"] < 1:
                            continue
                        links.append((rank, pair, f["Transport Type"],
                                      f["Transit Size(MB)"] / f["Transit Time(ms)"]))
    # rank 1 waits least everywhere: rank 0's waits are the time spent for it
    others_waited = sum(w[0] for w in waits.values() if len(w) == 2 and w[1] < w[0])
    by_type = {}
    for link in links:
        by_type.setdefault(link[2], []).append(link)
    slow = []
    for transport, group in by_type.items():
        if len(group) < 3:
            continue
        median = statistics.median(l[3] for l in group)
        slow += [(l, median) for l in group if l[3] < 0.8 * median]
    return ranks, others_waited, slow


def main():
    opscope, data = sys.argv[1], sys.argv[2]
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        root = os.path.join(tmp, "job")
        build(data, root)
        ranks, others_waited, slow = expected(root)
        subprocess.run([opscope, "analyze", root, "--top", "0", "--format", "json", "--out",
                        os.path.join(tmp, "report")], check=True, stdout=subprocess.DEVNULL)
        results = json.load(open(os.path.join(tmp, "report", "analysis.json")))["results"]
    got = {r["rank"]: r for r in results if r.get("section") == "reported_communication"}
    for rank, want in ranks.items():
        g = got.get(rank)
        if g is None:
            failures.append("rank %d: no communication row" % rank)
            continue
        # analysis.json in base units: ms figures of the files are ns there.
        for key, value in (("operations", want["operations"]), ("elapse_ns", want["elapse"] * 1e6),
                           ("transit_ns", want["transit"] * 1e6), ("wait_ns", want["wait"] * 1e6)):
            if abs(g[key] - value) > (0 if key == "operations" else 10):
                failures.append("rank %d: %s %s, expected %s" % (rank, key, g[key], value))
        for transport, mb in want["bytes"].items():
            text = "%s %.2f GB/s (%.1f MB)" % (transport, mb / want["ms"][transport], mb)
            if text not in g["transports"]:
                failures.append("rank %d: %r not in %r" % (rank, text, g["transports"]))
    if got.get(1, {}).get("arrived_last") != ranks[1]["operations"]:
        failures.append("rank 1 should arrive last in all %d operations: %s" %
                        (ranks[1]["operations"], got.get(1)))
    if abs(got.get(1, {}).get("others_waited_ns", -1) - others_waited * 1e6) > 10:
        failures.append("others waited %s ns for rank 1, expected %s ms" %
                        (got.get(1, {}).get("others_waited_ns"), others_waited))
    titles = [r for r in results if r.get("section") == "reported_communication"]
    links = [r for r in results if r.get("section") == "reported_links"]
    flagged = [(r["rank"], "%d-%d" % (r["src"], r["dst"])) for r in links if r["slow"] == "yes"]
    want_flagged = [(l[0], l[1]) for l, _ in slow]
    if flagged != want_flagged or want_flagged != [(1, "1-5")]:
        failures.append("slow links %s, expected %s (the planted 1-5)" % (flagged, want_flagged))
    for r in links:
        if r["slow"] == "yes":
            (l, median), = slow
            if abs(r["bytes_per_s"] - l[3] * 1e9) > 1e3 or \
                    abs(r["median_bytes_per_s"] - median * 1e9) > 1e3:
                failures.append("slow link %s: %s of %s B/s, expected %s of %s GB/s" %
                                (l[1], r["bytes_per_s"], r["median_bytes_per_s"], l[3], median))
    if not titles:
        failures.append("no reported_communication rows")
    # Two identical ranks (rank 1's communication.json a copy of rank 0's):
    # their waits tie in every operation, so neither arrived last (issue 38).
    with tempfile.TemporaryDirectory() as tmp:
        root = os.path.join(tmp, "job")
        build(data, root)
        files = [os.path.join(root, "host", "h_%d_20260101000000000_ascend_pt" % r,
                              "ASCEND_PROFILER_OUTPUT", "communication.json") for r in (0, 1)]
        shutil.copy(files[0], files[1])
        report = os.path.join(tmp, "report")
        run = subprocess.run([opscope, "analyze", root, "--top", "0", "--out", report],
                             capture_output=True, text=True)
        rows = [r for r in json.load(open(os.path.join(report, "analysis.json")))["results"]
                if r.get("section") == "reported_communication"]
        if any(r["arrived_last"] != 0 or r["others_waited_ns"] != 0 for r in rows) or \
                "wait for rank" in run.stdout:
            failures.append("identical ranks: no rank arrives last, none is waited for: %s" % rows)
    if failures:
        print("\n".join(failures))
        return 1
    print("communication: 2 ranks, rank 1 waited for (%.3f ms), slow link 1-5 found" %
          others_waited)
    return 0


if __name__ == "__main__":
    sys.exit(main())
