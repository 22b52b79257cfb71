"""KokushiMD-10 on a release-layout folder written here: field forms, images (paired audit),
imported *_pred.json scored as calculate_scores.py scores them, and the Hub's offline message."""

import json
import re

import pytest
from click.testing import CliRunner

import medvqa
from medvqa import DataError
from medvqa.cli.main import cli
from tests.adapters.kokushimd10.fixtures import kokushi_release


def invoke(*args, code=0):
    result = CliRunner().invoke(cli, [str(a) for a in args])
    assert result.exit_code == code, result.output
    return result.output


@pytest.fixture
def release(tmp_path):
    return kokushi_release(tmp_path / "exams" / "JA")


def test_the_release_layout_loads_under_every_field_form(release):
    items = {it.id: it for it in medvqa.load("kokushimd10", release)}
    assert sorted(items) == [
        "Physician-2020-A1",
        "Physician-2020-A2",
        "Physician-2020-A3-1",
        "Physician-2020-B1",
        "Physician-2020-B26",
    ]
    assert items["Physician-2020-A2"].gold.alternatives == (("A", "C"),)  # "A,C"
    assert items["Physician-2020-B1"].gold.alternatives == (("A", "C"),)  # "AC"
    assert items["Physician-2020-A3-1"].gold.alternatives == (("B",),)  # ["B"]
    assert [o.text for o in items["Physician-2020-A2"].options] == ["甲", "乙", "丙", "丁", "戊"]  # top-level a-e
    assert items["Physician-2020-A3-1"].meta["kinki"] == ["D"] and items["Physician-2020-A2"].meta["kinki"] == ["E"]
    assert items["Physician-2020-A2"].image_available
    assert items["Physician-2020-A3-1"].meta["without_image"]  # text_only false, no image
    assert items["Physician-2020-B26"].meta["hisshu"] and items["Physician-2020-B26"].meta["points"] == 3
    assert len(medvqa.load("kokushimd10", release, professions=["医師"])) == 5
    assert medvqa.load("kokushimd10", release, professions=["Nurse"]) == []
    assert len(medvqa.load("kokushimd10", release, select={"block": ["Physician-2020-B"]})) == 2


def test_images_give_paired_records_and_missing_ones_are_counted(tmp_path, release):
    out = json.loads(
        invoke(
            "run",
            "kokushimd10",
            "--data",
            release,
            "--model",
            "constant:A",
            "--no-cache",
            "--run-dir",
            tmp_path / "run",
            "--json",
        )
    )
    assert out["n_image_fallback"] == 1  # A3-1 needs an image the data lacks: C+Q only
    assert out["conditions"]["C+Q+I"]["n"] == 1 and out["conditions"]["C+Q"]["n"] == 5
    audit = json.loads(invoke("audit", tmp_path / "run", "--json"))
    assert audit["paired"]["overall"]["n"] == 1  # A2 with and without its image: McNemar's table applies


def write_preds(root, block, preds):
    folder = root / "results" / "acme" / "model-x" / "text" / "医師"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"医師_2020_{block}_pred.json"
    path.write_text(json.dumps([{"pred": p} for p in preds], ensure_ascii=False), encoding="utf-8")
    return path


