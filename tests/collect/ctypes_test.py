#!/usr/bin/env python3
"""The C API from Python through ctypes, as docs/profiling.md describes it."""
import ctypes
import json
import os
import sys
import tempfile

lib = ctypes.CDLL(sys.argv[1])
lib.opscope_session_start.restype = ctypes.c_void_p
lib.opscope_session_trace_path.restype = ctypes.c_char_p
lib.opscope_session_trace_path.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
lib.opscope_last_error.restype = ctypes.c_char_p
lib.opscope_counter.argtypes = [ctypes.c_char_p, ctypes.c_double]

with tempfile.TemporaryDirectory() as out:
    cwd = os.getcwd()
    os.chdir(out)  # the default options write into the current folder
    try:
        session = lib.opscope_session_start(None)
        assert session, lib.opscope_last_error()
        for step in range(3):
            assert lib.opscope_scope_begin(b"python_step") == 0
            lib.opscope_counter(b"loss", 1.0 / (step + 1))
            assert lib.opscope_scope_end() == 0
            assert lib.opscope_session_step(ctypes.c_void_p(session)) == 0
        assert lib.opscope_session_stop(ctypes.c_void_p(session)) == 0
        path = lib.opscope_session_trace_path(ctypes.c_void_p(session), 0).decode()
        lib.opscope_session_free(ctypes.c_void_p(session))
        with open(path) as f:
            doc = json.load(f)
    finally:
        os.chdir(cwd)
names = [e["name"] for e in doc["traceEvents"] if e["ph"] == "X"]
assert names.count("python_step") == 3, names
assert sum(1 for e in doc["traceEvents"] if e["ph"] == "C") == 3
print("ctypes: ok")
