#!/usr/bin/env python3
"""What an XSpace protobuf (*.xplane.pb) holds, read here with a wire-format
decoder of its own from the published xplane.proto field numbers (XSpace
planes=1; XPlane name=2 lines=3 event_metadata=4; XLine id=1 name=2
timestamp_ns=3 events=4 display_name=11; XEvent metadata_id=1 offset_ps=2
duration_ps=3; XEventMetadata name=2 display_name=4), independently of
opscope: the device planes' stream events by name (count, nanoseconds, each
event's picoseconds truncated), and the timed events of the host and device
planes in all.

    xplane_expected.py FILE.xplane.pb    prints the figures as JSON
"""
import collections
import json
import sys


def _varint(buf, at):
    value = shift = 0
    while True:
        byte = buf[at]
        at += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if byte < 0x80:
            return value, at


def _message(buf):
    """(field, wire, value) of one message: value an int or a bytes slice."""
    at = 0
    while at < len(buf):
        tag, at = _varint(buf, at)
        field, wire = tag >> 3, tag & 7
        if wire == 0:
            value, at = _varint(buf, at)
        elif wire == 2:
            size, at = _varint(buf, at)
            value, at = buf[at:at + size], at + size
        elif wire == 1:
            value, at = buf[at:at + 8], at + 8
        elif wire == 5:
            value, at = buf[at:at + 4], at + 4
        else:
            raise ValueError(f"wire type {wire}")
        yield field, wire, value


def _lines(path):
    """Each line of the device and host planes: (plane name, line name, its
    timestamp_ns, its timed events as {field: value}, the plane's event
    names by metadata id)."""
    with open(path, "rb") as f:
        space = f.read()
    for field, wire, plane in _message(space):
        if field != 1:
            continue
        name, lines, names = "", [], {}
        for f, w, v in _message(plane):
            if f == 2:
                name = v.decode()
            elif f == 3:
                lines.append(v)
            elif f == 4:
                key, meta = 0, b""
                for ef, ew, ev in _message(v):
                    if ef == 1:
                        key = ev
                    elif ef == 2:
                        meta = ev
                label = display = ""
                for mf, mw, mv in _message(meta):
                    if mf == 2:
                        label = mv.decode()
                    elif mf == 4:
                        display = mv.decode()
                names[key] = display or label
        if not (name.startswith("/device:") or name.startswith("/host:CPU")):
            continue
        for line in lines:
            line_name = display = ""
            base, timed = 0, []
            for f, w, v in _message(line):
                if f == 2:
                    line_name = v.decode()
                elif f == 11:
                    display = v.decode()
                elif f == 3:
                    base = v
                elif f == 4:
                    fields = {ef: ev for ef, ew, ev in _message(v)}
                    if 2 in fields:
                        timed.append(fields)
            yield name, display or line_name, base, timed, names


def expected(path):
    kernels = collections.defaultdict(lambda: [0, 0])
    events = 0
    for plane, line_name, base, timed, names in _lines(path):
        events += len(timed)
        if plane.startswith("/device:") and line_name.startswith("Stream #"):
            for ev in timed:
                label = names.get(ev.get(1, 0), "")
                if label.endswith(".kd"):
                    label = label[:-3]
                kernels[label][0] += 1
                kernels[label][1] += ev.get(3, 0) // 1000
    return {"kernels": {k: {"count": c, "total_ns": t} for k, (c, t) in kernels.items()},
            "events": events}


def timed_events(path):
    """Every timed event of the device and host planes as (plane, line,
    name, start_ns, end_ns): the line's timestamp_ns (XLine field 3) plus the
    event's offset_ps (XEvent field 2) and duration_ps (field 3), in whole
    nanoseconds (picoseconds divided down)."""
    out = []
    for plane, line_name, base, timed, names in _lines(path):
        for ev in timed:
            start = base + ev[2] // 1000
            out.append((plane, line_name, names.get(ev.get(1, 0), ""), start, start + ev.get(3, 0) // 1000))
    return out


if __name__ == "__main__":
    print(json.dumps(expected(sys.argv[1]), indent=1, sort_keys=True))
