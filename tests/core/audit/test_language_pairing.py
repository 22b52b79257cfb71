"""The language as a paired factor: IgakuQA's block 116-A replayed with known outcomes in Japanese
and in English, audited and compared; every count of the pairing is worked out by hand from the
outcomes written."""

import json

import pytest
from click.testing import CliRunner

import medvqa
from medvqa.cli.main import cli
from medvqa.core.plugins import get_benchmark
from tests.conftest import shared_data

N11, N10, N01, N00 = 30, 10, 5, 15  # right in both, only in Japanese, only in English, in neither


def _answer(item, right: bool) -> str:
    keys = item.gold.alternatives[0]
    label = {o.key: o.label for o in item.options}
    chosen = keys if right else [next(o.key for o in item.options if o.key not in keys)]
    return '{{"answer": [{}]}}'.format(", ".join(f'"{label[k]}"' for k in chosen))


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    data = shared_data("igakuqa")
    out = tmp_path_factory.mktemp("lang")
    select = {"block": ["116A"]}
    dirs = {}
    for lang, outcome in (
        ("ja", [1] * N11 + [1] * N10 + [0] * N01 + [0] * N00),
        ("en", [1] * N11 + [0] * N10 + [1] * N01 + [0] * N00),
    ):
        bench = get_benchmark("igakuqa").with_language(lang)
        items = bench.load(data, select=select)
        # single-answer items that count under MHLW's rules (no withdrawn or credited-to-all item)
        usable = [
            it
            for it in items
            if it.options
            and not it.excluded
            and it.gold.format == "single"
            and not it.meta["withdrawn"]
            and not it.meta["credited_to_all"]
        ][: len(outcome)]
        assert len(usable) == len(outcome)
        chosen = {**select, "number": [str(it.meta["number"]) for it in usable]}  # the run reloads exactly these
        usable = bench.load(data, select=chosen)
        answers = [(it, "C+Q", _answer(it, bool(right))) for it, right in zip(usable, outcome)]
        dirs[lang] = out / lang
        medvqa.write_run(
            bench,
            usable,
            answers,
            dirs[lang],
            model="replayed",
            load={"data": str(data), "select": chosen},
            saved=False,
        )
    return dirs


def test_english_items_are_the_japanese_items_translated():
    data = shared_data("igakuqa")
    ja, en = (
        get_benchmark("igakuqa").with_language(lang).load(data, select={"block": ["116A"]}) for lang in ("ja", "en")
    )
    assert [it.id for it in ja] == [it.id for it in en] and len(ja) == 75
    assert all(a.gold == b.gold and a.n_select == b.n_select and a.meta == b.meta for a, b in zip(ja, en))
    assert en[0].language == "en" and ja[0].language == "ja" and en[0].question != ja[0].question


def test_audit_pairs_the_two_languages_and_counts_every_transition(runs):
    doc = medvqa.audit(str(runs["ja"]), str(runs["en"]))
    section = doc["paired_language"]["ja vs en"]
    row = section["conditions"]["C+Q"]["overall"]
    n = N11 + N10 + N01 + N00
    assert row["counts"] == {"n11": N11, "n10": N10, "n01": N01, "n00": N00}
    assert row["n"] == n and row["a_local"] == pytest.approx((N11 + N10) / n)
    assert row["a_other"] == pytest.approx((N11 + N01) / n)
    assert row["delta_lang"] == pytest.approx((N10 - N01) / n)
    # McNemar on the 15 discordant pairs: exact 2 · P(X ≤ 5 | 15, 1/2) = 2 · 4944 / 32768, mid-p
    # that minus P(X = 5) = 3003 / 32768 (Fagerland, Lydersen & Laake 2013)
    assert row["mcnemar_exact_p"] == pytest.approx(2 * (1 + 15 + 105 + 455 + 1365 + 3003) / 2**15)
    assert row["mcnemar_p"] == pytest.approx((2 * 4944 - 3003) / 2**15) and row["test"] == "mcnemar-mid-p"
    assert section["conditions"]["C+Q"]["unpaired"] == {}
    assert f"paired by language (ja vs en): {runs['ja']} with {runs['en']}, under C+Q" in doc["notes"]
    # by the benchmark's strata: every item of block 116A is in year 2022
    assert doc["paired_language"]["ja vs en"]["conditions"]["C+Q"]["by"]["year"]["2022"]["counts"] == row["counts"]


def test_compare_shows_delta_lang_and_does_not_refuse_two_languages(runs):
    frame = medvqa.compare([runs["ja"], runs["en"]])
    assert "runs of igakuqa on different data" not in " ".join(frame.attrs["notes"])
    result = CliRunner().invoke(cli, ["compare", str(runs["ja"]), str(runs["en"]), "--json"])
    assert result.exit_code == 0, result.output
    import json

    rows = json.loads(result.output)["delta_lang"]
    assert [(r["condition"], r["languages"], r["n"]) for r in rows] == [("C+Q", "ja vs en", 60)]
    assert rows[0]["delta_lang"] == pytest.approx((N10 - N01) / 60)


