#!/usr/bin/env python3
"""rocprofv3's CSV output (its default format; importers/rocprof/rocprof_csv.h)
read as the same run in JSON is, and each companion file as written.

1. The real rocprofv3 JSON sample (rocprofv3/908_results.json.gz: 43,915
   kernel dispatches on 8 MI350X) written out as rocprofv3 writes CSV
   (PID_kernel_trace.csv and PID_agent_info.csv with the columns of
   rocprofiler-sdk's generateCSV.cpp and its guide), then analysed: every
   kernel's count and total time equal to this script's sums over the JSON,
   the device named from agent_info.csv, and the steps and the first finding
   equal to opscope's analysis of the JSON itself. Again with a newer
   release's columns (a leading Guid, Stream_Id, agents written "Agent N"):
   the same kernels.
2. rocprofiler-sdk's documentation samples (tests/data/rocprofv3/csv_docs,
   real output the guide prints, from separate runs) under one prefix: the
   kernels, both copies by direction, the HIP calls and the ROCTx ranges as
   this script reads the CSVs (a range of no length is a mark, not an event).
3. A row whose timestamp is not a number is counted and left out, the rest
   read; a kernel trace without End_Timestamp is refused naming the column.

    rocprof_csv_test.py OPSCOPE DATA_DIR
"""
import collections
import csv
import gzip
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import Checks  # noqa: E402

opscope, data = sys.argv[1:3]
c = Checks()

KERNEL_COLUMNS = ["Kind", "Agent_Id", "Queue_Id", "Thread_Id", "Dispatch_Id", "Kernel_Id",
                  "Kernel_Name", "Correlation_Id", "Start_Timestamp", "End_Timestamp",
                  "Private_Segment_Size", "Group_Segment_Size", "Workgroup_Size_X",
                  "Workgroup_Size_Y", "Workgroup_Size_Z", "Grid_Size_X", "Grid_Size_Y",
                  "Grid_Size_Z"]
NEWER_COLUMNS = ["Guid", "Kind", "Agent_Id", "Queue_Id", "Stream_Id", "Thread_Id", "Dispatch_Id",
                 "Kernel_Id", "Kernel_Name", "Correlation_Id", "Start_Timestamp", "End_Timestamp",
                 "Lds_Block_Size", "Scratch_Size", "Vgpr_Count", "Accum_Vgpr_Count", "Sgpr_Count",
                 "Workgroup_Size_X", "Workgroup_Size_Y", "Workgroup_Size_Z", "Grid_Size_X",
                 "Grid_Size_Y", "Grid_Size_Z"]
AGENT_COLUMNS = ["Node_Id", "Logical_Node_Id", "Agent_Type", "Cpu_Cores_Count", "Simd_Count",
                 "Cpu_Core_Id_Base", "Simd_Id_Base", "Max_Waves_Per_Simd", "Lds_Size_In_Kb",
                 "Gds_Size_In_Kb", "Num_Gws", "Wave_Front_Size", "Num_Xcc", "Cu_Count",
                 "Array_Count", "Num_Shader_Banks", "Simd_Arrays_Per_Engine",
                 "Cu_Per_Simd_Array", "Simd_Per_Cu", "Max_Slots_Scratch_Cu", "Gfx_Target_Version",
                 "Vendor_Id", "Device_Id", "Location_Id", "Domain", "Drm_Render_Minor",
                 "Num_Sdma_Engines", "Num_Sdma_Xgmi_Engines", "Num_Sdma_Queues_Per_Engine",
                 "Num_Cp_Queues", "Max_Engine_Clk_Ccompute", "Max_Engine_Clk_Fcompute",
                 "Sdma_Fw_Version", "Fw_Version", "Capability", "Cu_Per_Engine",
                 "Max_Waves_Per_Cu", "Family_Id", "Workgroup_Max_Size", "Grid_Max_Size",
                 "Local_Mem_Size", "Hive_Id", "Gpu_Id", "Workgroup_Max_Dim_X",
                 "Workgroup_Max_Dim_Y", "Workgroup_Max_Dim_Z", "Grid_Max_Dim_X", "Grid_Max_Dim_Y",
                 "Grid_Max_Dim_Z", "Name", "Vendor_Name", "Product_Name", "Model_Name"]


