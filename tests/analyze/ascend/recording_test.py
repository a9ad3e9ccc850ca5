#!/usr/bin/env python3
"""The "recording" table of `opscope analyze` (how each rank was recorded)
against an independent reading of the samples' profiler_info_{rank}.json with
Python's json module. The file's keys, from docs/formats/ascend.md 1.5: config.common_config
and config.experimental_config (keys with torch_npu's leading '_' dropped),
then torch_npu_version and cann_version where present. Values are rendered as
the table documents: strings as they are, true/false, null as "none", lists
joined with ", ", objects as "key=value, ...".

Then files that are not what they claim: a profiler_info that is not JSON, and
one without a config, are listed among the files not read with the error, and
the rest of the rank is analysed (exit 0).

    recording_test.py OPSCOPE DATA_DIR
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile


def text(v):
    if isinstance(v, bool):
        return "true" if v else "false"
    if v is None:
        return "none"
    if isinstance(v, list):
        return ", ".join(text(x) for x in v)
    if isinstance(v, dict):
        return ", ".join(f"{k}={text(x)}" for k, x in v.items())
    return str(v)


def expected(path):
    with open(path) as f:
        info = json.load(f)
    rows = []
    for part in ("common_config", "experimental_config"):
        for k, v in info["config"].get(part, {}).items():
            rows.append((k.lstrip("_"), text(v)))
    for k in ("torch_npu_version", "cann_version"):
        if k in info:
            rows.append((k, text(info[k])))
    return rows


def analyze(opscope, path):
    with tempfile.TemporaryDirectory() as report:  # the report folder, away from the data
        out = subprocess.run([opscope, "analyze", path, "--format", "json", "--out", report],
                             capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"FAIL analyze {path}: exit {out.returncode}: {out.stderr}")
    return json.loads(out.stdout)["results"]


def main():
    opscope, data = sys.argv[1], sys.argv[2]
    failures = []
    checked = 0
    for tree in ("level1_text", "level1_db", "level1_text_2rank"):
        root = os.path.join(data, "ascend", tree)
        results = analyze(opscope, root)
        got = {}
        for r in results:
            if r.get("section") == "recording":
                got.setdefault(r["trace"], []).append((r["setting"], r["value"]))
        for rank in sorted(os.listdir(root)):
            infos = [f for f in os.listdir(os.path.join(root, rank))
                     if f.startswith("profiler_info")]
            if not infos:
                continue
            want = expected(os.path.join(root, rank, infos[0]))
            traces = [t for t in got if f"/{rank}/" in t]
            if len(traces) != 1:
                failures.append(f"{tree}/{rank}: {len(traces)} recording tables, want 1")
                continue
            if got[traces[0]] != want:
                failures.append(f"{tree}/{rank}: recording {got[traces[0]]} != {want}")
            checked += 1
    if checked < 3:  # level1_text, level1_db and the 2-rank job's rank 0 (tests/data)
        failures.append(f"only {checked} ranks with a profiler_info checked, want 3")

    # Hostile copies of the level-1 rank: its profiler_info broken two ways.
    for name, content, error in (
            ("not JSON", "{ not json", "not JSON"),
            ("no config", '{"rank_id": 0}', "no 'config' object")):
        with tempfile.TemporaryDirectory() as tmp:
            rank = os.path.join(tmp, "rank0_ascend_pt")
            shutil.copytree(os.path.join(data, "ascend", "level1_text", "rank0_ascend_pt"), rank)
            with open(os.path.join(rank, "profiler_info_0.json"), "w") as f:
                f.write(content)
            results = analyze(opscope, tmp)
            unused = [r for r in results if r.get("section") == "unused_files"
                      and r["file"].endswith("profiler_info_0.json")]
            if not unused or "could not be read" not in unused[0]["reason"] \
                    or error not in unused[0]["reason"]:
                failures.append(f"{name}: profiler_info_0.json not listed with '{error}': {unused}")
            if any(r.get("section") == "recording" for r in results):
                failures.append(f"{name}: a recording table from a broken file")
            if not any(r.get("section") == "reported_steps" for r in results):
                failures.append(f"{name}: the rest of the rank was not analysed")
    for f in failures:
        print("FAIL", f)
    print(f"{checked} ranks' recording settings checked; {len(failures)} failures")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