def test_run_in_english_names_its_language(tmp_path):
    run_dir = tmp_path / "en"
    result = CliRunner().invoke(
        cli,
        [
            "run",
            "igakuqa",
            "--data",
            str(shared_data("igakuqa")),
            "--language",
            "en",
            "--model",
            "random",
            "--select",
            "block=116A",
            "--run-dir",
            str(run_dir),
            "--json",
        ],
    )
    assert result.exit_code == 0, result.output
    saved = medvqa.read_run(run_dir)
    assert saved.manifest["language"] == "en" and {r["language"] for r in saved.records} == {"en"}
    assert next(iter(saved.items.values())).language == "en"
    bad = CliRunner().invoke(
        cli, ["run", "igakuqa", "--data", str(shared_data("igakuqa")), "--language", "fr", "--model", "random"]
    )
    assert bad.exit_code == 1 and "unknown language 'fr' for igakuqa; it offers: ja, en" in bad.output


def test_the_language_is_part_of_the_runs_identity(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    data = str(shared_data("igakuqa"))
    args = ["run", "igakuqa", "--data", data, "--model", "random", "--select", "block=116B", "--json"]
    ja = CliRunner().invoke(cli, args)
    en = CliRunner().invoke(cli, [*args, "--language", "en"])
    import json

    ja_dir, en_dir = json.loads(ja.output)["run_dir"], json.loads(en.output)["run_dir"]
    # the exam's own language keeps the directory name runs had before languages existed
    assert ja_dir.startswith("runs/igakuqa-full-random-") and en_dir.startswith("runs/igakuqa-en-full-random-")
    again = CliRunner().invoke(cli, [*args, "--language", "en", "--run-dir", ja_dir])
    assert again.exit_code == 1 and "holds a different run" in again.output and "language" in again.output


def test_a_block_without_its_translation_is_an_error_naming_the_file(tmp_path):
    import shutil

    source = shared_data("igakuqa") / "data" / "2022"
    year = tmp_path / "data" / "2022"
    year.mkdir(parents=True)
    for name in ("116-B.jsonl", "116-B_metadata.jsonl"):
        shutil.copy(source / name, year / name)
    with pytest.raises(
        medvqa.DataError, match=r"116-B_translate.jsonl: the English translation of this block is missing"
    ):
        get_benchmark("igakuqa").with_language("en").load(tmp_path)
    assert len(get_benchmark("igakuqa").load(tmp_path)) == 50  # Japanese needs no translation


def test_two_answer_files_replayed_under_one_model_name_pair_by_language(tmp_path):
    """Saved answers of one model in Japanese and in English, replayed from two files under one
    `--model-name`: the files differ (so do their hashes in the manifests' parameters), the
    generation does not, and the two runs pair as the written runs above do."""
    data = shared_data("igakuqa")
    outcomes = {
        "ja": [1] * N11 + [1] * N10 + [0] * N01 + [0] * N00,
        "en": [1] * N11 + [0] * N10 + [1] * N01 + [0] * N00,
    }
    runs = {}
    for lang, outcome in outcomes.items():
        items = get_benchmark("igakuqa").with_language(lang).load(data, select={"block": ["116A"]})
        usable = [
            it
            for it in items
            if it.options
            and not it.excluded
            and it.gold.format == "single"
            and not it.meta["withdrawn"]
            and not it.meta["credited_to_all"]
        ][: len(outcome)]
        answers = tmp_path / f"gpt-4-{lang}.jsonl"
        answers.write_text(
            "".join(
                json.dumps({"item_id": it.id, "condition": "C+Q", "response": _answer(it, bool(right))}) + "\n"
                for it, right in zip(usable, outcome)
            ),
            encoding="utf-8",
        )
        runs[lang] = tmp_path / lang
        medvqa.run(
            "igakuqa",
            f"replay:{answers}",
            data=str(data),
            language=lang,
            conditions="C+Q",
            select={"block": ["116A"], "number": [str(it.meta["number"]) for it in usable]},
            model_name="gpt-4-saved",
            run_dir=str(runs[lang]),
            progress=False,
        )
    assert medvqa.read_run(runs["ja"]).manifest["params"] != medvqa.read_run(runs["en"]).manifest["params"]
    row = medvqa.audit(runs["ja"], runs["en"])["paired_language"]["ja vs en"]["conditions"]["C+Q"]["overall"]
    assert row["counts"] == {"n11": N11, "n10": N10, "n01": N01, "n00": N00}
    assert row["delta_lang"] == pytest.approx((N10 - N01) / 60)
    [delta] = medvqa.compare([runs["ja"], runs["en"]], resamples=20).attrs["delta_lang"]
    assert (delta["model"], delta["languages"], delta["n"]) == ("gpt-4-saved", "ja vs en", 60)
    assert delta["delta_lang"] == pytest.approx(5 / 60)
