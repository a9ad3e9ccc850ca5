#!/usr/bin/env python3
"""The Prometheus exporter from a second process on loopback: promtool accepts
/metrics; 2,000 requests over 8 connections all succeed; malformed and oversized
requests get 400/413/414/431 while other clients are served; SIGTERM stops it cleanly.
Bounded: every request has a timeout, and the whole test stops by itself."""
import concurrent.futures
import http.client
import signal
import socket
import subprocess
import sys
import time

opscope, promtool = sys.argv[1], sys.argv[2]
# Without promtool (Debian: prometheus; `make run` does not install it) the other
# checks run and the test ends skipped (exit 77), saying why.
have_promtool = promtool not in ("", "PROMTOOL-NOTFOUND")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def fail(message):
    print("FAIL:", message)
    server.kill()
    sys.exit(1)


port = free_port()
server = subprocess.Popen([opscope, "smi", "--serve", f"127.0.0.1:{port}", "--interval", "100ms"],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def get(path, timeout=5):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    conn.request("GET", path)
    response = conn.getresponse()
    body = response.read()
    conn.close()
    return response.status, body


deadline = time.time() + 10
while True:
    try:
        if get("/healthz", 1) == (200, b"ok\n"):
            break
    except OSError:
        pass
    if time.time() > deadline:
        fail("the exporter did not come up")
    time.sleep(0.05)

status, body = get("/metrics")
if status != 200 or b"opscope_cpu_utilization_percent{device=\"cpu\"}" not in body:
    fail(f"/metrics: {status} {body[:200]!r}")
if have_promtool:
    check = subprocess.run([promtool, "check", "metrics"], input=body, capture_output=True, timeout=30)
    if check.returncode != 0:
        fail("promtool check metrics: " + (check.stdout + check.stderr).decode())
    print("ok: promtool check metrics accepts /metrics")
else:
    print("skip: promtool is not installed (Debian: prometheus): /metrics not checked by it")
if b"opscope_metric_unavailable" not in body:
    fail("unavailable metrics are not listed")


def raw(data, timeout=8):
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
        s.sendall(data)
        reply = s.recv(4096)
    return reply.split(b"\r\n", 1)[0]


# Load: 2,000 requests over 8 keep-alive connections, 250 each.
def worker(n):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    ok = 0
    for _ in range(n):
        conn.request("GET", "/metrics")
        response = conn.getresponse()
        if response.status == 200 and b"# TYPE" in response.read():
            ok += 1
    conn.close()
    return ok


start = time.time()
with concurrent.futures.ThreadPoolExecutor(max_workers=9) as pool:
    load = [pool.submit(worker, 250) for _ in range(8)]
    # Bad clients at the same time as the good ones.
    bad = pool.submit(lambda: [raw(b"GARBAGE\r\n\r\n"),
                               raw(b"GET /" + b"a" * 20000 + b" HTTP/1.1\r\nHost: x\r\n\r\n"),
                               raw(b"POST /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 200000\r\n\r\n"
                                   + b"x" * 200000),
                               raw(b"GET /metrics HTTP/1.1\r\nHost: x\r\nX-Big: " + b"b" * 20000 + b"\r\n\r\n")])
    served = sum(f.result() for f in load)
    replies = bad.result()
elapsed = time.time() - start
if served != 2000:
    fail(f"only {served} of 2000 requests succeeded")
print(f"ok: 2000 of 2000 requests over 8 connections in {elapsed:.2f} s ({2000 / elapsed:.0f}/s)")
expected = [b"HTTP/1.1 400 Bad Request", b"HTTP/1.1 414 URI Too Long", b"HTTP/1.1 413 Payload Too Large",
            b"HTTP/1.1 431 Request Header Fields Too Large"]
if replies != expected:
    fail(f"malformed requests got {replies}")
print("ok: malformed 400, long URI 414, large body 413, huge header 431")
if get("/metrics")[0] != 200:
    fail("not serving after the bad requests")

server.send_signal(signal.SIGTERM)
try:
    code = server.wait(timeout=10)
except subprocess.TimeoutExpired:
    fail("did not stop on SIGTERM")
stderr = server.stderr.read().decode()
if code != 0 or "exporter stopped" not in stderr:
    fail(f"exit {code} after SIGTERM: {stderr}")
print("ok: SIGTERM stops it cleanly (exit 0)")
if not have_promtool:
    sys.exit(77)