def write_csv(path, columns, rows):
    """As rocprofv3 writes them: the header and text fields quoted, numbers bare."""
    with open(path, "w", newline="") as f:
        w = csv.writer(f, quoting=csv.QUOTE_NONNUMERIC, lineterminator="\n")
        w.writerow(columns)
        for r in rows:
            w.writerow([r.get(k, 0) for k in columns])


def analysis(out):
    with open(os.path.join(out, "analysis.json")) as f:
        return json.load(f)


def findings(out):
    return [r for r in analysis(out)["results"] if r["section"] == "findings"]


def analyze(path, name, ok=True):
    run, out = c.analyze(opscope, path, name)
    if ok:
        c.check(run.returncode == 0, f"{name}: analysed (exit {run.returncode}: "
                f"{run.stderr[-300:]})")
    return run, out


def kernels_table(out):
    return {r["operator"]: (int(r["count"]), int(r["total_ns"])) for r in c.rows(out, "kernels")
            if r["category"] in ("kernel", "communication")}


def symbol(name):
    """A kernel's name without its code object's descriptor suffix, as
    rocprofiler-sdk's kernel symbols carry it ('.kd', ' [clone .kd]')."""
    for suffix in (" [clone .kd]", ".kd"):
        if name.endswith(suffix):
            return name[:-len(suffix)]
    return name


# 1. The JSON sample as CSV.
with gzip.open(os.path.join(data, "rocprofv3", "908_results.json.gz"), "rt") as f:
    tool = json.load(f)["rocprofiler-sdk-tool"][0]
pid = tool["metadata"]["pid"]
agents = {a["id"]["handle"]: a for a in tool["agents"]}
symbols = {k["kernel_id"]: k.get("demangled_kernel_name") or k["kernel_name"]
           for k in tool["kernel_symbols"]}
rows, want = [], collections.defaultdict(lambda: [0, 0])
for r in tool["buffer_records"]["kernel_dispatch"]:
    info = r["dispatch_info"]
    name = symbols[info["kernel_id"]]
    rows.append({"Kind": "KERNEL_DISPATCH", "Agent_Id": agents[info["agent_id"]["handle"]]["node_id"],
                 "Queue_Id": info["queue_id"]["handle"], "Thread_Id": r["thread_id"],
                 "Dispatch_Id": info["dispatch_id"], "Kernel_Id": info["kernel_id"],
                 "Kernel_Name": name, "Correlation_Id": r["correlation_id"]["internal"],
                 "Start_Timestamp": r["start_timestamp"], "End_Timestamp": r["end_timestamp"],
                 "Workgroup_Size_X": info["workgroup_size"]["x"]})
    want[symbol(name)][0] += 1
    want[symbol(name)][1] += r["end_timestamp"] - r["start_timestamp"]
agent_rows = [{"Node_Id": a["node_id"], "Logical_Node_Id": a["logical_node_id"],
               "Agent_Type": "GPU" if a["type"] == 2 else "CPU", "Name": a["name"],
               "Vendor_Name": "AMD", "Product_Name": a["product_name"], "Model_Name": ""}
              for a in tool["agents"]]
run_dir = os.path.join(c.scratch, "run")
os.makedirs(run_dir)
write_csv(os.path.join(run_dir, f"{pid}_kernel_trace.csv"), KERNEL_COLUMNS, rows)
write_csv(os.path.join(run_dir, f"{pid}_agent_info.csv"), AGENT_COLUMNS, agent_rows)

_, out_csv = analyze(run_dir, "csv_folder")
got = kernels_table(out_csv)
bad = [n for n, (count, total) in want.items() if got.get(n) != (count, total)]
c.check(len(got) == len(want) and not bad,
        f"{len(want)} kernels, each count and total as the JSON's dispatches: {len(got)} read, "
        f"{len(bad)} differ ({bad[:2]})")
