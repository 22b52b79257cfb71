"""Every file medvqa writes goes through the run store's one writer (`write_atomic`): a link
planted where a page, a table, a figure, an export or an eval set's comparison is written (or
where the old code put its temporary file) is never written through, its target stays as it
was; and on a full disk the error names the file, the old file stays whole and no temporary
file is left."""

from __future__ import annotations

import errno
import json
import os
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from medvqa.cli.main import cli
from medvqa.core.files import write_atomic
from medvqa.core.items import DataError

VICTIM = "a file outside, never to be written\n"


def invoke(*args, cwd: Path):
    old = Path.cwd()
    os.chdir(cwd)
    try:
        return CliRunner().invoke(cli, [str(a) for a in args])
    finally:
        os.chdir(old)


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> Path:
    """A folder holding two runs of the JMed48k sample (random, constant:A), C+Q and C+Q+I."""
    root = tmp_path_factory.mktemp("writes")
    for model, name in (("random", "r1"), ("constant:A", "r2")):
        result = invoke(
            "run", "jmed48k", "--sample", "--model", model, "--run-dir", name, "--no-cache", "--json", cwd=root
        )
        assert result.exit_code == 0, result.output
    return root


def plant(folder: Path, name: str) -> Path:
    """A link at `folder/name` to a victim file outside `folder`; returns the victim."""
    link = folder / name
    link.parent.mkdir(parents=True, exist_ok=True)
    victim = folder.parent / f"victim-{folder.name}-{name.replace('/', '_')}"
    victim.write_text(VICTIM, encoding="utf-8")
    link.symlink_to(victim)
    return victim


# (command, links planted (relative to the output folder), the files it must write there)
COMMANDS = [
    ("view --html", ["view", "../r1", "../r2", "--html", "p.html"], ["p.html.tmp"], ["p.html"]),
    ("view --html over a link", ["view", "../r1", "--html", "p.html"], ["p.html"], ["p.html"]),
    (
        "audit --html",
        ["audit", "../r1", "--html", "p.html", "--resamples", "20"],
        ["p.html", "p-items.html.tmp"],
        ["p.html", "p-items.html"],
    ),
    (
        "compare --html",
        ["compare", "../r1", "../r2", "--html", "p.html", "--resamples", "20"],
        ["p.html", "p-items.html.tmp", "p-audits/01-jmed48k-random.html"],
        ["p.html", "p-items.html", "p-audits/01-jmed48k-random.html"],
    ),
    ("compare --out", ["compare", "../r1", "../r2", "--out", "c.md"], ["c.md"], ["c.md"]),
    (
        "compare --format csv --out",
        ["compare", "../r1", "../r2", "--format", "csv", "--out", "c.csv"],
        ["c.csv"],
        ["c.csv"],
    ),
    (
        "audit --figures",
        ["audit", "../r1", "--figures", "figs", "--resamples", "20"],
        ["figs/states_overall.png", "figs/delta_overall.svg"],
        ["figs/states_overall.png", "figs/delta_overall.svg"],
    ),
    ("export --out", ["export", "../r1", "--out", "p.jsonl"], ["p.jsonl"], ["p.jsonl"]),
]


@pytest.mark.parametrize("args,links,written", [c[1:] for c in COMMANDS], ids=[c[0] for c in COMMANDS])
def test_no_output_is_written_through_a_planted_link(runs, tmp_path, args, links, written):
    out = runs / f"out-{tmp_path.name}"
    out.mkdir()
    victims = [plant(out, name) for name in links]
    result = invoke(*args, cwd=out)
    assert result.exit_code == 0, result.output
    for victim in victims:
        assert victim.read_text(encoding="utf-8") == VICTIM  # never written through the link
    for name in written:
        assert (out / name).is_file() and not (out / name).is_symlink() and (out / name).stat().st_size > 0
    leftovers = [p.name for p in out.rglob(".*.tmp")]
    assert not leftovers


def test_an_eval_sets_comparison_is_not_written_through_planted_links(tmp_path):
    study = tmp_path / "s"
    victims = [plant(study, "compare.md"), plant(study, "compare.json")]
    (tmp_path / "set.toml").write_text(
        'study_dir = "s"\n[[models]]\nmodel = "constant:A"\n[[models]]\n'
        'model = "random"\n[[benchmarks]]\nbenchmark = "jmed48k"\nsample = true\n'
        'conditions = "C+Q"\n',
        encoding="utf-8",
    )
    result = invoke("eval", "set.toml", "--json", cwd=tmp_path)
    assert result.exit_code == 0, result.output
    assert [v.read_text(encoding="utf-8") for v in victims] == [VICTIM, VICTIM]
    assert not (study / "compare.md").is_symlink() and "constant:A" in (study / "compare.md").read_text(
        encoding="utf-8"
    )
    compared = json.loads((study / "compare.json").read_text(encoding="utf-8"))
    assert {r["model"] for r in compared["runs"]} == {"constant:A", "random"}


