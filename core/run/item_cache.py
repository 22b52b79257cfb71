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
benchmark's adapter, and the data itself: the name, size, modification and change times and
inode of every file under the data folder (for data given as one file: under its folder; links
followed only where they stay inside it). Any change there, a file added, removed or rewritten,
means a fresh load (and, when the data changed since the run, the same error as without the
cache). An entry whose file is cut short, corrupt or of another format is loaded afresh and
replaced; entries are written by the run store's one writer, so a reader never sees half of one.

An entry is read as untrusted: its SHA-256 proves it whole, not that medvqa wrote it (anyone who
can write the cache folder can recompute one). So it keeps each item as the very text its
fingerprint hashes (`Item.canonical`), with its image paths and the order of its `meta` beside:
the fingerprint of those texts must equal the stored one and the run's manifest's, so they are
the genuine items' texts (a forgery would need a SHA-256 preimage), and each item is built from
its text through the item model, its image paths put back where the text says an image is there;
those paths must lie in the data folder or the cache folder. An entry failing any of these is
loaded afresh and replaced. (Hashing the kept texts takes 0.03 s for 24,000 items; dumping each
built item again to hash it took 0.5 s.) Runs whose data is not a local path (a Hub download, the
packaged sample) load their items as before. `validate` and `run` always load and
check.

`run` leaves the entry behind (`keep`): it has just loaded and checked the very items an analysis
of it would read, so it keeps them under the slot its manifest names (`run_slot`), signed with the
data as it was before the load began (a file changed during the load changes the signature, and
the next analysis loads afresh). The first `audit`, `compare` or `score` after a run then reads
the entry like the second one does, instead of loading and checking the items again.
"""

from __future__ import annotations

import hashlib
import inspect
import io
import json
import os
import pickle
import stat
from collections.abc import Callable
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

from ..files import confined, read_kept, write_atomic
from ..items import DataError, Item, fingerprint_items, fingerprint_texts

FORMAT = 3  # 3: each item kept as its fingerprint's text
MAGIC = b"medvqa-items\n"
MAX_FILES = 200_000  # a data folder with more files than this is not signed (nor cached)


def folder() -> Path:
    """`<medvqa's cache folder>/items`."""
    from ..files import cache_dir

    return cache_dir() / "items"


def data_signature(data: str | Path) -> str | None:
    """A digest of the name, size, modification and change times and inode of every file under
    `data` (a folder, or the folder of a file): an edit that keeps a file's size and puts its
    modification time back (`touch -r`, `cp -p`) still changes its change time. None when `data`
    is not there, or holds more than `MAX_FILES` files. A link is followed only when it stays
    inside the folder (a link to `/` would walk the whole file system on every analysis); one
    leading out is signed by where it points and, for a file, by that file's size and times."""
    path = Path(data)
    if not path.exists():
        return None
    root = os.path.realpath(path if path.is_dir() else path.parent)
    h = hashlib.sha256()
    seen: set[tuple[int, int]] = set()
    count = 0
    folders = [root]
    while folders:
        here = folders.pop()
        st = os.stat(here)
        if (st.st_dev, st.st_ino) in seen:  # a link back up the tree, or a second link to one folder
            continue
        seen.add((st.st_dev, st.st_ino))
        try:
            entries = sorted(os.scandir(here), key=lambda e: e.name)
        except OSError:
            h.update(f"{here}\0unreadable\n".encode("utf-8", "surrogateescape"))
            continue
        for entry in entries:
            found, out = _stat(entry.path, root)
            if found is not None and stat.S_ISDIR(found.st_mode) and out is None:
                folders.append(entry.path)
                continue
            line: list[object] = [entry.path, *(["->", out] if out is not None else [])]
            if found is not None and not stat.S_ISDIR(found.st_mode):
                line += [found.st_size, found.st_mtime_ns, found.st_ctime_ns, found.st_ino]
            h.update(("\0".join(map(str, line)) + "\n").encode("utf-8", "surrogateescape"))
            count += 1
        if count > MAX_FILES:
            return None
    return h.hexdigest()


