"""The items of a saved run's data, remembered between analyses.

`audit`, `compare` and `score` of a saved run need its items (gold answers, options, strata,
which images are there), not a dataset checked again: building and checking tens of thousands
of items (their checks, the data fingerprint, every image path confined to the dataset folder)
cost more than the analysis itself. The first analysis of a data folder loads and checks its
items as `run` does and keeps them, with their data fingerprint, in medvqa's cache folder
(`<cache>/items/`); the next ones read them back and compare that fingerprint with the run's
manifest, as a fresh load does.

A kept entry is used only while everything that made it is unchanged: the benchmark, its
convention, language and load options, the medvqa version and the source files of the
benchmark's adapter, and the data itself: the name, size and modification time of every file
under the data folder (for data given as one file: under its folder). Any change there, a file
added, removed or rewritten, means a fresh load (and, when the data changed since the run, the
same error as without the cache). An entry whose file is cut short, corrupt or of another
format is loaded afresh and replaced; entries are written to a temporary file and renamed, so
a reader never sees half of one. Runs whose data is not a local path (a Hub download, the
packaged sample) load their items as before. `validate` and `run` always load and check.
"""

from __future__ import annotations

import hashlib
import inspect
import io
import json
import os
import pickle
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any, Callable

from medvqa.core.items import DataError, Item, fingerprint_items
from medvqa.core.run.store import write_atomic

FORMAT = 2
MAGIC = b"medvqa-items\n"
MAX_FILES = 200_000  # a data folder with more files than this is not signed (nor cached)


def folder() -> Path:
    """`<medvqa's cache folder>/items`."""
    from medvqa.core.api import cache_dir

    return cache_dir() / "items"


def data_signature(data: str | Path) -> str | None:
    """A digest of the name, size and modification time of every file under `data` (a folder,
    or the folder of a file), following symbolic links; None when `data` is not there, or holds
    more than `MAX_FILES` files."""
    path = Path(data)
    root = path if path.is_dir() else path.parent
    if not path.exists():
        return None
    h = hashlib.sha256()
    seen: set[tuple[int, int]] = set()
    count = 0
    for here, dirs, files in os.walk(root, followlinks=True):
        st = os.stat(here)
        if (st.st_dev, st.st_ino) in seen:  # a link back up the tree
            dirs[:] = []
            continue
        seen.add((st.st_dev, st.st_ino))
        dirs.sort()
        for name in sorted(files):
            full = os.path.join(here, name)
            try:
                st = os.stat(full)
            except OSError:  # a dangling link
                h.update(f"{full}\0-\n".encode("utf-8", "surrogateescape"))
                continue
            h.update(f"{full}\0{st.st_size}\0{st.st_mtime_ns}\n".encode("utf-8", "surrogateescape"))
        count += len(files)
        if count > MAX_FILES:
            return None
    return h.hexdigest()


def _sources(folder: Path, pattern: str) -> list:
    return [(str(p.relative_to(folder)), p.stat().st_size, p.stat().st_mtime_ns) for p in sorted(folder.glob(pattern))]


def code_signature(benchmark) -> list:
    """What the loading code is: the medvqa version, the item model's fields, and the size and
    modification time of each source file beside the benchmark's class (its adapter) and of
    medvqa's core."""
    try:
        adapter = _sources(Path(inspect.getfile(type(benchmark))).parent, "*.py")
    except (TypeError, OSError):  # a class without a source file
        adapter = []
    try:
        medvqa = version("medvqa")
    except PackageNotFoundError:
        medvqa = None
    return [medvqa, sorted(Item.model_fields), adapter, _sources(Path(inspect.getfile(Item)).parent, "**/*.py")]


def _entry_path(slot: str) -> Path:
    return folder() / f"{hashlib.sha256(slot.encode()).hexdigest()[:32]}.pickle"


class _Unpickler(pickle.Unpickler):
    """Plain data, paths and image roles only: an entry names no other class, and one that does
    is not read (a pickle can otherwise run code)."""

    ALLOWED = {("pathlib", "PosixPath"), ("pathlib", "WindowsPath"), ("medvqa.core.items", "ImageRole")}

    def find_class(self, module: str, name: str):
        if (module, name) not in self.ALLOWED:
            raise pickle.UnpicklingError(f"{module}.{name} is not item data")
        return super().find_class(module, name)


def _read(path: Path, key: list) -> tuple[list[Item], str] | None:
    """(items, fingerprint) of the entry at `path` when it is whole and made under `key`, else None.
    The items are built through the item model again (its own checks, not the loader's)."""
    try:
        with path.open("rb") as fh:
            header, payload = fh.read(len(MAGIC) + 64), fh.read()
    except OSError:
        return None
    if header[:len(MAGIC)] != MAGIC or hashlib.sha256(payload).hexdigest().encode() != header[len(MAGIC):]:
        return None  # cut short or damaged
    try:
        stored = _Unpickler(io.BytesIO(payload)).load()
        del payload  # (the file's bytes, no longer needed while the items are built)
        if not (isinstance(stored, dict) and stored.get("key") == key and isinstance(stored.get("fingerprint"), str)):
            return None
        data, items = stored.pop("items")[::-1], []
        while data:  # each item's data let go once it is built
            items.append(Item.model_validate(data.pop()))
    except Exception:  # noqa: BLE001 - an entry of another medvqa, or not ours: loaded afresh
        return None
    # an image file kept outside the data folder (an adapter's own cache of decoded images) must still be there
    if not all(im.path is None or im.path.is_file() for it in items for im in it.images):
        return None
    return items, stored["fingerprint"]


def _write(path: Path, key: list, items: list[Item], fingerprint: str) -> None:
    """The entry written to a temporary file and renamed over `path`; a cache folder that cannot
    be written (read-only, full) leaves the items uncached, nothing else."""
    data = [it.model_dump(exclude_unset=True) for it in items]  # what the item model is given: it builds them again
    payload = pickle.dumps({"key": key, "fingerprint": fingerprint, "items": data}, protocol=pickle.HIGHEST_PROTOCOL)
    try:
        write_atomic(path, lambda fh: fh.write(MAGIC + hashlib.sha256(payload).hexdigest().encode() + payload),
                     sync=False)
    except DataError:
        pass


def load_checked(benchmark, load: dict[str, Any], slot: list, loader: Callable[[], list[Item]]) -> tuple[list[Item], str]:
    """(items, data fingerprint) of `loader()` (a benchmark's load of `load`), from the cache
    when an entry made under the same slot (benchmark, convention, language, `load`), code and
    data is there; else loaded, fingerprinted and kept."""
    data = load.get("data")
    signature = data_signature(data) if data and not load.get("sample") else None
    if signature is None:
        items = loader()
        return items, fingerprint_items(items)
    slot_text = json.dumps(slot, sort_keys=True, default=str)
    key = [FORMAT, slot_text, code_signature(benchmark), signature]
    path = _entry_path(slot_text)
    if (found := _read(path, key)) is not None:
        return found
    items = loader()
    fingerprint = fingerprint_items(items)
    _write(path, key, items, fingerprint)
    return items, fingerprint
