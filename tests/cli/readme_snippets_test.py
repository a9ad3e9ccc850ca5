#!/usr/bin/env python3
"""Every snippet of the README runs as written, and what the profiling examples
record analyses as what it is: complete steps with the work inside them, and a
diff of two of their traces with a verdict.

    readme_snippets_test.py README.md BUILD_DIR OPSCOPE CXX CC PYTHON LIBOPSCOPE LIBOPSCOPE_C

- ```cpp: compiled against the build's headers and libopscope.a, run in a
  fresh folder; its traces analysed.
- ```c: compiled against libopscope_c.so, run; the trace it prints analysed.
- ```python: run with the build's module (PYTHONPATH=BUILD_DIR/python).
- ```sh: each command is `make TARGET` for a target the Makefile has, or a
  line the Makefile runs verbatim (so `make python` and `make run` test them).

The expected step compute comes from the raw trace (Python's json, nothing of
opscope's): per ProfilerStep span, the union of the framework operators
(cat cpu_op) inside it, or where the trace has none, of its annotation scopes
but data loading.
"""
import decimal
import json
import os
import re
import subprocess
import sys
import tempfile

failures = []


def fail(message):
    failures.append(message)
    print("FAIL: " + message)


def blocks(readme):
    text = open(readme, encoding="utf-8").read()
    return re.findall(r"^```(\w+)\n(.*?)^```", text, re.M | re.S)


def ns(value):
    return int((decimal.Decimal(str(value)) * 1000).to_integral_value(decimal.ROUND_HALF_UP))


def union_within(spans, begin, end):
    spans = sorted((max(b, begin), min(e, end)) for b, e in spans if e > begin and b < end)
    total, cur_b, cur_e = 0, None, None
    for b, e in spans:
        if cur_e is None or b > cur_e:
            if cur_e is not None:
                total += cur_e - cur_b
            cur_b, cur_e = b, e
        else:
            cur_e = max(cur_e, e)
    if cur_e is not None:
        total += cur_e - cur_b
    return total


def expected_steps(trace):
    """ProfilerStep name -> (duration, compute) in ns, from the raw events."""
    events = json.load(open(trace, encoding="utf-8"))["traceEvents"]
    xs = [e for e in events if e.get("ph") == "X"]
    steps = [e for e in xs if e["name"].startswith("ProfilerStep#")]
    others = [e for e in xs if not e["name"].startswith("ProfilerStep#")]
    ops = [e for e in others if e.get("cat") == "cpu_op"]
    work = ops or [e for e in others if e.get("cat") == "user_annotation" and not re.search(
        r"(?i)dataloader|data_loader|next_data|__next__", e["name"])]
    spans = [(ns(e["ts"]), ns(e["ts"]) + ns(e["dur"])) for e in work]
    out = {}
    for s in steps:
        b, d = ns(s["ts"]), ns(s["dur"])
        out[s["name"]] = (d, union_within(spans, b, b + d))
    return out


def check_trace(opscope, trace, where, min_complete):
    """The steps opscope reports for `trace` against the raw events."""
    with tempfile.TemporaryDirectory() as out:
        run = subprocess.run([opscope, "analyze", trace, "--out", out], stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, text=True)
        if run.returncode != 0:
            fail("%s: opscope analyze %s exited %d: %s" % (where, trace, run.returncode,
                                                            run.stdout[-2000:]))
            return
        results = json.load(open(os.path.join(out, "analysis.json")))["results"]
    steps = {r["step"]: r for r in results if r["section"] == "steps"}
    expected = expected_steps(trace)
    if set(steps) != set(expected):
        fail("%s: steps %s, the trace has %s" % (where, sorted(steps), sorted(expected)))
        return
    complete = 0
    for name, (duration, compute) in sorted(expected.items()):
        got = steps[name]
        if got["status"] == "empty":
            fail("%s: %s is called empty; its work is %d ns of %d" % (where, name, compute,
                                                                     duration))
        complete += got["status"] == "complete"
        if got["duration_ns"] != duration or got["compute_ns"] != compute:
            fail("%s: %s: opscope %d ns with %d ns of compute, the raw trace %d with %d" %
                 (where, name, got["duration_ns"], got["compute_ns"], duration, compute))
        if compute <= 0:
            fail("%s: %s holds no work in the raw trace: the example records nothing" %
                 (where, name))
    if complete < min_complete:
        fail("%s: %d complete steps, at least %d expected" % (where, complete, min_complete))
    print("%s: %s: %d steps, %d complete, compute as in the raw trace" %
          (where, os.path.basename(trace), len(expected), complete))


