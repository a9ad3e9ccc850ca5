"""Loading a local page in headless Chromium for the report tests: console
errors, every network request the page makes (counted by a proxy that answers
nothing), the DOM after its scripts ran, and a screenshot checked not blank."""
import shutil
import socket
import struct
import subprocess
import tempfile
import threading
import time
import zlib


def chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


class Listener:
    """A proxy that only counts connections: every request the page makes
    (http, https, websockets) would come here."""

    def __init__(self):
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self.requests = []  # first line of each request ("CONNECT host:443 HTTP/1.1")
        # Connections closed before sending a byte: Chromium opens speculative
        # sockets to its proxy; with no request line there is no request to judge.
        self.empty_connections = 0
        self.stop = False
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def run(self):
        while not self.stop:
            try:
                conn, _ = self.sock.accept()
                conn.settimeout(1)
                try:
                    data = conn.recv(4096)
                    if data:
                        self.requests.append(data.split(b"\r\n")[0].decode("latin-1"))
                    else:
                        self.empty_connections += 1
                except OSError:
                    pass
                conn.close()
            except socket.timeout:
                pass

    def close(self):
        self.stop = True
        self.thread.join()
        self.sock.close()


def png_is_blank(path):
    """True when every pixel of the (8-bit RGB/RGBA) PNG has one colour."""
    data = open(path, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        return True
    pos, idat, width, height, channels = 8, b"", 0, 0, 4
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            width, height, depth, colour = struct.unpack(">IIBB", body[:10])
            channels = {2: 3, 6: 4, 0: 1, 4: 2}.get(colour, 4)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    raw = zlib.decompress(idat)
    stride = width * channels
    previous = bytearray(stride)
    colours = set()
    for y in range(height):
        row = raw[y * (stride + 1):(y + 1) * (stride + 1)]
        kind, line = row[0], bytearray(row[1:])
        for x in range(stride):  # undo the PNG filter of this row
            left = line[x - channels] if x >= channels else 0
            up = previous[x]
            corner = previous[x - channels] if x >= channels else 0
            if kind == 1:
                line[x] = (line[x] + left) & 0xFF
            elif kind == 2:
                line[x] = (line[x] + up) & 0xFF
            elif kind == 3:
                line[x] = (line[x] + (left + up) // 2) & 0xFF
            elif kind == 4:
                p = left + up - corner
                pa, pb, pc = abs(p - left), abs(p - up), abs(p - corner)
                pred = left if pa <= pb and pa <= pc else up if pb <= pc else corner
                line[x] = (line[x] + pred) & 0xFF
        previous = line
        if y % 8 == 0:
            for x in range(0, stride, channels * 4):
                colours.add(bytes(line[x:x + channels]))
        if len(colours) > 8:
            return False
    return len(colours) <= 1


def load_in_chromium(browser, page, workdir, screenshot=None, virtual_time=True, window="1280,2000"):
    """Loads a local page; returns (console error lines, connections, dom).
    With virtual_time, Chromium runs the page's timers up to 3 s of virtual time
    before dumping; without, it dumps after the load event (a wall-clock
    measurement of the page's own work stays honest)."""
    listener = Listener()
    profile = tempfile.mkdtemp(dir=workdir)
    base = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
            "--disable-background-networking", "--disable-component-update", "--disable-sync",
            f"--user-data-dir={profile}", f"--proxy-server=http://127.0.0.1:{listener.port}",
            "--proxy-bypass-list=<-loopback>", "--enable-logging=stderr", "--v=0",
            f"--window-size={window}"] + (["--virtual-time-budget=3000"] if virtual_time else [])
    try:
        dom = subprocess.run(base + ["--dump-dom", "file://" + page], capture_output=True,
                             text=True, timeout=120)
        errors = [line for line in dom.stderr.splitlines()
                  if "CONSOLE" in line or "Refused to" in line or "Uncaught" in line]
        if screenshot:
            shot = subprocess.run(base + [f"--screenshot={screenshot}", "file://" + page],
                                  capture_output=True, text=True, timeout=120)
            errors += [line for line in shot.stderr.splitlines()
                       if "CONSOLE" in line or "Refused to" in line or "Uncaught" in line]
        time.sleep(0.3)
    finally:
        listener.close()
    # Chromium's own background services (clock, component updates, accounts)
    # call home even headless; the page's requests are everything else.
    browser_hosts = ("clients2.google.com", "update.googleapis.com", "accounts.google.com",
                     "edgedl.me.gvt1.com", "redirector.gvt1.com", "safebrowsing.googleapis.com",
                     "optimizationguide-pa.googleapis.com", "content-autofill.googleapis.com")
    page_requests = [r for r in listener.requests
                     if not any(f" {h}" in r or f"//{h}/" in r for h in browser_hosts)]
    if page_requests:
        print("  requests from the page:", page_requests)
    if listener.empty_connections:
        print(f"  ({listener.empty_connections} connection(s) to the proxy closed without a request)")
    return errors, len(page_requests), dom.stdout