def test_the_temporary_file_has_a_fresh_unpredictable_name_each_time(tmp_path):
    seen = []  # the temporary file of each write, seen while it is written
    for _ in range(3):
        write_atomic(tmp_path / "a.txt", lambda fh: seen.extend(p.name for p in tmp_path.glob(".*.tmp")))
    assert len(set(seen)) == len(seen) == 3
    assert all(n.startswith(".a.txt.") and n.endswith(".tmp") and len(n) == len(".a.txt..tmp") + 16 for n in seen)
    assert [p.name for p in tmp_path.iterdir()] == ["a.txt"]


def test_a_write_that_fails_midway_leaves_the_old_file_and_no_temporary_file(tmp_path):
    target = tmp_path / "kept.txt"
    target.write_text("old\n", encoding="utf-8")

    def half(fh):
        fh.write(b"new, half")
        raise ValueError("the figure could not be drawn")

    with pytest.raises(ValueError, match="could not be drawn"):
        write_atomic(target, half)
    assert target.read_text(encoding="utf-8") == "old\n" and [p.name for p in tmp_path.iterdir()] == ["kept.txt"]


@pytest.fixture
def full_disk(tmp_path):
    """A 64 KiB tmpfs mounted at `tmp_path / "disk"`, unmounted after the test (skipped, saying
    why, where mounting is refused: not root, or no tmpfs in this container)."""
    disk = tmp_path / "disk"
    disk.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(disk)], capture_output=True, text=True
    )
    if done.returncode != 0:
        pytest.skip(
            f"cannot mount a tmpfs to fill ({done.stderr.strip() or done.returncode}): "
            "the full-disk case is not checked here"
        )
    try:
        yield disk
    finally:
        subprocess.run(["umount", str(disk)], check=True)


def fill(disk: Path) -> None:
    """Fill `disk` to its last byte."""
    with open(disk / "filler", "wb", buffering=0) as fh:
        try:
            while True:
                fh.write(b"\0" * 1024)
        except OSError as exc:
            assert exc.errno == errno.ENOSPC


def test_compare_out_on_a_full_disk_names_the_file_and_keeps_the_old_one_whole(runs, full_disk):
    old = "| the comparison written before |\n" * 40
    (full_disk / "c.md").write_text(old, encoding="utf-8")
    fill(full_disk)
    before = sorted(p.name for p in full_disk.iterdir())
    result = invoke("compare", runs / "r1", runs / "r2", "--out", full_disk / "c.md", cwd=runs)
    assert result.exit_code == 1
    assert f"{full_disk / 'c.md'}: cannot write (No space left on device): free disk space" in result.output
    assert "Traceback" not in result.output
    assert (full_disk / "c.md").read_text(encoding="utf-8") == old  # whole, not cut to 0 bytes
    assert sorted(p.name for p in full_disk.iterdir()) == before  # no temporary file left


def test_write_atomic_on_a_full_disk_is_a_data_error_naming_the_file(full_disk):
    fill(full_disk)
    with pytest.raises(DataError) as caught:
        write_atomic(full_disk / "page.html", "x" * 100_000)
    assert str(caught.value).startswith(f"{full_disk / 'page.html'}: cannot write (No space left on device)")
    assert sorted(p.name for p in full_disk.iterdir()) == ["filler"]


def test_a_decoded_image_is_not_written_through_a_link_at_a_guessable_name(tmp_path):
    import base64
    import hashlib
    import io

    from PIL import Image

    import medvqa

    buf = io.BytesIO()
    Image.new("RGB", (8, 8), (0, 0, 255)).save(buf, format="PNG")
    png = buf.getvalue()
    tables = tmp_path / "wmqa"
    tables.mkdir()
    (tables / "japan_local.tsv").write_text(
        "index\tquestion\tA\tB\tC\tD\tanswer\timage\n"
        f"1\t画像の所見は?\tア\tイ\tウ\tエ\tA\t{base64.b64encode(png).decode()}\n",
        encoding="utf-8",
    )
    images = medvqa.cache_dir() / "worldmedqa_v" / "images"
    digest = hashlib.sha256(png).hexdigest()
    victim = plant(images, f"{digest}.tmp")  # where the image was written before it was renamed
    [item] = medvqa.load("worldmedqa_v", path=tables)
    assert item.images[0].path == images / f"{digest}.png" and item.images[0].path.read_bytes() == png
    assert victim.read_text(encoding="utf-8") == VICTIM


def test_litellms_names_are_not_written_through_a_link_at_a_guessable_name(tmp_path):
    from types import SimpleNamespace

    from medvqa.core.inference import model_names

    found = model_names.litellm_version()
    assert found is not None  # litellm is a dependency
    path = model_names.names_path(found)
    victim = plant(path.parent, f"{path.name}.{os.getpid()}.tmp")  # named by the process id before
    model_names.remember_names(SimpleNamespace(provider_list=["openai"], model_list=["gpt-4o-mini"]))
    assert victim.read_text(encoding="utf-8") == VICTIM
    assert json.loads(path.read_text(encoding="utf-8")) == {
        "litellm": found,
        "providers": ["openai"],
        "models": ["gpt-4o-mini"],
    }