def check_diff(opscope, before, after, where):
    run = subprocess.run([opscope, "diff", before, after, "--format", "json"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if run.returncode != 0:
        fail("%s: opscope diff exited %d: %s" % (where, run.returncode, run.stderr))
        return
    verdicts = [r for r in json.loads(run.stdout)["results"] if r.get("section") == "verdict"]
    verdict = verdicts[0].get("verdict", "") if verdicts else ""
    if verdict not in ("slower", "faster", "no change beyond noise"):
        fail("%s: diff of its two traces has no verdict: %r" % (where, verdict))
    else:
        print("%s: diff of its two traces: %s" % (where, verdict))


def traces_in(folder):
    if not os.path.isdir(folder):
        return []
    return sorted(os.path.join(folder, f) for f in os.listdir(folder) if f.endswith(".json"))


def main():
    readme, build, opscope, cxx, cc, python, lib, lib_c = sys.argv[1:9]
    source = os.path.dirname(os.path.abspath(readme))
    makefile = open(os.path.join(source, "Makefile"), encoding="utf-8").read()
    targets = set(re.findall(r"^([a-z][\w-]*):", makefile, re.M))
    recipe = {line.strip() for line in makefile.splitlines() if line.startswith("\t")}
    include = ["-I" + os.path.join(source, "include"), "-I" + os.path.join(build, "include")]
    seen = {}
    for lang, code in blocks(readme):
        seen[lang] = seen.get(lang, 0) + 1
        where = "README %s block %d" % (lang, seen[lang])
        with tempfile.TemporaryDirectory() as work:
            if lang == "cpp":
                src = os.path.join(work, "train.cc")
                open(src, "w").write(code)
                cmd = [cxx, "-std=c++20", "-O1", *include, src,
                       lib, "-lz", "-pthread",
                       "-o", os.path.join(work, "train")]
            elif lang == "c":
                src = os.path.join(work, "train.c")
                open(src, "w").write(code)
                cmd = [cc, "-std=c11", "-O1", *include, src, lib_c,
                       "-Wl,-rpath," + os.path.dirname(lib_c), "-o", os.path.join(work, "train")]
            elif lang == "python":
                open(os.path.join(work, "example.py"), "w").write(code)
                cmd = None
            elif lang == "sh":
                for line in code.splitlines():
                    command = line.split("#")[0].strip()
                    if not command:
                        continue
                    make = re.fullmatch(r"make ([\w-]+)", command)
                    if make and make.group(1) not in targets:
                        fail("%s: `%s`: the Makefile has no target %s" % (where, command,
                                                                         make.group(1)))
                    elif not make and command not in recipe:
                        fail("%s: `%s` is not a line the Makefile runs (make python, make "
                             "run): run it there, as written, or take it out" % (where, command))
                print("%s: its commands are the Makefile's" % where)
                continue
            else:
                fail("%s: no way to run a %s block" % (where, lang))
                continue
            if cmd is not None:
                built = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                       text=True)
                if built.returncode != 0:
                    fail("%s does not compile: %s" % (where, built.stdout[-3000:]))
                    continue
                run = [os.path.join(work, "train")]
                env = dict(os.environ)
            else:
                run = [python, "example.py"]
                env = dict(os.environ, PYTHONPATH=os.path.join(build, "python"))
            ran = subprocess.run(run, cwd=work, env=env, stdout=subprocess.PIPE,
                                 stderr=subprocess.STDOUT, text=True, timeout=300)
            if ran.returncode != 0:
                fail("%s exited %d: %s" % (where, ran.returncode, ran.stdout[-3000:]))
                continue
            if "Warning" in ran.stdout or "warning" in ran.stdout:
                fail("%s warns: %s" % (where, ran.stdout[-2000:]))
            traces = traces_in(os.path.join(work, "traces"))
            if lang == "c":
                printed = ran.stdout.strip().splitlines()[-1:]
                path = os.path.join(work, printed[0]) if printed else ""
                if not printed or not os.path.isfile(path):
                    fail("%s printed %r, not the trace it wrote" % (where, printed))
                    continue
                traces = [path]
            if len(traces) != (1 if lang == "c" else 2):
                fail("%s wrote %d traces: %s" % (where, len(traces), traces))
                continue
            for trace in traces:
                check_trace(opscope, trace, where, min_complete=2 if lang != "c" else 4)
            if len(traces) == 2:
                check_diff(opscope, traces[0], traces[1], where)
    for lang in ("cpp", "c", "python", "sh"):
        if lang not in seen:
            fail("the README has no %s example" % lang)
    if failures:
        print("%d failures" % len(failures))
        return 1
    print("README: %d snippets run as written" % sum(seen.values()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
