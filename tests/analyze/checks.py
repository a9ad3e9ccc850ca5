"""What the analyze tests that run the CLI share: checks that print and count,
a scratch folder that goes away, and `opscope analyze` into it.

    from checks import Checks, union, covered
    c = Checks()
    c.check(ok, "what")           # prints ok:/FAIL:, counts failures
    run, out = c.analyze(opscope, path, "name")
    sys.exit(c.done())            # prints the count; 1 if any failed
"""
import csv
import json
import os
import shutil
import subprocess
import tempfile


class Checks:
    def __init__(self):
        self.failures = 0
        self._scratch = tempfile.TemporaryDirectory()  # reports go here, never into the cwd
        self.scratch = self._scratch.name

    def check(self, ok, what):
        print(("ok: " if ok else "FAIL: ") + what)
        if not ok:
            self.failures += 1

    def analyze(self, opscope, path, name, *options, timeout=None):
        """`opscope analyze PATH --top 0 --out SCRATCH/NAME OPTIONS...`: the
        completed process and the report folder."""
        out = os.path.join(self.scratch, name)
        run = subprocess.run([opscope, "analyze", path, "--top", "0", "--out", out, *options],
                             capture_output=True, text=True, timeout=timeout)
        return run, out

    def analyze_events(self, opscope, events, name, filename="trace_view.json"):
        """Events (a trace's JSON) written to SCRATCH/NAME_in/FILENAME and
        analysed into SCRATCH/NAME, checked to exit 0: analysis.json's results."""
        folder = os.path.join(self.scratch, name + "_in")
        os.makedirs(folder)
        path = os.path.join(folder, filename)
        with open(path, "w") as f:
            json.dump(events, f)
        run, out = self.analyze(opscope, path, name)
        self.check(run.returncode == 0, f"{name}: analysed (exit {run.returncode})")
        with open(os.path.join(out, "analysis.json")) as f:
            return json.load(f)["results"]

    def copy_rank(self, rank_folder, name):
        """A copy of an Ascend rank folder at SCRATCH/NAME, to plant changes in,
        and the path of its torch_npu database (ascend_pytorch_profiler*.db)."""
        folder = os.path.join(self.scratch, name)
        shutil.copytree(rank_folder, folder)
        database = next(os.path.join(root, f) for root, _, names in sorted(os.walk(folder))
                        for f in sorted(names)
                        if f.startswith("ascend_pytorch_profiler") and f.endswith(".db"))
        return folder, database

    @staticmethod
    def rows(out, table):
        """The rows of a report's tables/TABLE.csv ([] where it has none)."""
        path = os.path.join(out, "tables", table + ".csv")
        if not os.path.exists(path):
            return []
        with open(path) as f:
            return list(csv.DictReader(f))

    def kernels_and_copies(self, out, want):
        """Each kernel of want["kernels"] (name -> count, total_ns) and each
        direction of want["copies"] (-> count, bytes, total_ns) as the report's
        kernels and transfers tables give them."""
        kernels = {r["operator"]: r for r in self.rows(out, "kernels")}
        for name, k in want["kernels"].items():
            got = kernels.get(name)
            self.check(got is not None and int(got["count"]) == k["count"]
                       and int(got["total_ns"]) == k["total_ns"],
                       f"kernel {name[:60]}: {k['count']} calls, {k['total_ns']} ns")
        transfers = {r["direction"]: r for r in self.rows(out, "transfers")}
        for direction, c in want.get("copies", {}).items():
            got = transfers.get(direction)
            self.check(got is not None and int(got["count"]) == c["count"]
                       and int(got["bytes"]) == c["bytes"] and int(got["total_ns"]) == c["total_ns"],
                       f"copies {direction}: {c['count']}, {c['bytes']} B, {c['total_ns']} ns")
        return kernels

    def done(self):
        print(f"{self.failures} failure(s)")
        return 1 if self.failures else 0


def union(spans):
    """(begin, end) spans merged into sorted, disjoint [begin, end] lists."""
    out = []
    for b, f in sorted(spans):
        if out and b <= out[-1][1]:
            out[-1][1] = max(out[-1][1], f)
        else:
            out.append([b, f])
    return out


def covered(merged, b, f):
    """How much of [b, f) a union() covers."""
    return sum(max(0, min(f, y) - max(b, x)) for x, y in merged)
