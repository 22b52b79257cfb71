"""The conformance kit (`medvqa.testing`): a benchmark that keeps every contract passes; a
broken fixture fails with one message per broken contract, each naming the item."""

import json
from pathlib import Path

import pytest

import medvqa
from medvqa.core import plugins
from medvqa.testing import ContractError, check_benchmark


class FolderExam(medvqa.Benchmark):
    """Items from `items.jsonl`; this loader sets image paths itself (no `resolve_image`), so
    the kit has to catch an image outside the data root."""

    name = "folder_exam"
    strata = ("subject",)

    def load(self, path=None, split=None, **options):
        root = Path(path)
        items = []
        for row in medvqa.read_jsonl(root / "items.jsonl"):
            images = tuple(
                medvqa.ImageRef(ref=ref, path=(root / ref).resolve() if (root / ref).exists() else None)
                for ref in row.get("images", [])
            )
            items.append(
                medvqa.Item(
                    id=row["id"],
                    benchmark=self.name,
                    question=row["question"],
                    images=images,
                    options=tuple(medvqa.Option(key=k, label=k, text=t) for k, t in row["options"].items()),
                    gold=medvqa.Gold.from_json(row["answer"]),
                    meta={"subject": row.get("subject")},
                )
            )
        return items


def png(path: Path) -> None:
    from PIL import Image

    path.parent.mkdir(parents=True, exist_ok=True)
    Image.new("RGB", (8, 8), "red").save(path)