doc = analysis(out_csv)
device = json.dumps(doc)
c.check("AMD Instinct MI350X" in device, "the device named from agent_info.csv")
_, out_json = analyze(os.path.join(data, "rocprofv3", "908_results.json.gz"), "json")
steps_csv = [(r["step"], r["status"], r["duration_ns"]) for r in c.rows(out_csv, "steps")]
steps_json = [(r["step"], r["status"], r["duration_ns"]) for r in c.rows(out_json, "steps")]
c.check(steps_csv and steps_csv == steps_json,
        f"the same steps as the JSON's analysis: {len(steps_csv)} and {len(steps_json)}")
first_csv, first_json = findings(out_csv)[:1], findings(out_json)[:1]
c.check(first_csv and first_json and first_csv[0]["id"] == first_json[0]["id"]
        and first_csv[0]["title"] == first_json[0]["title"],
        f"the same first finding: {first_csv[0]['title'][:100] if first_csv else None}")
_, out_file = analyze(os.path.join(run_dir, f"{pid}_kernel_trace.csv"), "csv_file")
c.check(kernels_table(out_file) == got and "AMD Instinct MI350X" in json.dumps(analysis(out_file)),
        "the kernel trace named directly brings its agent_info.csv")

# rocprofv3's default layout: OUTPUT_DIR/HOSTNAME/PID_*; named the output
# folder, each host's files are found, one run written in two formats read once.
for layout, files in (("csv_only", ["csv"]), ("csv_and_json", ["csv", "json"])):
    host = os.path.join(c.scratch, layout + "_in", "node01")
    os.makedirs(host)
    if "csv" in files:
        for n in (f"{pid}_kernel_trace.csv", f"{pid}_agent_info.csv"):
            with open(os.path.join(run_dir, n), "rb") as src, \
                    open(os.path.join(host, n), "wb") as dst:
                dst.write(src.read())
    if "json" in files:
        with open(os.path.join(data, "rocprofv3", "908_results.json.gz"), "rb") as src, \
                open(os.path.join(host, f"{pid}_results.json.gz"), "wb") as dst:
            dst.write(src.read())
    _, out_layout = analyze(os.path.join(c.scratch, layout + "_in"), layout)
    formats = {r["format"] for r in c.rows(out_layout, "kernels")}
    unused = json.dumps(c.rows(out_layout, "unused_files"))
    want_format = "rocprofv3-json" if "json" in files else "rocprofv3-csv"
    c.check(formats == {want_format} and kernels_table(out_layout) == got,
            f"{layout}: the host folder's run read once, as {want_format}: {formats}")
    if "json" in files:
        c.check(f"{pid}_kernel_trace.csv" in unused and "another format" in unused,
                f"{layout}: the CSV of the same process listed as not read: {unused[:160]}")

# Compressed: the kernel trace and its agent_info.csv gzipped, as a job may
# keep them; the companion is found under its container's suffix.
gz_dir = os.path.join(c.scratch, "gz_in")
os.makedirs(gz_dir)
for n in (f"{pid}_kernel_trace.csv", f"{pid}_agent_info.csv"):
    with open(os.path.join(run_dir, n), "rb") as src, \
            gzip.open(os.path.join(gz_dir, n + ".gz"), "wb") as dst:
        dst.write(src.read())
_, out_gz = analyze(os.path.join(gz_dir, f"{pid}_kernel_trace.csv.gz"), "gz")
c.check(kernels_table(out_gz) == got and "AMD Instinct MI350X" in json.dumps(analysis(out_gz)),
        "gzipped: the same kernels, and the gzipped agent_info.csv read beside")

newer_dir = os.path.join(c.scratch, "newer")
os.makedirs(newer_dir)
newer = [dict(r, Guid="0000640a", Agent_Id=f"Agent {r['Agent_Id']}", Stream_Id=0) for r in rows]
write_csv(os.path.join(newer_dir, "out_kernel_trace.csv"), NEWER_COLUMNS, newer)
_, out_newer = analyze(os.path.join(newer_dir, "out_kernel_trace.csv"), "newer")
c.check(kernels_table(out_newer) == got, "a newer release's columns and 'Agent N': the same kernels")

# 2. The guide's samples under one prefix.
docs = os.path.join(data, "rocprofv3", "csv_docs")


def read_rows(name):
    with open(os.path.join(docs, name), newline="") as f:
        return list(csv.DictReader(f))


