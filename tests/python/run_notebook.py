#!/usr/bin/env python3
"""Executes tests/python/analysis.ipynb headless (jupyter nbconvert --execute,
Debian's jupyter-nbconvert and python3-ipykernel) with the package under test
on PYTHONPATH, and checks what a reader would see: no cell failed, the
analysis renders as HTML with its charts (SVG, no script), and the tables
render as HTML tables.

    run_notebook.py NOTEBOOK DATA_DIR
"""
import os
import shutil
import subprocess
import sys
import tempfile

import nbformat

notebook, data = sys.argv[1:3]
if shutil.which("jupyter") is None:
    print("SKIP: jupyter (Debian jupyter-nbconvert) is not installed")
    sys.exit(77)
with tempfile.TemporaryDirectory() as tmp:
    out = os.path.join(tmp, "executed.ipynb")
    # The kernel runs in the notebook's folder: absolute paths only.
    pythonpath = os.pathsep.join(os.path.abspath(p) for p in
                                 os.environ.get("PYTHONPATH", "").split(os.pathsep) if p)
    env = dict(os.environ, OPSCOPE_TEST_DATA=os.path.abspath(data), PYTHONPATH=pythonpath,
               PYDEVD_DISABLE_FILE_VALIDATION="1")
    run = subprocess.run(["jupyter", "nbconvert", "--to", "notebook", "--execute",
                          "--ExecutePreprocessor.timeout=120", notebook, "--output", out],
                         capture_output=True, text=True, env=env, timeout=300)
    if run.returncode != 0:
        sys.exit(f"FAIL: nbconvert exited {run.returncode}:\n{run.stderr[-3000:]}")
    nb = nbformat.read(out, as_version=4)

failures = []
code = [c for c in nb.cells if c.cell_type == "code"]
for i, cell in enumerate(code):
    kinds = [o.output_type for o in cell.outputs]
    if "error" in kinds:
        failures.append(f"cell {i} raised: {[o.get('ename') for o in cell.outputs]}")
    if "execute_result" not in kinds:
        failures.append(f"cell {i} shows nothing")
htmls = [o["data"].get("text/html", "") for c in code for o in c.outputs
         if o.output_type == "execute_result"]
if htmls:
    first = htmls[0]
    if 'class="opscope-report"' not in first or "<svg" not in first:
        failures.append("the Analysis does not render with its charts")
    if "<script" in first:
        failures.append("the Analysis's HTML carries a script")
    if "Findings" not in first:
        failures.append("the Analysis's HTML has no findings")
    for i, h in enumerate(htmls[1:], start=1):
        if "<table" not in h:
            failures.append(f"cell {i}'s DataFrame does not render as a table")
if failures:
    sys.exit("FAIL:\n  " + "\n  ".join(failures))
print(f"notebook: {len(code)} cells executed; the analysis rendered with "
      f"{htmls[0].count('<svg')} charts, {len(htmls) - 1} tables")