def test_imported_predictions_score_as_calculate_scores(tmp_path, release):
    a = write_preds(tmp_path, "a", ["c", "a, c", "D"])  # A3-1: D is its 禁忌肢
    b = write_preds(tmp_path, "b", ["CA", "B"])  # B1: "CA" normalises to "AC"; its 禁忌肢 is B
    out = json.loads(
        invoke(
            "import",
            "kokushimd10",
            a,
            b,
            "--data",
            release,
            "--run-dir",
            tmp_path / "run",
            "--convention",
            "kokushimd10",
            "--json",
        )
    )
    assert out["model"] == "acme/model-x" and out["n_records"] == 5
    # by hand: A1 "C"=="C" ✓, A2 "AC"=="AC" ✓, A3-1 "D"!="B", B1 "AC"=="AC" ✓, B26 "B"!="D"
    assert out["accuracy"]["C+Q"] == 3 / 5
    doc = json.loads(invoke("report", tmp_path / "run", "--pass", "--json"))
    rows = {r["criterion"]: r for r in doc["rows"] if r["exam"] == "Physician 2020"}
    # 必修 (B, E): B1 1 point; 一般: A1 + A2 = 2 points; 禁忌肢: A3-1 answered D (kinki "D"): 1; the
    # script's parts under the names every convention gives them
    assert list(rows) == ["overall", "hisshu", "general", "kinki"]
    assert [(rows[p]["points"], rows[p]["required"]) for p in ("hisshu", "general")] == [(1, 158), (2, 217)]
    assert (rows["kinki"]["points"], rows["kinki"]["status"]) == (1, "pass")
    assert rows["overall"]["status"] == "fail" and rows["overall"]["margin"] == min(1 - 158, 2 - 217)
    assert doc["convention"] == "kokushimd10" and doc["notes"][0].startswith("convention kokushimd10 departs from MHLW")
    text = invoke("report", tmp_path / "run", "--pass")
    assert "convention kokushimd10 departs from MHLW" in text and "| Physician 2020 | hisshu | fail | 1 | 158 |" in text


def test_a_prediction_file_that_does_not_fit_is_named(tmp_path, release):
    bad = write_preds(tmp_path, "a", ["c"])
    out = invoke("import", "kokushimd10", bad, "--data", release, "--run-dir", tmp_path / "run", code=1)
    assert "医師_2020_a_pred.json: 1 predictions for 3 questions" in out


