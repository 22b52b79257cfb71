"""The fast loop (`python -m pytest -q -m "not slow" -n 2`, README) stays fast: a test module
marked slow as a whole is neither collected nor imported there, and pytest starts without
importing hypothesis."""

import subprocess
import sys

from tests.conftest import REPO

COLLECT = """
import sys, pytest
print("exit:", int(pytest.main(["--collect-only", "-q", *sys.argv[1:], "tests/core/scoring"])))
print("hypothesis imported:", "hypothesis" in sys.modules)
"""


def collect(*args: str) -> str:
    out = subprocess.run([sys.executable, "-c", COLLECT, *args], capture_output=True, text=True, cwd=REPO)
    assert "exit: 0" in out.stdout, out.stdout + out.stderr
    return out.stdout


def test_a_module_marked_slow_is_not_even_imported_by_the_fast_loop():
    fast, full = collect("-m", "not slow"), collect()
    assert "test_normalize_properties.py::test_rule_chain_agrees_with_the_written_rules" in full
    assert "hypothesis imported: True" in full  # the property tests need it
    assert "test_normalize_properties.py" not in fast and "hypothesis imported: False" in fast
    # the module's siblings are collected as before
    assert "test_normalize.py::" in fast and fast.count("test_normalize.py::") == full.count("test_normalize.py::")
