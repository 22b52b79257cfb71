"""The Hugging Face path, with a local stand-in for `snapshot_download` (no network)."""

import huggingface_hub
import pytest
from huggingface_hub.errors import LocalEntryNotFoundError

import medvqa
from medvqa.adapters.jmed48k import hub
from medvqa.core.items import DataError


class FakeHub:
    """Behaves like `snapshot_download` for one dataset: a cache that starts empty."""

    def __init__(self, snapshot_dir, release, online=True):
        self.snapshot_dir, self.release, self.online = snapshot_dir, release, online
        self.calls = []

    def __call__(self, **kwargs):
        self.calls.append(kwargs)
        cached = (self.snapshot_dir / hub.FOLDER).exists()
        if kwargs.get("local_files_only") and not cached:
            raise LocalEntryNotFoundError("not in the cache")
        if not cached:
            if not self.online:
                raise LocalEntryNotFoundError("offline and not in the cache")
            self.snapshot_dir.mkdir(parents=True)
            (self.snapshot_dir / hub.FOLDER).symlink_to(self.release, target_is_directory=True)
        return str(self.snapshot_dir)


def test_eval_split_without_data_downloads_once_and_shows_the_licence(monkeypatch, capsys, tmp_path, jmed_sample):
    fake = FakeHub(tmp_path / "snapshot", jmed_sample)
    monkeypatch.setattr(huggingface_hub, "snapshot_download", fake)
    items = medvqa.load("jmed48k", split="eval")
    assert len(items) == 800 and {it.meta["year"] for it in items} == {2025, 2026}
    assert "CC-BY-NC-4.0" in capsys.readouterr().err
    expected = {"repo_id": "JMed48k/JMed48k", "repo_type": "dataset", "allow_patterns": ["JMed48k-eval/*"]}
    assert fake.calls == [{**expected, "local_files_only": True}, expected]
    assert len(medvqa.load("jmed48k", split="full", years=[2026])) == 400  # from the cache now
    assert fake.calls[2:] == [{**expected, "local_files_only": True}]
    assert capsys.readouterr().err == ""


def test_offline_without_a_copy_names_both_ways_to_get_the_data(monkeypatch, tmp_path, jmed_sample):
    monkeypatch.setattr(huggingface_hub, "snapshot_download", FakeHub(tmp_path / "snapshot", jmed_sample, online=False))
    with pytest.raises(DataError) as err:
        medvqa.load("jmed48k", split="eval")
    message = str(err.value)
    assert "--data PATH" in message and "JMed48k/JMed48k" in message and "go online" in message
    assert "LocalEntryNotFoundError" in message


def test_sample_split_never_touches_the_hub(monkeypatch):
    monkeypatch.setattr(huggingface_hub, "snapshot_download", lambda **kw: pytest.fail("the sample must not download"))
    assert {it.meta["profession"] for it in medvqa.load("jmed48k", split="sample")} == {"Physician", "Nurse"}
