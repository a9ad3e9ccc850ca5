"""What the analyze tests that run the CLI share: checks that print and count,
a scratch folder that goes away, and `opscope analyze` into it.

    from checks import Checks
    c = Checks()
    c.check(ok, "what")           # prints ok:/FAIL:, counts failures
    run, out = c.analyze(opscope, path, "name")
    sys.exit(c.done())            # prints the count; 1 if any failed
"""
import os
import subprocess
import tempfile


class Checks:
    def __init__(self):
        self.failures = 0
        self._scratch = tempfile.TemporaryDirectory()  # reports go here, never into the cwd
        self.scratch = self._scratch.name

    def check(self, ok, what):
        print(("ok: " if ok else "FAIL: ") + what)
        if not ok:
            self.failures += 1

    def analyze(self, opscope, path, name, *options, timeout=None):
        """`opscope analyze PATH --top 0 --out SCRATCH/NAME OPTIONS...`: the
        completed process and the report folder."""
        out = os.path.join(self.scratch, name)
        run = subprocess.run([opscope, "analyze", path, "--top", "0", "--out", out, *options],
                             capture_output=True, text=True, timeout=timeout)
        return run, out

    def done(self):
        print(f"{self.failures} failure(s)")
        return 1 if self.failures else 0