def _stat(path: str, root: str) -> tuple[os.stat_result | None, str | None]:
    """(the stat of what `path` names, None when nothing is there; where it points when it is a
    link that leads out of `root` or nowhere, else None)."""
    try:
        st = os.lstat(path)
        pointing = os.readlink(path) if stat.S_ISLNK(st.st_mode) else None
    except OSError:  # gone meanwhile
        return None, None
    if pointing is None:
        return st, None
    try:
        st = os.stat(path)
    except OSError:  # a dangling link
        return None, pointing
    target = os.path.realpath(path)
    return st, None if target == root or target.startswith(root + os.sep) else pointing


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
    """Plain data only (texts, lists, dicts): an entry names no class, and one that does is not
    read (a pickle can otherwise run code)."""

    def find_class(self, module: str, name: str):
        raise pickle.UnpicklingError(f"{module}.{name} is not item data")


def _read(path: Path, key: list, roots: tuple[str, ...]) -> tuple[list[Item], str] | None:
    """(items, fingerprint) of the entry at `path` when it is whole and made under `key`, else None.

    An entry is read as untrusted (its digest proves it whole, not ours): the fingerprint of its
    texts must be the one stored, each item is built from its text through the item model (its own
    checks, not the loader's) with its image paths and `meta` order put back, and every image path
    must be a file inside one of `roots` (the data folder, the cache folder), as the loader
    confined it."""
    whole = read_kept(path)  # (never through a link: a link to /dev/zero would never end)
    start = len(MAGIC) + 64
    if (
        whole is None
        or whole[: len(MAGIC)] != MAGIC
        or hashlib.sha256(memoryview(whole)[start:]).hexdigest().encode() != whole[len(MAGIC) : start]
    ):
        return None  # cut short or damaged
    try:
        payload = io.BytesIO(whole)  # (shares the bytes: no copy of a large entry)
        payload.seek(start)
        del whole
        stored = _Unpickler(payload).load()
        del payload  # (the file's bytes, no longer needed while the items are built)
        if not (isinstance(stored, dict) and stored.get("key") == key and isinstance(stored.get("fingerprint"), str)):
            return None
        kept = stored.pop("items")
        if fingerprint_texts(text for text, _, _ in kept) != stored["fingerprint"]:
            return None
        kept.reverse()
        items = []
        while kept:  # each item's text let go once it is built
            items.append(rebuild_item(*kept.pop()))
    except Exception:  # noqa: BLE001 - an entry of another medvqa, or not ours: loaded afresh
        return None
    # an image file kept outside the data folder (an adapter's own cache of decoded images) must still be there
    if not all(im.path is None or confined(im.path, roots) for it in items for im in it.images):
        return None
    return items, stored["fingerprint"]


def keep_item(item: Item, text: str) -> tuple[str, list[str | None], list[str]]:
    """What an entry keeps of `item`: its canonical text, its image paths and its `meta` keys in
    their order (the text sorts them)."""
    return text, [None if im.path is None else str(im.path) for im in item.images], list(item.meta)


def rebuild_item(text: str, paths: list, order: list) -> Item:
    """The item an entry kept as `keep_item`: built from its text, where each image is marked there or
    not; a path must be given exactly where the text says the image is there, and the `meta` keys
    must be the text's own."""
    data = json.loads(text)
    images, meta = data["images"], data["meta"]
    if len(paths) != len(images) or len(order) != len(meta) or meta.keys() != set(order):
        raise ValueError("paths or meta keys that are not the text's")
    for im, p in zip(images, paths):
        if (p is not None) is not im["path"]:
            raise ValueError("an image path where the text says there is none, or none where it says one")
        im["path"] = p
    data["meta"] = {k: meta[k] for k in order}
    return Item.model_validate(data)


