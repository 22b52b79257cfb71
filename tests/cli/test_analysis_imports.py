"""What the analyses of a saved run import: `audit` and `score` need no pandas (a fifth of a
second to import, a tenth of a whole audit of 24,000 records); `compare`, whose tables are
frames, does."""

import json
import subprocess
import sys

CODE = """
import json
import sys
from medvqa.cli.main import cli
try:
    cli(sys.argv[1:], prog_name="medvqa")
except SystemExit as exc:
    assert not exc.code, exc.code
print(json.dumps(sorted(m for m in ("pandas", "scipy.stats") if m in sys.modules)), file=sys.stderr)
"""


def modules_after(*args: str) -> list[str]:
    out = subprocess.run([sys.executable, "-c", CODE, *args], capture_output=True, text=True, check=True)
    return json.loads(out.stderr.strip().splitlines()[-1])


def test_audit_and_score_of_a_saved_run_import_no_pandas(tmp_path):
    run = tmp_path / "run"
    subprocess.run(
        [sys.executable, "-m", "medvqa.cli", "run", "jmed48k", "--sample", "--model", "random"]
        + ["--conditions", "C+Q,C+Q+I", "--run-dir", str(run), "--json"],
        capture_output=True,
        check=True,
    )
    assert modules_after("audit", str(run), "--json") == []
    assert modules_after("score", str(run)) == []
    assert modules_after("compare", str(run), str(run), "--json") == ["pandas"]
