#!/usr/bin/env python3
"""A large PyTorch caching-allocator snapshot for bench/torch_snapshot_vs_python.sh:
the structure PyTorch documents (torch.cuda.memory._snapshot: "segments" with
"blocks", "device_traces" with alloc / free_requested / free_completed /
segment_alloc entries and their "frames"), N training-like steps of a few
hundred allocations each, stacks drawn from a small set so that the pickler
shares them as a real snapshot does; pickled at protocol 4.

    make_big_snapshot.py OUT.pickle ENTRIES
"""
import pickle
import random
import sys

out, entries = sys.argv[1], int(sys.argv[2])
rng = random.Random(7)
files = [f"/home/u/model/layer{i}.py" for i in range(40)]
stacks = []
for i in range(300):
    frames = [{"name": f"at::native::op{rng.randrange(60)}", "filename": "??", "line": 0}
              for _ in range(12)]
    frames += [{"name": "forward", "filename": rng.choice(files), "line": rng.randrange(1, 400)},
               {"name": "train_step", "filename": "/home/u/train.py", "line": 88}]
    stacks.append(frames)
MiB = 1 << 20
trace, live, t, addr = [], [], 1_700_000_000_000_000, 0x7f0000000000
while len(trace) < entries:
    for _ in range(rng.randrange(50, 400)):
        size = rng.choice((512, 4096, 65536, MiB, 4 * MiB, 16 * MiB))
        addr += size
        t += rng.randrange(1, 50)
        trace.append({"action": "alloc", "addr": addr, "size": size, "stream": 0, "time_us": t,
                      "frames": rng.choice(stacks)})
        live.append((addr, size))
    rng.shuffle(live)
    while len(live) > 50:
        a, size = live.pop()
        t += rng.randrange(1, 50)
        trace.append({"action": "free_requested", "addr": a, "size": size, "stream": 0,
                      "time_us": t, "frames": rng.choice(stacks)})
        trace.append({"action": "free_completed", "addr": a, "size": size, "stream": 0,
                      "time_us": t + 1, "frames": rng.choice(stacks)})
blocks = [{"address": a, "size": s, "requested_size": s, "state": "active_allocated",
           "frames": rng.choice(stacks)} for a, s in live]
segments = [{"device": 0, "address": 0x7f0000000000, "total_size": sum(s for _, s in live),
             "stream": 0, "segment_type": "large", "allocated_size": sum(s for _, s in live),
             "active_size": sum(s for _, s in live), "blocks": blocks}]
with open(out, "wb") as f:
    pickle.dump({"segments": segments, "device_traces": [trace]}, f, protocol=4)
