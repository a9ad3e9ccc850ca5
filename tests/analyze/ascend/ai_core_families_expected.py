#!/usr/bin/env python3
"""The AI Core operator families of a kernel_details.csv as msprof-analyze's
advisor checks them (its rules/en/aicore_performance.yaml and
AICorePerformanceChecker, read as published), computed from the raw CSV with
Python's csv module alone, independently of opscope. With --msprof, the
checker's own quirks are kept (the cube's second test compares mac with the
MTE2 threshold; 3-D matmul inputs are not affine; a grad's shapes are judged
like a forward's); without, opscope's stated differences apply.

    ai_core_families_expected.py kernel_details.csv [--msprof]   prints JSON
"""
import csv
import json
import sys
from collections import defaultdict

CUBE_MAC, CUBE_MTE2 = 0.8, 0.95
FA_MTE2, FA_VEC, FA_FIXPIPE = 0.8, 0.75, 0.75
VEC_TOTAL, VEC_PIPE = 0.9, 0.7


def unquote(s):
    s = s.strip()
    while len(s) >= 2 and s[0] == '"' and s[-1] == '"':
        s = s[1:-1]
    return s


def dims(text):
    """'8192,512;512' -> [[8192, 512], [512]]; None when not numbers."""
    out = []
    for t in text.split(";"):
        try:
            out.append([int(d) for d in t.split(",")] if t else [])
        except ValueError:
            return None
    return out


def number(row, col):
    try:
        return float(row[col])
    except (KeyError, ValueError, TypeError):
        return None


def families(path, msprof=False):
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    total = sum(float(r["Duration(us)"]) for r in rows)
    groups = defaultdict(list)
    vector_type = defaultdict(float)
    for r in rows:
        ins, outs = unquote(r.get("Input Shapes", "")), unquote(r.get("Output Shapes", ""))
        if ins in ("", "N/A") and outs in ("", "N/A"):
            continue
        core, typ = r.get("Accelerator Core", ""), r.get("Type", "")
        if core == "AI_CORE" and "matmul" in typ.lower():
            fam = "cube"
        elif typ == "FlashAttentionScore":
            fam = "FlashAttention"
        elif typ == "FlashAttentionScoreGrad":
            fam = "FlashAttention grad"
        elif core in ("AI_VECTOR_CORE", "MIX_AIV"):
            fam = "vector"
            vector_type[typ] += float(r["Duration(us)"])
        else:
            continue
        groups[(fam, r["Name"], ins, outs)].append(r)
    out = []
    for (fam, name, ins, outs), rs in groups.items():
        dur = sum(float(r["Duration(us)"]) for r in rs)

        def mean(col):
            vals = [number(r, col) for r in rs]
            vals = [v for v in vals if v is not None]
            return sum(vals) / len(vals) if vals else None

        i, o = dims(ins), dims(outs)
        verdict = None
        if fam == "cube":
            mem = 0
            for r in rs:
                for t in (i or []):
                    if len(t) == 1:
                        mem += 2 * t[0]
                    elif t:
                        p = 1
                        for d in t:
                            p *= d
                        mem += p
                if o and o[0]:
                    p = 1
                    for d in o[0]:
                        p *= d
                    mem += p
            if mem * 2 / 1024 / 1024 < 100:
                continue
            affine = False
            if i and len(i) >= 2 and len(i[0]) >= 2 and len(i[1]) >= 2:
                a, b = i[0], i[1]
                if len(a) == 4 and len(b) == 4:
                    affine = a[1] * a[2] % 256 == 0 and b[1] * b[2] % 256 == 0
                elif len(a) == 2 or not msprof:
                    affine = a[-1] % 256 == 0 and b[-1] % 256 == 0
            if not affine:
                verdict = "not affine"
            else:
                mac, mte2 = mean("aic_mac_ratio"), mean("aic_mte2_ratio")
                if mac is None or mte2 is None:
                    continue
                mac_test = CUBE_MTE2 if msprof else CUBE_MAC
                verdict = "bound" if (mac >= CUBE_MAC and mte2 >= CUBE_MTE2) or mac >= mac_test \
                    or mte2 >= CUBE_MTE2 else "room to optimise"
        elif fam.startswith("FlashAttention"):
            bad = False
            if fam == "FlashAttention" or msprof:
                q = i[0] if i else []
                if "varlen" in name.lower():
                    bad = len(q) >= 3 and q[2] % 128 != 0
                else:
                    seq = o[0][2] if o and len(o[0]) >= 3 else -1
                    d = q[3] if len(q) == 4 else (q[2] // o[0][1] if len(q) == 3 and o and
                                                  len(o[0]) >= 2 and o[0][1] else -1)
                    bad = (d >= 0 and d % 128 != 0) or (seq >= 0 and seq % 128 != 0)
            if bad:
                verdict = "not affine"
            elif fam == "FlashAttention":
                mte2, vec = mean("aic_mte2_ratio"), mean("aiv_vec_ratio")
                if mte2 is None or vec is None:
                    continue
                verdict = "bound" if mte2 >= FA_MTE2 or vec >= FA_VEC else "room to optimise"
            else:
                mte2, fix = mean("aic_mte2_ratio"), mean("aic_fixpipe_ratio")
                if mte2 is None or fix is None:
                    continue
                verdict = "bound" if mte2 >= FA_MTE2 or fix >= FA_FIXPIPE else "room to optimise"
        else:
            typ = rs[0].get("Type", "")
            if vector_type[typ] / total < 0.01 and vector_type[typ] < 1e6:
                continue
            vec, mte2, mte3 = mean("aiv_vec_ratio"), mean("aiv_mte2_ratio"), mean("aiv_mte3_ratio")
            if None in (vec, mte2, mte3):
                continue
            verdict = "bound" if vec + mte2 + mte3 >= VEC_TOTAL or max(vec, mte2, mte3) >= VEC_PIPE \
                else "room to optimise"
        out.append({"family": fam, "name": name, "count": len(rs), "verdict": verdict})
    return out


if __name__ == "__main__":
    print(json.dumps(families(sys.argv[1], "--msprof" in sys.argv), indent=1))