kernels = read_rows("199_kernel_trace.csv")
_, out_docs = analyze(os.path.join(docs, "199_kernel_trace.csv"), "docs")
want_docs = collections.defaultdict(lambda: [0, 0])
for k in kernels:
    want_docs[k["Kernel_Name"]][0] += 1
    want_docs[k["Kernel_Name"]][1] += int(k["End_Timestamp"]) - int(k["Start_Timestamp"])
c.check(kernels_table(out_docs) == {n: tuple(v) for n, v in want_docs.items()},
        f"the guide's {len(kernels)} kernel dispatches")
unusable = next((r for r in c.rows(out_docs, "trace_health")
                 if r["check"].startswith("records not usable")), {})
c.check(unusable.get("count") == "0",
        f"the blank line ending the guide's kernel trace is no bad record: {unusable.get('count')}")
copies = read_rows("199_memory_copy_trace.csv")
transfers = {r["direction"]: r for r in c.rows(out_docs, "transfers")}
for direction, key in (("HtoD", "MEMORY_COPY_HOST_TO_DEVICE"),
                       ("DtoH", "MEMORY_COPY_DEVICE_TO_HOST")):
    mine = [r for r in copies if r["Direction"] == key]
    total = sum(int(r["End_Timestamp"]) - int(r["Start_Timestamp"]) for r in mine)
    row = transfers.get(direction, {})
    c.check(int(row.get("count", -1)) == len(mine) and int(row.get("total_ns", -1)) == total,
            f"{direction} copies: {len(mine)}, {total} ns: {row.get('count')} {row.get('total_ns')}")
calls = read_rows("199_hip_api_trace.csv")
host = {r["operator"]: int(r["count"]) for r in c.rows(out_docs, "host_calls")}
want_calls = collections.Counter(r["Function"] for r in calls)
c.check(all(host.get(n) == k for n, k in want_calls.items()),
        f"the {len(calls)} HIP calls by name: {dict(want_calls)} vs "
        f"{ {n: host.get(n) for n in want_calls} }")
markers = read_rows("199_marker_api_trace.csv")
ranges = [m for m in markers if m["Start_Timestamp"] != m["End_Timestamp"]]
annotations = {r["operator"]: int(r["count"]) for r in c.rows(out_docs, "annotations")}
c.check(all(annotations.get(m["Function"]) == 1 for m in ranges)
        and not any(m["Function"] in annotations for m in markers if m not in ranges),
        f"{len(ranges)} ROCTx ranges as annotations, {len(markers) - len(ranges)} marks not: "
        f"{annotations}")

# 3. Damage.
broken_dir = os.path.join(c.scratch, "broken")
os.makedirs(broken_dir)
damaged = [dict(r) for r in kernels]
damaged[3]["Start_Timestamp"] = "abc"
with open(os.path.join(broken_dir, "7_kernel_trace.csv"), "w", newline="") as f:
    w = csv.DictWriter(f, fieldnames=list(kernels[0].keys()), quoting=csv.QUOTE_ALL)
    w.writeheader()
    w.writerows(damaged)
_, out_broken = analyze(os.path.join(broken_dir, "7_kernel_trace.csv"), "broken")
read = sum(n for n, _ in kernels_table(out_broken).values())
health = json.dumps(c.rows(out_broken, "trace_health")) + json.dumps(analysis(out_broken))
c.check(read == len(kernels) - 1 and "left out" in health,
        f"a row without a valid start is counted and left out: {read} of {len(kernels)} read")
with open(os.path.join(broken_dir, "8_kernel_trace.csv"), "w") as f:
    f.write('"Kind","Agent_Id","Queue_Id","Kernel_Name","Correlation_Id","Start_Timestamp"\n'
            '"KERNEL_DISPATCH",1,1,"k",1,100\n')
run, _ = analyze(os.path.join(broken_dir, "8_kernel_trace.csv"), "no_end", ok=False)
c.check(run.returncode != 0 and "End_Timestamp" in run.stderr,
        f"no End_Timestamp: refused naming it (exit {run.returncode}: {run.stderr.strip()[:160]})")
sys.exit(c.done())