def write(folder: Path, rows: list[dict]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "items.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return folder


GOOD = [
    {
        "id": "k1",
        "question": "Which organ secretes insulin?",
        "options": {"A": "Liver", "B": "Pancreas"},
        "answer": "B",
        "subject": "endocrine",
    },
    {
        "id": "k2",
        "question": "Which two vessels carry oxygenated blood?",
        "options": {"A": "Pulmonary vein", "B": "Pulmonary artery", "C": "Aorta"},
        "answer": ["A", "C"],
        "subject": "cardiac",
    },
    {
        "id": "k3",
        "question": "What shape is the cell in the image?",
        "options": {"A": "Round", "B": "Square"},
        "answer": "A",
        "images": ["images/k3.png"],
        "subject": "blood",
    },
]


def test_a_benchmark_that_keeps_every_contract_passes(tmp_path):
    data = write(tmp_path / "good", GOOD)
    png(data / "images" / "k3.png")
    report = check_benchmark(FolderExam(), data, work_dir=tmp_path / "kit")
    assert report.ok and report.n_items == 3
    assert report.checks == [
        "load",
        "ids",
        "gold",
        "images",
        "conditions",
        "prompts",
        "order",
        "validate",
        "runs",
        "audit",
        "hooks",
    ]
    # 3 items in C and C+Q, the image item also in C+I and C+Q+I
    assert report.n_records == {"random": 8, "gold": 8}
    gold = [json.loads(line) for line in (tmp_path / "kit" / "gold" / "records.jsonl").read_text().splitlines()]
    assert all(r["correct"] for r in gold) and {r["predicted"][0] for r in gold if r["item_id"] == "k2"} == {"A"}
    assert "folder_exam" not in plugins.benchmarks()  # the temporary registration is gone


def test_a_broken_fixture_fails_naming_each_item(tmp_path):
    outside = tmp_path / "outside.png"
    png(outside)
    rows = [
        GOOD[0],
        {**GOOD[0], "question": "Same id again: which organ filters blood?"},
        {**GOOD[1], "answer": ["A", "F"]},
        {**GOOD[2], "images": ["../outside.png"]},
        {**GOOD[2], "id": "k4", "images": ["images/broken.png"]},
    ]
    data = write(tmp_path / "broken", rows)
    (data / "images").mkdir()
    (data / "images" / "broken.png").write_bytes(b"\x89PNG\r\n\x1a\nnot really a png")
    with pytest.raises(ContractError) as caught:
        check_benchmark(FolderExam(), data, work_dir=tmp_path / "kit")
    message = str(caught.value)
    assert message.startswith("folder_exam: ") and "broken contract(s):" in message
    assert "[ids] item k1: the id is used by 2 items (ids must be unique)" in message
    assert "[gold] item k2: gold key 'F' is not among the options (A, B, C)" in message
    assert f"[images] item k3: image '../outside.png' resolves to {outside.resolve()}, outside the data root" in message
    assert "[images] item k4: image 'images/broken.png' does not decode" in message
    report = check_benchmark(FolderExam(), data, work_dir=tmp_path / "kit2", raise_on_problems=False)
    assert {(p.check, p.item) for p in report.problems} >= {
        ("ids", "k1"),
        ("gold", "k2"),
        ("images", "k3"),
        ("images", "k4"),
    }


def test_unstable_ids_a_misspelt_member_and_a_question_shown_without_q(tmp_path):
    data = write(tmp_path / "data", GOOD[:2])
    calls = []

    class Drifting(FolderExam):
        name = "drifting_exam"
        default_stata = ("subject",)  # misspelt default_strata

        def load(self, path=None, split=None, **options):
            items = super().load(path, split)
            calls.append(1)
            return items if len(calls) % 2 else items[::-1]

        def render(self, item, condition, *, suffix=None):
            messages = super().render(item, condition, suffix=suffix)
            return messages if condition.with_question else [{"role": "user", "content": item.question}]

    report = check_benchmark(Drifting(), data, work_dir=tmp_path / "kit", raise_on_problems=False)
    found = [str(p) for p in report.problems]
    assert "[ids] item k1: a second load gave other ids or another order (ids must be stable across loads)" in found
    assert (
        "[hooks] Drifting.default_stata is not part of the Benchmark surface; did you mean 'default_strata'?" in found
    )
    assert "[prompts] item k1: C shows the question, which only C+Q and C+Q+I may" in found


def test_the_kit_takes_a_registered_name_and_refuses_what_is_not_a_benchmark():
    report = check_benchmark("jmed48k", split="sample")
    assert report.ok and report.n_items == 18
    with pytest.raises(TypeError, match="expected a medvqa.Benchmark or a registered name"):
        check_benchmark(object())
    with pytest.raises(KeyError, match="unknown benchmark 'nosuch'"):
        check_benchmark("nosuch")


def test_the_fixture_runs_the_kit_in_tmp_path(medvqa_check, tmp_path):
    data = write(tmp_path / "data", GOOD[:1])
    report = medvqa_check(FolderExam(), data)
    assert report.work_dir == tmp_path / "medvqa-kit" and (tmp_path / "medvqa-kit" / "gold").is_dir()


def test_gold_boxes_are_replayed_in_the_answer_form_the_box_reader_reads():
    from medvqa.core.conformance.runs import gold_response

    def item(gold):
        return medvqa.Item(id="d1", benchmark="x", question="Where is the nodule?", gold=gold)

    one = gold_response(item(medvqa.Gold(boxes=((10, 10, 20, 20),))), "answer")
    several = gold_response(item(medvqa.Gold(boxes=((0, 0, 10, 10), (50, 50, 10, 10)))), "answer")
    legacy = gold_response(item(medvqa.Gold(box=(1, 2, 3, 4))), "box")
    assert json.loads(one) == {"answer": [10, 10, 20, 20]}
    assert json.loads(several) == {"answer": [[0, 0, 10, 10], [50, 50, 10, 10]]}
    assert json.loads(legacy) == {"box": [1, 2, 3, 4]}


def test_a_gold_answer_that_cannot_be_written_is_a_problem_naming_the_item(tmp_path, monkeypatch):
    from medvqa.core.conformance import runs

    real = runs.gold_response

    def failing(item, answer_key):
        if item.id == "k2":
            raise TypeError("cannot state this gold")
        return real(item, answer_key)

    monkeypatch.setattr(runs, "gold_response", failing)
    report = check_benchmark(
        FolderExam(), write(tmp_path / "data", GOOD[:2]), work_dir=tmp_path / "kit", raise_on_problems=False
    )
    found = [str(p) for p in report.problems]
    # reported once for the item (not once more per missing replay record), and the runs still ran
    assert found == ["[runs] item k2: the gold answer cannot be written as a reply (TypeError: cannot state this gold)"]
    assert report.n_records == {"random": 4, "gold": 4} and "audit" in report.checks


class TwoLanguageExam(FolderExam):
    """FolderExam with an English version in `items.en.jsonl`."""

    name = "two_language_exam"
    languages = ("pl", "en")

    def load(self, path=None, split=None, **options):
        root = Path(path)
        source = root / "items.en.jsonl" if self.active_language == "en" else root / "items.jsonl"
        rows = list(medvqa.read_jsonl(source))
        return [
            medvqa.Item(
                id=r["id"],
                benchmark=self.name,
                question=r["question"],
                language=self.active_language,
                options=tuple(medvqa.Option(key=k, label=k, text=t) for k, t in r["options"].items()),
                gold=medvqa.Gold.from_json(r["answer"]),
                meta={"subject": r.get("subject")},
            )
            for r in rows
        ]


def test_each_language_must_hold_the_same_items_with_the_same_gold(tmp_path):
    text = [r for r in GOOD if "images" not in r]
    data = write(tmp_path / "two", text)
    english = [dict(text[0], question="EN"), dict(text[1], answer=["A", "B"])]
    (data / "items.en.jsonl").write_text("".join(json.dumps(r) + "\n" for r in english), encoding="utf-8")
    report = check_benchmark(TwoLanguageExam(), data, work_dir=tmp_path / "kit", raise_on_problems=False)
    assert "languages" in report.checks
    assert [str(p) for p in report.problems if p.check == "languages"] == [
        "[languages] item k2: the gold answer differs in --language en"
    ]
    (data / "items.en.jsonl").write_text("".join(json.dumps(r) + "\n" for r in [english[0]]), encoding="utf-8")
    report = check_benchmark(TwoLanguageExam(), data, work_dir=tmp_path / "kit2", raise_on_problems=False)
    assert [str(p) for p in report.problems if p.check == "languages"] == [
        "[languages] item k2: --language en gives other item ids or another order than pl (runs in two languages "
        "pair by id)"
    ]


class SubjectsExam(FolderExam):
    """FolderExam with the shorthand `subjects=` for `select={"subject": [...]}`."""

    name = "subjects_exam"
    selection_keywords = {"subjects": "subject"}

    def load(self, path=None, split=None, *, select=None, **keywords):
        return self.select_items(super().load(path, split), self.keyword_selection(select, **keywords))


class IgnoringExam(SubjectsExam):
    """Declares `subjects` but its loader drops it: every item, whatever the keyword says."""

    name = "ignoring_exam"

    def load(self, path=None, split=None, *, select=None, **keywords):
        return self.select_items(FolderExam.load(self, path, split), select)


def test_a_selection_keyword_must_select_what_select_on_its_field_does(tmp_path):
    data = write(tmp_path / "text", [r for r in GOOD if "images" not in r])
    report = check_benchmark(SubjectsExam(), data, work_dir=tmp_path / "kit")
    assert report.ok and "selection" in report.checks
    assert [it.id for it in SubjectsExam().load(data, subjects="cardiac")] == ["k2"]
    report = check_benchmark(IgnoringExam(), data, work_dir=tmp_path / "kit2", raise_on_problems=False)
    assert [str(p) for p in report.problems] == [
        "[selection] item k2: load(subjects=['endocrine']) gives 2 items, select={'subject': ['endocrine']} on the "
        "loaded items 1"
    ]
    misnamed = type(
        "MisnamedExam", (SubjectsExam,), {"name": "misnamed_exam", "selection_keywords": {"topics": "topic"}}
    )
    report = check_benchmark(misnamed(), data, work_dir=tmp_path / "kit3", raise_on_problems=False)
    assert [str(p) for p in report.problems] == [
        "[selection] the selection keyword 'topics' selects on 'topic', a field no item has (fields: subject)"
    ]


def test_a_template_that_ignores_the_order_of_the_options_is_named_with_each_item(tmp_path):
    """A template that prints the options from where the loader first put them (here the item's
    meta) asks a rotated item the printed prompt again: `--variants order` would measure nothing.
    An item the benchmark keeps in its order, with a reason, is not checked."""

    class FixedTemplate(medvqa.Template):
        def render(self, item, condition, *, suffix=None):
            printed = tuple(medvqa.Option(key=k, label=k, text=t) for k, t in item.meta["printed"].items())
            return super().render(item.model_copy(update={"options": printed}), condition, suffix=suffix)

    class FixedOrder(FolderExam):
        name = "fixed_order"

        def load(self, path=None, split=None, **options):
            return [
                it.model_copy(update={"meta": {**it.meta, "printed": {o.key: o.text for o in it.options}}})
                for it in super().load(path, split, **options)
            ]

        def template(self, item):
            return FixedTemplate(name="fixed")

        def reorder_refusal(self, item):
            return "its options follow the body's order" if item.id == "k2" else None

    data = write(tmp_path / "fixed", GOOD)
    png(data / "images" / "k3.png")
    report = check_benchmark(FixedOrder(), data, work_dir=tmp_path / "kit", raise_on_problems=False)
    problems = [(p.check, p.item) for p in report.problems if p.check == "order"]
    assert problems == [("order", "k1"), ("order", "k3")]
    assert "renders the same prompt" in next(p.message for p in report.problems if p.check == "order")
