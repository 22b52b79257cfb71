"""Maps the repository's top-level folders onto the `medvqa` package and finds every
sub-package below them, so a new folder with an `__init__.py` is in the wheel without editing
a list (tests/test_packaging.py checks that no source folder lacks one)."""

from setuptools import find_packages, setup

ROOTS = {"medvqa": "medvqa", "medvqa.core": "core", "medvqa.adapters": "adapters", "medvqa.cli": "cli"}

packages = [
    name for prefix, folder in ROOTS.items() for name in [prefix, *(f"{prefix}.{sub}" for sub in find_packages(folder))]
]
setup(package_dir=ROOTS, packages=packages)
