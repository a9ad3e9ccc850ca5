#!/usr/bin/env python3
"""A rocpd database (rocprofv3's default output) built to ROCprofiler-SDK's
published rocpd schema (schema_version 3: each process's tables end in its
set's uuid; the unsuffixed views join the sets), for the rocpd reader's test:
two processes' table sets, one GPU each, a training loop of three
iterations per process marked by ROCTx ranges "step N", each iteration a
host-to-device copy, kernels launched by hipLaunchKernel, an RCCL all-reduce
and a hipDeviceSynchronize. Each record's event holds what rocprofv3 writes
there: its internal correlation id in stack_id (a launch call and its
kernel share one; every other record has its own), and the external
correlation id, 0 for all (the program set none), in correlation_id.
The columns are the schema's; only those the schema marks NOT NULL and those
the reader uses are filled.

    rocpd_make.py OUT.db
"""
import sqlite3
import sys

TABLES = {
    "rocpd_metadata": '"id" INTEGER PRIMARY KEY AUTOINCREMENT, "tag" TEXT NOT NULL, "value" TEXT NOT NULL',
    "rocpd_string": '"id" INTEGER PRIMARY KEY AUTOINCREMENT, "guid" TEXT, "string" TEXT NOT NULL UNIQUE',
    "rocpd_info_node": '"id" INTEGER PRIMARY KEY AUTOINCREMENT, "guid" TEXT, "hash" BIGINT, "machine_id" TEXT, '
                       '"hostname" TEXT',
    "rocpd_info_process": '"id" INTEGER PRIMARY KEY AUTOINCREMENT, "guid" TEXT, "nid" INTEGER NOT NULL, '
                          '"ppid" INTEGER, "pid" INTEGER NOT NULL, "init" BIGINT, "fini" BIGINT, "start" BIGINT, '
                          '"end" BIGINT, "command" TEXT',
    "rocpd_info_thread": '"id" INTEGER PRIMARY KEY AUTOINCREMENT, "guid" TEXT, "nid" INTEGER NOT NULL, '
                         '"ppid" INTEGER, "pid" INTEGER NOT NULL, "tid" INTEGER NOT NULL, "name" TEXT, '
                         '"start" BIGINT, "end" BIGINT',
    "rocpd_info_agent": '"id" INTEGER PRIMARY KEY AUTOINCREMENT, "guid" TEXT, "nid" INTEGER NOT NULL, '
                        '"pid" INTEGER NOT NULL, "type" TEXT, "absolute_index" INTEGER, "logical_index" INTEGER, '
                        '"type_index" INTEGER, "uuid" INTEGER, "name" TEXT, "model_name" TEXT, '
                        '"vendor_name" TEXT, "product_name" TEXT, "user_name" TEXT',
    "rocpd_info_kernel_symbol": '"id" INTEGER PRIMARY KEY AUTOINCREMENT, "guid" TEXT, "nid" INTEGER NOT NULL, '
                                '"pid" INTEGER NOT NULL, "code_object_id" INTEGER NOT NULL, "kernel_name" TEXT, '
                                '"display_name" TEXT',
    "rocpd_event": '"id" INTEGER PRIMARY KEY AUTOINCREMENT, "guid" TEXT, "category_id" INTEGER, '
                   '"stack_id" INTEGER, "parent_stack_id" INTEGER, "correlation_id" INTEGER',
    "rocpd_region": '"id" INTEGER PRIMARY KEY AUTOINCREMENT, "guid" TEXT, "nid" INTEGER NOT NULL, '
                    '"pid" INTEGER NOT NULL, "tid" INTEGER NOT NULL, "start" BIGINT NOT NULL, '
                    '"end" BIGINT NOT NULL, "name_id" INTEGER NOT NULL, "event_id" INTEGER',
    "rocpd_kernel_dispatch": '"id" INTEGER PRIMARY KEY AUTOINCREMENT, "guid" TEXT, "nid" INTEGER NOT NULL, '
                             '"pid" INTEGER NOT NULL, "tid" INTEGER, "agent_id" INTEGER NOT NULL, '
                             '"kernel_id" INTEGER NOT NULL, "dispatch_id" INTEGER NOT NULL, '
                             '"queue_id" INTEGER NOT NULL, "stream_id" INTEGER NOT NULL, '
                             '"start" BIGINT NOT NULL, "end" BIGINT NOT NULL, '
                             '"workgroup_size_x" INTEGER NOT NULL, "workgroup_size_y" INTEGER NOT NULL, '
                             '"workgroup_size_z" INTEGER NOT NULL, "grid_size_x" INTEGER NOT NULL, '
                             '"grid_size_y" INTEGER NOT NULL, "grid_size_z" INTEGER NOT NULL, '
                             '"region_name_id" INTEGER, "event_id" INTEGER',
    "rocpd_memory_copy": '"id" INTEGER PRIMARY KEY AUTOINCREMENT, "guid" TEXT, "nid" INTEGER NOT NULL, '
                         '"pid" INTEGER NOT NULL, "tid" INTEGER, "start" BIGINT NOT NULL, "end" BIGINT NOT NULL, '
                         '"name_id" INTEGER NOT NULL, "dst_agent_id" INTEGER, "dst_address" INTEGER, '
                         '"src_agent_id" INTEGER, "src_address" INTEGER, "size" INTEGER NOT NULL, '
                         '"queue_id" INTEGER, "stream_id" INTEGER, "region_name_id" INTEGER, "event_id" INTEGER',
}
SETS = ["_0123456789abcdef0123456789abcdef", "_fedcba9876543210fedcba9876543210"]


