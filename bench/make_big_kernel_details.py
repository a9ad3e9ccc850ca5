#!/usr/bin/env python3
"""Writes a kernel_details.csv of at least SIZE_MB by replicating a real one's
rows (tests/data's level-1 torch_npu sample) with start times shifted by the
sample's span each copy, so the tasks stay in order and never overlap.

    make_big_kernel_details.py SAMPLE OUT SIZE_MB
"""
import csv
import decimal
import sys


def main():
    sample, out, size_mb = sys.argv[1], sys.argv[2], float(sys.argv[3])
    with open(sample, newline="") as f:
        reader = csv.reader(f)
        header = next(reader)
        rows = list(reader)
    start = header.index("Start Time(us)")
    dur = header.index("Duration(us)")
    times = [decimal.Decimal(r[start].strip()) for r in rows]
    span = max(t + decimal.Decimal(r[dur]) for t, r in zip(times, rows)) - min(times)
    span = span.quantize(decimal.Decimal("1")) + 1
    target = int(size_mb * 1e6)
    with open(out, "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(header)
        copy = 0
        while f.tell() < target:
            shift = span * copy
            for t, r in zip(times, rows):
                r = list(r)
                r[start] = "%s\t" % (t + shift)
                writer.writerow(r)
            copy += 1
    print("wrote %s: %d copies of %d rows" % (out, copy, len(rows)), file=sys.stderr)


if __name__ == "__main__":
    main()
