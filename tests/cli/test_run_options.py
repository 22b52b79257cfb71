"""`medvqa run --allow-invalid` and `--forced-guess`, through the CLI."""

import json
import shutil

from click.testing import CliRunner

from medvqa.cli.main import cli
from medvqa.core.run.store import read_records


def invoke(*args):
    return CliRunner().invoke(cli, [str(a) for a in args])


def test_run_refuses_data_with_validation_errors_unless_allowed(jmed_sample, tmp_path):
    cell = tmp_path / "JMed48k" / "Physician" / "Physician_2026"
    shutil.copytree(jmed_sample / "JMed48k" / "Physician" / "Physician_2026", cell)
    path = cell / "2026_CORRECTED.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    bad = next(q for q in data["questions"] if q["img"]["content_img"])
    bad["text_only"] = True  # contradicts its image reference: an error-level finding
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    args = ["run", "jmed48k", "--data", tmp_path, "--model", "random", "--conditions", "C+Q", "--json"]
    refused = invoke(*args, "--run-dir", tmp_path / "refused")
    assert refused.exit_code != 0
    assert "text-only-flag" in refused.output and f"{bad['section']}{bad['question_number']}" in refused.output
    assert "--allow-invalid" in refused.output
    assert not (tmp_path / "refused").exists()  # nothing written
    allowed = invoke(*args, "--run-dir", tmp_path / "allowed", "--allow-invalid")
    assert allowed.exit_code == 0, allowed.output
    assert json.loads(allowed.output)["n_records"] == 400


def test_forced_guess_reasks_refused_image_removed_items_once(jmed_sample, tmp_path):
    from medvqa import load

    items = [it for it in load("jmed48k", path=jmed_sample, years=[2025]) if it.image_available]
    refused = items[:4]
    lines = []
    for it in items:
        gold = list(it.gold.alternatives[0])
        lines.append({"item_id": it.id, "condition": "C+Q+I", "response": json.dumps({"answer": gold})})
        lines.append(
            {
                "item_id": it.id,
                "condition": "C+Q",
                "response": '{"answer": []}' if it in refused else json.dumps({"answer": gold}),
            }
        )
    # forced guesses: two right, one wrong, one naming a label outside the options (no prediction)
    for it, guess in zip(refused, ("right", "right", "wrong", "outside")):
        answer = (
            list(it.gold.alternatives[0])
            if guess == "right"
            else ["Z"]
            if guess == "outside"
            else [next(k for k in it.keys if k not in it.gold.keys)]
        )
        lines.append({"item_id": it.id, "condition": "C+Q/forced", "response": json.dumps({"answer": answer})})
    replay = tmp_path / "replay.jsonl"
    replay.write_text("".join(json.dumps(r) + "\n" for r in lines), encoding="utf-8")
    args = [
        "run",
        "jmed48k",
        "--data",
        jmed_sample,
        "--years",
        "2025",
        "--model",
        f"replay:{replay}",
        "--run-dir",
        tmp_path / "run",
        "--forced-guess",
        "--json",
    ]
    out = invoke(*args)
    assert out.exit_code == 0, out.output
    records = read_records(tmp_path / "run")
    forced = [r for r in records if r["condition"] == "C+Q/forced"]
    assert sorted(r["item_id"] for r in forced) == sorted(it.id for it in refused)
    assert sum(r["correct"] for r in forced) == 2
    assert json.loads(out.output)["accuracy"]["C+Q/forced"] == 2 / 4  # the run's summary: every record counts
    assert invoke(*args).exit_code == 0  # resuming asks nothing again
    assert len(read_records(tmp_path / "run")) == len(records)
    audit = invoke("audit", tmp_path / "run", "--refusals", "imputed", "--json")
    assert audit.exit_code == 0, audit.output
    doc = json.loads(audit.output)
    # ../shared/papers/jmed48k.txt Appendix H, Table 15: accuracy "on the items that received a
    # prediction after the forced-guess prompt": 2 right of the 3 that received one = 2/3 (not 2/4);
    # the guess outside the options is counted apart
    assert doc["refusals"]["forced_guess"] == {
        "n": 4,
        "n_predicted": 3,
        "n_no_prediction": 1,
        "correct": 2,
        "accuracy": 2 / 3,
    }
    n = len(items)
    # with the image every answer is right; without it, 4 refusals credited 2/3 each:
    # Δimg = (n − (n − 4 + 4·2/3)) / n = 4·(1 − 2/3) / n
    assert abs(doc["refusals"]["delta_img"]["imputed"]["delta_img"] - (4 * (1 - 2 / 3)) / n) < 1e-12


def test_select_chooses_items_by_any_stratum_and_plugin_shorthands_mean_the_same(jmed_sample, tmp_path):
    from medvqa import load

    both = load("jmed48k", path=jmed_sample, split="full")
    by_year = {y: sum(it.meta["year"] == y and not it.excluded for it in both) for y in (2025, 2026)}
    selected = invoke(
        "run",
        "jmed48k",
        "--data",
        jmed_sample,
        "--model",
        "constant:a",
        "--conditions",
        "C+Q",
        "--select",
        "year=2025",
        "--json",
        "--run-dir",
        tmp_path / "select",
    )
    shorthand = invoke(
        "run",
        "jmed48k",
        "--data",
        jmed_sample,
        "--model",
        "constant:a",
        "--conditions",
        "C+Q",
        "--years",
        "2025",
        "--json",
        "--run-dir",
        tmp_path / "years",
    )
    assert selected.exit_code == 0 and shorthand.exit_code == 0, selected.output + shorthand.output
    assert (
        json.loads(selected.output)["conditions"]["C+Q"]["n"]
        == by_year[2025]
        == json.loads(shorthand.output)["conditions"]["C+Q"]["n"]
    )
    manifest = json.loads((tmp_path / "select" / "manifest.json").read_text())
    assert manifest["load"]["select"] == {"year": ["2025"]}
    # a generic field: only image-as-options items of 2026
    io_items = [it for it in both if it.meta["year"] == 2026 and it.meta["image_as_options"] and not it.excluded]
    generic = invoke(
        "run",
        "jmed48k",
        "--data",
        jmed_sample,
        "--model",
        "constant:a",
        "--conditions",
        "C+Q",
        "--select",
        "year=2026",
        "--select",
        "image_as_options=true",
        "--json",
        "--run-dir",
        tmp_path / "io",
    )
    assert json.loads(generic.output)["n_items"] == len(io_items) > 0
    unknown = invoke(
        "run",
        "jmed48k",
        "--data",
        jmed_sample,
        "--model",
        "random",
        "--select",
        "colour=red",
        "--run-dir",
        tmp_path / "unknown",
    )
    assert unknown.exit_code == 2 and "no field 'colour'" in unknown.output and "profession" in unknown.output
    assert not (tmp_path / "unknown").exists()
    malformed = invoke("run", "jmed48k", "--data", jmed_sample, "--model", "random", "--select", "year")
    assert malformed.exit_code == 2 and "FIELD=VALUE" in malformed.output