def make(path, sets=SETS):
    db = sqlite3.connect(path)
    for uuid in sets:
        for name, columns in TABLES.items():
            db.execute(f'CREATE TABLE "{name}{uuid}" ({columns})')
    # The views the database's readers use, as the schema defines them (a
    # UNION of the sets): the reader must not depend on them.
    for name in ("rocpd_kernel_dispatch", "rocpd_region", "rocpd_string"):
        db.execute(f'CREATE VIEW "{name}" AS ' +
                   " UNION ALL ".join(f'SELECT * FROM "{name}{u}"' for u in sets))
    for n, uuid in enumerate(sets):
        T = lambda t: f'"{t}{uuid}"'  # noqa: E731
        strings = {}

        def s(text):
            if text not in strings:
                cur = db.execute(f"INSERT INTO {T('rocpd_string')} (string) VALUES (?)", (text,))
                strings[text] = cur.lastrowid
            return strings[text]

        db.execute(f"INSERT INTO {T('rocpd_metadata')} (tag, value) VALUES ('schema_version', '3')")
        db.execute(f"INSERT INTO {T('rocpd_info_node')} (id, hash, machine_id, hostname) VALUES (1, 1, 'm', 'h')")
        pid = 4000 + n
        db.execute(f"INSERT INTO {T('rocpd_info_process')} (id, nid, pid) VALUES (1, 1, ?)", (pid,))
        db.execute(f"INSERT INTO {T('rocpd_info_thread')} (id, nid, pid, tid) VALUES (1, 1, 1, ?)", (pid,))
        db.execute(f"INSERT INTO {T('rocpd_info_agent')} (id, nid, pid, type, type_index, name, product_name) "
                   "VALUES (1, 1, 1, 'CPU', 0, 'cpu', 'EPYC'), (2, 1, 1, 'GPU', ?, 'gfx942', 'AMD Instinct MI300X')",
                   (n,))
        for k, (name, display) in enumerate([
                ("_Z4gemmPf.kd", "gemm(float*)"), ("_Z4reluPf.kd", "relu(float*)"),
                ("ncclDevKernel_Generic.kd", "ncclDevKernel_Generic(ncclDevKernelArgsStorage<4096ul>)")], 1):
            db.execute(f"INSERT INTO {T('rocpd_info_kernel_symbol')} (id, nid, pid, code_object_id, kernel_name, "
                       "display_name) VALUES (?, 1, 1, 1, ?, ?)", (k, name, display))
        corr = 0
        t = 1_000_000 + n * 1000

        def event(category, correlation=None):
            nonlocal corr
            if correlation is None:  # a record of its own
                corr += 1
                correlation = corr
            cur = db.execute(f"INSERT INTO {T('rocpd_event')} (category_id, stack_id, parent_stack_id, "
                             "correlation_id) VALUES (?, ?, 0, 0)", (s(category), correlation))
            return cur.lastrowid

        def region(name, category, start, end, correlation=None):
            db.execute(f"INSERT INTO {T('rocpd_region')} (nid, pid, tid, start, end, name_id, event_id) "
                       "VALUES (1, 1, 1, ?, ?, ?, ?)", (start, end, s(name), event(category, correlation)))

        for step in range(3):
            begin = t
            region(f"step {step}", "MARKER_CORE_RANGE_API", begin, begin + 90_000)
            corr += 1
            region("hipMemcpyAsync", "HIP_RUNTIME_API_EXT", t + 100, t + 900, corr)
            db.execute(f"INSERT INTO {T('rocpd_memory_copy')} (nid, pid, start, end, name_id, dst_agent_id, "
                       "src_agent_id, size, event_id) VALUES (1, 1, ?, ?, ?, 2, 1, ?, ?)",
                       (t + 1000, t + 9000, s("MEMORY_COPY_HOST_TO_DEVICE"), 4 << 20,
                        event("MEMORY_COPY", corr)))
            t += 10_000
            for kernel, dur in ((1, 20_000), (2, 5_000), (3, 30_000)):
                corr += 1
                region("hipLaunchKernel", "HIP_RUNTIME_API_EXT", t, t + 2_000, corr)
                db.execute(f"INSERT INTO {T('rocpd_kernel_dispatch')} (nid, pid, tid, agent_id, kernel_id, "
                           "dispatch_id, queue_id, stream_id, start, end, workgroup_size_x, workgroup_size_y, "
                           "workgroup_size_z, grid_size_x, grid_size_y, grid_size_z, event_id) "
                           "VALUES (1, 1, 1, 2, ?, ?, 1, 1, ?, ?, 256, 1, 1, 65536, 1, 1, ?)",
                           (kernel, corr, t + 3_000, t + 3_000 + dur, event("KERNEL_DISPATCH", corr)))
                t += dur + 3_000
            region("hipDeviceSynchronize", "HIP_RUNTIME_API", t, t + 1_000)
            t = begin + 100_000
    db.commit()
    db.close()


if __name__ == "__main__":
    make(sys.argv[1])
