"""Collecting the suite imports neither torch nor executorch: each xdist worker collects again, and a test module
that imported them at its top would make every collection pay the stack's import."""

import json
import subprocess
import sys
from pathlib import Path

PROBE = r"""
import json, sys
import pytest

class Probe:
    def pytest_collection_finish(self, session):
        self.imported = sorted(name for name in ("torch", "executorch", "tosa_reference_model", "tosa_serializer")
                               if name in sys.modules)
        self.collected = len(session.items)

probe = Probe()
code = pytest.main(["--collect-only", "-q", "-p", "no:xdist", "-p", "no:cacheprovider", sys.argv[1]],
                   plugins=[probe])
print(json.dumps({"code": int(code), "imported": probe.imported, "collected": probe.collected}))
"""


def test_collecting_the_suite_imports_neither_torch_nor_executorch():
    tests = Path(__file__).resolve().parent
    done = subprocess.run([sys.executable, "-c", PROBE, str(tests)], capture_output=True, text=True, timeout=300,
                          cwd=tests.parent)
    found = json.loads(done.stdout.strip().splitlines()[-1])
    assert found["code"] == 0, done.stdout[-3000:]
    assert found["collected"] > 500 and found["imported"] == [], found
