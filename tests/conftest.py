"""Shared fixtures: the real data folder beside the repository, an isolated cache."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = REPO.parent / "shared" / "data"


def shared_data(*parts: str) -> Path:
    """A path under ../shared/data; fails (never skips) when the folder is absent."""
    path = SHARED_DATA.joinpath(*parts)
    if not path.exists():
        pytest.fail(
            f"real test data not found at {path}: these tests need ../shared/data beside the "
            f"repository checkout ({REPO})",
            pytrace=False,
        )
    return path


def study_records(study: Path, fields: tuple[str, ...]) -> dict:
    """{(model, experiment, item id, condition): the record's `fields`} of every run an eval set
    wrote in its study folder `study`."""
    from medvqa.core.run.store import read_records

    out = {}
    for manifest in sorted(study.glob("*/*/manifest.json")):
        run_dir = manifest.parent
        for r in read_records(run_dir):
            out[(run_dir.parent.name, run_dir.name, r["item_id"], r["condition"])] = {k: r[k] for k in fields}
    return out


@pytest.fixture
def jmed_sample() -> Path:
    return shared_data("jmed48k-sample")


@pytest.fixture(autouse=True, scope="session")
def _isolated_cache_from_the_start(tmp_path_factory):
    """Module- and session-scoped fixtures run before any function-scoped one: without this, theirs
    runs (imports, say) wrote to the user's ~/.cache/medvqa."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("MEDVQA_CACHE_DIR", str(tmp_path_factory.mktemp("session-cache")))
        yield


@pytest.fixture(autouse=True)
def _isolated_cache(tmp_path_factory, monkeypatch):
    """Never touch the user's response cache from a test."""
    monkeypatch.setenv("MEDVQA_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))


_SLOW_MODULE = re.compile(r"^pytestmark = pytest\.mark\.slow$", re.M)


def pytest_ignore_collect(collection_path: Path, config):
    """With `-m "not slow"` (the fast loop), a test module marked slow as a whole (a line
    `pytestmark = pytest.mark.slow`) is not even imported: its tests would all be deselected,
    and its imports (hypothesis, for one) cost seconds in every worker."""
    if config.getoption("markexpr", "").split() != ["not", "slow"]:
        return None
    if collection_path.suffix == ".py" and collection_path.name.startswith("test_"):
        if _SLOW_MODULE.search(collection_path.read_text(encoding="utf-8")):
            return True
    return None


@pytest.fixture(autouse=True)
def _forget_credentials():
    """Each test starts with no credential remembered by an earlier one (they are process-wide:
    a short one, such as a user name `x` in a URL, would be masked in later tests' records)."""
    from medvqa.core.inference.secrets import forget

    forget()
    yield
    forget()
