"""The conformance kit, a pytest plugin: one call in an adapter's test file checks every
contract a benchmark must keep (docs/adding-an-exam.md lists them).

    from medvqa.testing import check_benchmark

    def test_my_exam_keeps_every_contract(tmp_path):
        check_benchmark("my_exam", "tests/fixture", work_dir=tmp_path)

Installed with medvqa as a pytest plugin (entry point `medvqa` in the `pytest11` group), it also
gives the fixture `medvqa_check`: `check_benchmark` with its runs in the test's `tmp_path`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import medvqa.core  # noqa: F401  (says so when a folder named medvqa shadows the package)

__all__ = ["ContractError", "KitReport", "check_benchmark", "medvqa_check"]


def check_benchmark(
    benchmark: Any, data: Any = None, *, split: str | None = None, work_dir: Any = None, raise_on_problems: bool = True
):
    """Check a benchmark (a registered name or a `medvqa.Benchmark` object) on the data at
    `data`; raises `ContractError` listing every broken contract, naming the item. Returns a
    `KitReport`."""
    from medvqa.core.conformance.kit import check_benchmark as _check

    return _check(benchmark, data, split=split, work_dir=work_dir, raise_on_problems=raise_on_problems)


def __getattr__(name: str) -> Any:
    if name in ("ContractError", "KitReport"):
        from medvqa.core.conformance import report

        return getattr(report, name)
    raise AttributeError(f"module 'medvqa.testing' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


if TYPE_CHECKING:
    from medvqa.core.conformance.report import ContractError, KitReport


try:
    import pytest
except ImportError:  # the kit works without pytest; only the fixture needs it
    pytest = None

if pytest is not None:

    @pytest.fixture
    def medvqa_check(tmp_path):
        """`check_benchmark` with the kit's runs written under the test's `tmp_path`."""

        def check(benchmark, data=None, *, split=None):
            return check_benchmark(benchmark, data, split=split, work_dir=tmp_path / "medvqa-kit")

        return check
else:  # pragma: no cover

    def medvqa_check(*_args, **_kwargs):
        raise RuntimeError("medvqa_check is a pytest fixture: install pytest")