def _write(path: Path, key: list, items: list[Item], texts: list[str], fingerprint: str) -> None:
    """The entry written to a temporary file and renamed over `path`; a cache folder that cannot
    be written (read-only, full) leaves the items uncached, nothing else."""
    data = [keep_item(it, text) for it, text in zip(items, texts)]
    payload = pickle.dumps({"key": key, "fingerprint": fingerprint, "items": data}, protocol=pickle.HIGHEST_PROTOCOL)
    try:
        write_atomic(
            path, lambda fh: fh.write(MAGIC + hashlib.sha256(payload).hexdigest().encode() + payload), sync=False
        )
    except DataError:
        pass


def run_slot(manifest: dict) -> tuple[dict, list]:
    """(the load options, the slot) of a run's items as its manifest names them: what the run
    loaded (`load`, or the `data` and `split` of a manifest written before it) under its
    benchmark, convention and language. The run that keeps its items and every analysis that
    reads them name the entry here, so they name the same one."""
    load = manifest.get("load") or {"data": manifest.get("data"), "split": manifest.get("split")}
    return load, [manifest["benchmark"], manifest.get("convention"), manifest.get("language"), load]


def signature_of(load: dict[str, Any]) -> str | None:
    """The data signature an entry of `load` is kept under (`data_signature` of its data), or None
    when its items are not kept: no local data, the packaged sample, too many files."""
    data = load.get("data")
    return data_signature(data) if data and not load.get("sample") else None


def _slot(benchmark, load: dict[str, Any], slot: list, signature: str) -> tuple[Path, list, tuple[str, ...]]:
    """(the entry's path, the key it is kept under, the folders its image paths may lie in)."""
    data = load["data"]
    slot_text = json.dumps(slot, sort_keys=True, default=str)
    key = [FORMAT, slot_text, code_signature(benchmark), signature]
    roots = (os.path.realpath(data if Path(data).is_dir() else Path(data).parent), os.path.realpath(folder().parent))
    return _entry_path(slot_text), key, roots


def keep(benchmark, manifest: dict, items: list[Item], signature: str | None, texts: list[str] | None = None) -> None:
    """Keep `items`, just loaded and checked by the run whose manifest is `manifest`, as the
    entry its analyses read (`run_slot`); `signature` is the data's (`signature_of`) taken before
    the items were loaded, `texts` their `Item.canonical` texts when the caller has them. Nothing
    is kept without a signature, nor when the items are not the ones the manifest's fingerprint
    names; a cache folder that cannot be written keeps nothing either."""
    load, slot = run_slot(manifest)
    if signature is None or not load.get("data") or load.get("sample"):
        return
    texts = [it.canonical() for it in items] if texts is None else texts
    fingerprint = fingerprint_texts(texts)
    if fingerprint != manifest.get("data_fingerprint"):
        return
    path, key, _ = _slot(benchmark, load, slot, signature)
    _write(path, key, items, texts, fingerprint)


def load_checked(
    benchmark,
    load: dict[str, Any],
    slot: list,
    loader: Callable[[], list[Item]],
    check: Callable[[list[Item], str], bool] | None = None,
) -> tuple[list[Item], str]:
    """(items, data fingerprint) of `loader()` (a benchmark's load of `load`), from the cache
    when an entry made under the same slot (benchmark, convention, language, `load`), code and
    data is there and its items pass `check(items, fingerprint)` (the run's own fingerprint, say:
    a kept entry never decides the data changed, a fresh load does); else loaded, fingerprinted
    and kept."""
    signature = signature_of(load)
    if signature is None:  # (no signature without data)
        items = loader()
        return items, fingerprint_items(items)
    path, key, roots = _slot(benchmark, load, slot, signature)
    if (found := _read(path, key, roots)) is not None and (check is None or check(*found)):
        return found
    items = loader()
    texts = [it.canonical() for it in items]
    fingerprint = fingerprint_texts(texts)
    _write(path, key, items, texts, fingerprint)
    return items, fingerprint
