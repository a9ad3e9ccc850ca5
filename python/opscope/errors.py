"""opscope's exceptions: one class per kind of failure, each an OpscopeError.

Every error from the C++ library arrives as one of these, with the message the
CLI prints. Where the message names a place in a file (``file: byte N: ...``,
``file: line N ...``), ``path``, ``offset`` and ``line`` hold it; else None.
"""

import os
import re


class OpscopeError(Exception):
    """Base of opscope's errors. ``code`` names the kind ("invalid_input", ...)."""

    code = "internal"

    def __init__(self, message, path=None, offset=None, line=None):
        super().__init__(message)
        self.message = message
        self.path = path
        self.offset = offset
        self.line = line


class TraceFormatError(OpscopeError, ValueError):
    """A file's content is wrong: malformed JSON or CSV, a missing field, a bad value."""

    code = "invalid_input"


class InvalidArgumentError(OpscopeError, ValueError):
    """A value the caller passed is wrong."""

    code = "invalid_argument"


class OpscopeIOError(OpscopeError, OSError):
    """Reading or writing a file failed (missing, unreadable, disk full)."""

    code = "io"


class UnsupportedError(OpscopeError):
    """The device, format or feature is not available here."""

    code = "unsupported"


class ResourceExhaustedError(OpscopeError, MemoryError):
    """Not enough memory for what was asked."""

    code = "resource_exhausted"


class FailedPreconditionError(OpscopeError, RuntimeError):
    """Called in the wrong state (a profiler already recording, events not kept)."""

    code = "failed_precondition"


class InternalError(OpscopeError, RuntimeError):
    """A bug in opscope."""

    code = "internal"


_BY_CODE = {cls.code: cls for cls in (TraceFormatError, InvalidArgumentError, OpscopeIOError,
                                      UnsupportedError, ResourceExhaustedError,
                                      FailedPreconditionError, InternalError)}

# "<file>: byte <N>: ..." (JSON readers) and "<file>: line <N>..." /
# "<file>:<N>: ..." (CSV readers); the file may itself hold ": ".
_BYTE = re.compile(r"^(?:'(?P<q>[^']*)'|(?P<p>.*?)): byte (?P<offset>\d+)\b")
_LINE = re.compile(r"^(?:'(?P<q>[^']*)'|(?P<p>.*?)):? line (?P<line>\d+)\b")
_FILE = re.compile(r"^'(?P<q>[^']+)'")


def _from_native(code, message):
    """The exception for a C++ Error (called by the native module)."""
    cls = _BY_CODE.get(code, InternalError)
    path = offset = line = None
    m = _BYTE.match(message)
    if m:
        path, offset = m.group("q") or m.group("p"), int(m.group("offset"))
    else:
        m = _LINE.match(message)
        if m:
            path, line = m.group("q") or m.group("p"), int(m.group("line"))
        else:
            m = _FILE.match(message)
            if m:
                path = m.group("q")
    return cls(message, path=path, offset=offset, line=line)


def _path(value, what):
    """os.fspath(value), refused with InvalidArgumentError where it holds a NUL
    byte (as open() refuses it): the system would read the name only up to
    the NUL, which names another file."""
    path = os.fspath(value)
    nul = path.find("\0" if isinstance(path, str) else b"\0")
    if nul >= 0:
        raise InvalidArgumentError(
            f"{what}: the path holds a NUL byte at {nul}, which no file name can hold: {path!r}",
            path=path)
    return path
