"""The wheel holds every source folder: setup.py finds the packages below the mapped roots,
which only works when each folder with Python files is a package."""

from pathlib import Path

from tests.conftest import REPO

ROOTS = ("medvqa", "core", "adapters", "cli")


def test_every_source_folder_is_a_package():
    missing = sorted(
        str(folder.relative_to(REPO))
        for root in ROOTS
        for folder in [REPO / root, *(REPO / root).rglob("*")]
        if folder.is_dir()
        and "__pycache__" not in folder.parts
        and any(folder.glob("*.py"))
        and not (folder / "__init__.py").exists()
    )
    assert missing == [], f"folders with Python files but no __init__.py (left out of the wheel): {missing}"


def test_setup_maps_each_root_and_finds_sub_packages(monkeypatch):
    import setuptools

    seen = {}
    monkeypatch.setattr(setuptools, "setup", lambda **kw: seen.update(kw))
    monkeypatch.chdir(REPO)
    exec(compile((REPO / "setup.py").read_text(), "setup.py", "exec"), {"__name__": "__main__"})
    packages = set(seen["packages"])
    expected = {
        "medvqa",
        "medvqa.core",
        "medvqa.core.scoring",
        "medvqa.core.run",
        "medvqa.core.audit",
        "medvqa.core.inference",
        "medvqa.adapters.jmed48k",
        "medvqa.adapters.jmed48k.extract",
        "medvqa.cli",
    }
    assert expected <= packages
    for name in packages:  # each package name points at a real folder with an __init__.py
        root = max((p for p in seen["package_dir"] if name == p or name.startswith(p + ".")), key=len)
        folder = Path(seen["package_dir"][root], *name[len(root) :].split(".")[1:])
        assert (REPO / folder / "__init__.py").exists(), name