def test_offline_hub_names_both_ways_to_get_the_data(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(DataError) as err:
        medvqa.load("kokushimd10")
    message = str(err.value)
    assert "humanalysis-square/KokushiMD-10" in message and "--data PATH" in message and "hf download" in message


@pytest.mark.parametrize("bench", ["igakuqa", "yakugakuqa", "kokushimd10"])
def test_validate_names_the_file_of_unreadable_data(tmp_path, bench):
    (tmp_path / "data" / "2022").mkdir(parents=True)
    (tmp_path / "医師").mkdir()
    (tmp_path / "data" / "2022" / "116-A.jsonl").write_text('{"problem_id": "116A1"}\n', encoding="utf-8")
    (tmp_path / "data" / "2022" / "107-A.jsonl").write_text('{"problem_id": "107A001"}\n', encoding="utf-8")
    (tmp_path / "医師" / "医師_2020_a.json").write_text('[{"index": "1"}]', encoding="utf-8")
    doc = json.loads(invoke("validate", bench, "--data", tmp_path, "--json", code=1))
    assert doc["errors"] == 1 and doc["findings"][0]["rule"] == "readable"
    assert doc["findings"][0]["file"].endswith((".jsonl", ".json"))


def test_each_convention_has_its_own_default_run_directory_and_a_rescored_run_resumes(release, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    base = ["run", "kokushimd10", "--data", release, "--model", "random", "--conditions", "C+Q", "--json"]
    first = json.loads(invoke(*base))
    other = json.loads(invoke(*base, "--convention", "kokushimd10"))
    assert first["run_dir"] != other["run_dir"]  # not "holds a different run"

    def manifest(d):
        return json.loads((tmp_path / d / "manifest.json").read_text(encoding="utf-8"))

    assert (manifest(first["run_dir"])["convention"], manifest(other["run_dir"])["convention"]) == (
        "mhlw",
        "kokushimd10",
    )
    invoke("score", first["run_dir"], "--convention", "kokushimd10")
    again = json.loads(invoke(*base))  # the original command resumes the re-scored run, under its convention
    assert again["run_dir"] == first["run_dir"] and again["n_records"] == first["n_records"]
    assert manifest(first["run_dir"])["convention"] == "kokushimd10"


def _igakuqa_with_a_lone_surrogate(root):
    (root / "data" / "2022").mkdir(parents=True)
    rows = [
        {
            "problem_id": "116A1",
            "problem_text": "正しいのはどれか。",
            "choices": ["甲", "乙", "丙", "丁", "戊"],
            "answer": ["c"],
            "text_only": True,
            "points": "1",
        },
        {
            "problem_id": "116A2",
            "problem_text": "臓器\ud800はどれか。",
            "choices": ["甲", "乙", "丙", "丁", "戊"],
            "answer": ["a"],
            "text_only": True,
            "points": "1",
        },
    ]
    path = root / "data" / "2022" / "116-A.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")  # "\ud800" as JSON escapes it
    return path, "116A2", "problem_text"


def _yakugakuqa_with_a_lone_surrogate(root):
    (root / "data" / "2024").mkdir(parents=True)
    rows = [
        {
            "problem_id": "109A001",
            "problem_text": "正しいのはどれか。1つ選べ。",
            "choices": ["甲", "乙\udfff"],
            "text_only": True,
            "answer": ["1"],
            "comment": "",
            "points": "1",
        }
    ]
    path = root / "data" / "2024" / "109-A.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path, "109A001", r"choices\[1\]"


def _kokushimd10_with_a_lone_surrogate(root):
    kokushi_release(root)
    path = root / "医師" / "医師_2020_b.json"
    rows = json.loads(path.read_text(encoding="utf-8"))
    rows[1]["question"] = "必修の\udc80臨床問題。"
    path.write_text(json.dumps(rows), encoding="utf-8")
    return path, "Physician-2020-B26", "question"


@pytest.mark.parametrize(
    "bench,write",
    [
        ("igakuqa", _igakuqa_with_a_lone_surrogate),
        ("yakugakuqa", _yakugakuqa_with_a_lone_surrogate),
        ("kokushimd10", _kokushimd10_with_a_lone_surrogate),
    ],
)
def test_a_lone_surrogate_is_a_finding_naming_file_and_record_and_no_run_starts(tmp_path, bench, write):
    """A text UTF-8 cannot encode could reach no request, record or file: `validate` reports it
    (file, record, field) and `run` refuses the data with one line, with or without
    --allow-invalid, instead of failing later on a codec error that names neither."""
    path, record, field = write(tmp_path / "data")
    doc = json.loads(invoke("validate", bench, "--data", tmp_path / "data", "--json", code=1))
    [finding] = [f for f in doc["findings"] if f["level"] == "error"]
    assert finding["file"] == str(path) and finding["number"] == record
    assert re.fullmatch(rf"{field} holds a lone surrogate, which UTF-8 cannot encode", finding["message"])
    for extra in ([], ["--allow-invalid"]):
        result = CliRunner().invoke(
            cli,
            [
                "run",
                bench,
                "--data",
                str(tmp_path / "data"),
                "--model",
                "random",
                "--run-dir",
                str(tmp_path / "run"),
                *extra,
            ],
        )
        assert result.exit_code == 1 and result.output.startswith("Error: "), result.output
        assert str(path) in result.output and f"record {record}" in result.output and "Traceback" not in result.output
        assert not (tmp_path / "run").exists()


def test_two_predictions_for_one_item_name_both_places_and_write_nothing(tmp_path, release):
    """A second file for the same block (another model's folder) would have replaced the first's
    predictions silently: it is refused naming both places; a file given twice is refused too."""
    a = write_preds(tmp_path, "a", ["c", "a, c", "D"])
    again = tmp_path / "again" / a.name
    again.parent.mkdir()
    again.write_bytes(a.read_bytes())
    out = invoke(
        "import", "kokushimd10", a, again, "--data", release, "--model", "m", "--run-dir", tmp_path / "run", code=1
    )
    assert out.count("\n") == 1
    assert f"{again}: record position 1 of {a} and position 1: two predictions for Physician-2020-A1" in out
    out = invoke("import", "kokushimd10", a, a, "--data", release, "--run-dir", tmp_path / "run", code=1)
    assert f"{a}: the file is given twice" in out
    assert not (tmp_path / "run").exists()
