#!/usr/bin/env python3
"""Each layer links what it includes, and includes only what it links.

Reads BUILD_DIR/layers.tsv (written by the top-level CMakeLists.txt: each layer
target's source folder, sources and direct links) and the sources' own
`#include "LAYER/..."` lines. Fails for a layer that links a layer it never
includes (a link dependency it does not use), and for one that includes a layer
none of its links reaches (it builds only because something else brings it).

Usage: layering_test.py BUILD_DIR"""
import os
import re
import sys

# Which folders of src/ each target provides.
PROVIDES = {
    # "opscope": the public headers (include/opscope/), the installed library's.
    "opscope": {"collect", "core", "opscope"}, "opscope_c": {"collect", "opscope"}, "opscope_tool_core": {"core"},
    "opscope_analyze": {"analyze"}, "opscope_report": {"report"}, "opscope_monitor": {"monitor"},
    "opscope_devices": {"devices"}, "opscope_cpu": {"devices"}, "opscope_backends": {"devices"},
    "opscope_workloads": {"workloads"}, "opscope_suite": {"suite"}, "opscope_tool": {"suite"},
    "opscope_python": {"python"}, "opscope_cli_shared": {"cli"}, "opscope_cli": {"cli"},
    "opscope_scaleout": {"cli"}, "opscope_mpi": {"mpi"},
}
# Links that no #include shows: the built-in backends, called through the
# registry's generated table (cmake/builtin_backends.cc.in).
GENERATED = {("opscope_backends", "opscope_cpu")}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([a-z_]+)/', re.M)


def includes(path):
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return set(INCLUDE.findall(f.read()))
    except OSError:
        return set()


def main():
    build = sys.argv[1]
    targets = {}
    with open(os.path.join(build, "layers.tsv"), encoding="utf-8") as f:
        for line in f:
            if not line.strip():
                continue
            name, folder, sources, links = (line.rstrip("\n").split("\t") + ["", ""])[:4]
            paths = [s if os.path.isabs(s) else os.path.join(folder, s)
                     for s in sources.split(";") if s]
            used = set()
            for p in paths:
                used |= includes(p)
                header = os.path.splitext(p)[0] + ".h"  # its own header's includes count too
                used |= includes(header)
            targets[name] = {"used": used,
                             "links": [l for l in links.split(";") if l in PROVIDES]}
    # A layer this build leaves out (mpi/ without an MPI): its includes sit
    # under #ifdef and compile to nothing here.
    built = set()
    for name in targets:
        built |= PROVIDES[name]
    failures = []
    for name, t in sorted(targets.items()):
        t["used"] &= built | {"opscope"}
        own = PROVIDES[name]
        for link in t["links"]:
            if (name, link) not in GENERATED and not PROVIDES[link] & t["used"]:
                failures.append(f"{name} links {link} but includes nothing of "
                                f"{'/'.join(sorted(PROVIDES[link]))}/")
        reach, todo = set(), list(t["links"])
        while todo:
            link = todo.pop()
            if link in reach:
                continue
            reach.add(link)
            todo.extend(targets.get(link, {}).get("links", []))
            if link == "opscope_tool":
                todo.append("opscope_suite")
        provided = set(own)
        for link in reach:
            provided |= PROVIDES[link]
        for layer in sorted(t["used"] - provided):
            failures.append(f"{name} includes {layer}/ but links nothing that provides it")
    for f in failures:
        print("FAIL:", f)
    if failures:
        return 1
    print(f"layering: {len(targets)} targets link what they include and include what they link")
    return 0


if __name__ == "__main__":
    sys.exit(main())
