"""Shared fixtures of the Python package's tests. The package under test is
the one on PYTHONPATH (ctest sets build/<preset>/python); the real samples are
tests/data, and the expected figures tests/analyze/golden (computed from the
raw files by make_expected.py, independently of opscope)."""
import json
import os
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data"
GOLDEN = ROOT / "tests" / "analyze" / "golden"


@pytest.fixture
def data():
    return DATA


@pytest.fixture
def golden():
    def load(name):
        return json.loads((GOLDEN / name).read_text())
    return load


@pytest.fixture
def cli():
    """The opscope command of the same build, when ctest names it."""
    path = os.environ.get("OPSCOPE_CLI")
    if not path:
        pytest.skip("OPSCOPE_CLI not set (run through ctest)")
    return path
