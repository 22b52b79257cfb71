"""`medvqa new-adapter NAME`: a new, installable adapter package that passes its own tests and
the conformance kit as written — a loader for a JSON Lines release, prompts and answer phrases
in the exam's language, a validator, a three-item fixture with one image whose options carry
the exam's labels (`--labels`), tests that use the kit and take their ids and answers from the
fixture, and a README. docs/adding-an-exam.md walks through what to change next.
"""

from __future__ import annotations

import io
import json
import keyword
import pprint
import re
from dataclasses import dataclass
from pathlib import Path

NAME = re.compile(r"^[a-z][a-z0-9_]{1,39}$")
LANGUAGE = re.compile(r"^[a-z]{2,3}$")

# The label ranges `--labels` accepts: from the first label of a form to the last, 3 options at
# least (the fixture's two-answer item needs a third, wrong one) and as many as the fixture has.
LABEL_RANGE = re.compile(r"^(?:A-[C-J]|a-[c-j]|1-(?:[3-9]|10))$")
LABEL_FORMS = "A-E (capital letters, A-C to A-J), a-e (small letters, a-c to a-j) or 1-5 (numbers, 1-3 to 1-10)"
# The labels an exam in a language most often prints when `--labels` is not given: most Japanese
# licensing exams number their options 1-5 (the physician's and the dentist's letter them a-e,
# JMed48k and IgakuQA), Spain's MIR numbers its four 1-4; the others letter them A-E.
DEFAULT_LABELS = {"ja": "1-5", "es": "1-4"}


@dataclass(frozen=True)
class Scaffold:
    root: Path  # the package folder written
    name: str
    module: str
    language: str
    phrasebook: bool  # False: the language has no phrasebook entry, prompts are in English
    files: tuple[Path, ...]
    labels: tuple[str, ...] = ("A", "B", "C", "D", "E")  # the options' labels, as the exam prints them


def option_labels(spec: str | None, language: str = "en") -> tuple[str, ...]:
    """The labels `--labels SPEC` names ("1-5" → 1, 2, 3, 4, 5); None: the language's default."""
    spec = DEFAULT_LABELS.get(language, "A-E") if spec is None else spec.strip()
    if not LABEL_RANGE.match(spec):
        from .errors import UsageError

        raise UsageError(f"--labels {spec!r}: give a range of option labels from the first one: {LABEL_FORMS}")
    first, last = spec.split("-")
    if first.isdigit():
        return tuple(str(n) for n in range(int(first), int(last) + 1))
    return tuple(chr(c) for c in range(ord(first), ord(last) + 1))


def _phrases(language: str) -> tuple[dict, bool]:
    from medvqa._phrasebook import PHRASES

    if language in PHRASES:
        return PHRASES[language], True
    return PHRASES["en"], False  # the default language of a Benchmark


# The fixture's items: as many options as the exam has labels (the first ones of each list), the
# answers given by position (the second option; the first and third; the third).
FIXTURE_ITEMS = [
    {
        "id": "q1",
        "question": "Which organ secretes insulin?",
        "options": [
            "Liver",
            "Pancreas",
            "Kidney",
            "Spleen",
            "Gallbladder",
            "Stomach",
            "Thyroid gland",
            "Adrenal gland",
            "Lung",
            "Heart",
        ],
        "answer": 1,
        "subject": "endocrinology",
    },
    {
        "id": "q2",
        "question": "Which two vessels carry oxygenated blood in an adult?",
        "options": [
            "Pulmonary vein",
            "Pulmonary artery",
            "Aorta",
            "Superior vena cava",
            "Inferior vena cava",
            "Portal vein",
            "Internal jugular vein",
            "Femoral vein",
            "Coronary sinus",
            "Great saphenous vein",
        ],
        "answer": [0, 2],
        "subject": "cardiology",
    },
    {
        "id": "q3",
        "question": "The image shows one round cell on a plain background. What shape is the cell?",
        "options": [
            "Square",
            "Triangle",
            "Round",
            "Star-shaped",
            "Hexagonal",
            "Crescent-shaped",
            "Rectangular",
            "Diamond-shaped",
            "Spindle-shaped",
            "Heart-shaped",
        ],
        "answer": 2,
        "subject": "haematology",
        "images": ["images/q3.png"],
    },
]


def fixture_rows(labels: tuple[str, ...]) -> list[dict]:
    """The fixture's lines of `items.jsonl`, their options and answers under `labels`."""
    rows = []
    for item in FIXTURE_ITEMS:
        answer = item["answer"]
        rows.append(
            {
                **item,
                "options": dict(zip(labels, item["options"])),
                "answer": [labels[i] for i in answer] if isinstance(answer, list) else labels[answer],
            }
        )
    return rows


def _png() -> bytes:
    from PIL import Image, ImageDraw

    image = Image.new("RGB", (96, 96), "white")
    ImageDraw.Draw(image).ellipse((24, 24, 72, 72), fill=(200, 40, 60), outline="black")
    out = io.BytesIO()
    image.save(out, format="PNG")
    return out.getvalue()


PYPROJECT = """[build-system]
requires = ["setuptools>=69"]
build-backend = "setuptools.build_meta"

[project]
name = "medvqa-__DIST__"
version = "0.1.0"
description = "medvqa adapter for __TITLE__"
requires-python = ">=3.11"
dependencies = ["medvqa"]

[project.optional-dependencies]
# `pip install -e '.[test]'`: pytest, which runs the tests and the conformance kit's
# `medvqa_check` fixture (a pytest plugin medvqa installs)
test = ["pytest>=8"]

[project.entry-points.medvqa]
__NAME__ = "__MODULE__.plugin"

[tool.setuptools]
packages = ["__MODULE__"]

[tool.setuptools.package-data]
__MODULE__ = ["fixture/*.jsonl", "fixture/images/*.png"]
"""

INIT = '''"""medvqa adapter for __TITLE__ (written by `medvqa new-adapter`)."""
'''

PLUGIN = '''"""Registers the benchmark and its language's answer phrases with medvqa (the `medvqa` entry
point in pyproject.toml names this module)."""

import medvqa


@medvqa.hookimpl
def register_benchmarks(register):
    from .benchmark import __CLASS__

    register(__CLASS__())
__PATTERNS_HOOK__'''

PATTERNS_HOOK = """

@medvqa.hookimpl
def register_answer_patterns(register):
    from .prompts import PATTERNS

    register(PATTERNS)
"""

PROMPTS = '''"""The words around an item, and how answers are phrased, in __LANGNAME__.
Adjust them to the exam's own wording; the template's hash lands in every run manifest."""

import medvqa
__PATTERN_IMPORT__
TEMPLATE = medvqa.Template(
    name="__NAME__-__LANG__",
    question_header=__QUESTION_HEADER__,
    options_header=__OPTIONS_HEADER__,
    instruction=__INSTRUCTION__,
    image_instruction=__IMAGE_INSTRUCTION__,
)

FORCED_GUESS = __FORCED_GUESS__
__PATTERNS__'''

BENCHMARK = '''"""__TITLE__: the loader, its strata and its validator.

The release is a folder holding `items.jsonl`, one JSON object a line:
    {"id": "q1", "question": "...", "options": {"__L0__": "...", "__L1__": "..."}, "answer": "__L1__",
     "subject": "...", "images": ["images/q1.png"]}
The option keys are the labels the exam prints (`LABELS`); `answer` is a key, a list of keys
(all of them required) or a list of lists (accepted alternatives); `images` are paths inside
the folder. The bundled fixture (`fixture/`) is the default source until you point `load` at
the real release (a download, see docs/adding-an-exam.md).
"""

from __future__ import annotations

from pathlib import Path

import medvqa

from . import prompts

FIXTURE = Path(__file__).parent / "fixture"
ITEMS = "items.jsonl"
# The option labels the exam prints (`medvqa new-adapter --labels __LABELSPEC__`): the prompt asks for
# them as __LABELWORD__, and `validate` flags an option labelled otherwise (a release read with
# other labels than the exam's).
LABELS = __LABELS__


class __CLASS__(medvqa.Benchmark):
    name = "__NAME__"
    title = "__TITLE__"
    language = "__LANG__"
    # The languages the items exist in, the exam's own first (`medvqa run --language CODE`). To
    # offer a translation, ship `items.<code>.jsonl` beside `items.jsonl` (the same ids, gold and
    # strata; the question and options translated) and add its code here: runs in the two
    # languages then pair item by item (`medvqa audit RUN_A RUN_B` reports Δlang).
    languages = ("__LANG__",)
    splits = ("full", "sample")
    default_split = "full"
    strata = ("subject", "has_image")
    default_strata = ("subject",)
    # Shorthands for `select`: `load(subjects=[...])` and `medvqa run --subjects ...`.
    selection_keywords = {"subjects": "subject"}
    forced_guess_instruction = prompts.FORCED_GUESS
    # What `validate` checks, rule → what a finding under it is: `medvqa validate` prints one line
    # per rule with its count, 0 included. Add a line here for each rule you add to `validate`.
    validation_rules = {
        "readable": "items.jsonl is missing, not UTF-8 or not one JSON object a line",
        "unique-id": "an id used by an earlier item",
        "item": "a line the loader refuses: its id, question, options, answer or an image path "
                "(empty, absolute or leaving the release folder)",
        "answer": "no answer: the item is excluded (a warning)",
        "gold-in-options": "an answer key that is not an option",
        "option-labels": "an option labelled otherwise than the exam (LABELS)",
        "image-present": "an image file that is not there (a warning)",
    }

    def load(self, path=None, split=None, *, select=None, **keywords):
        """Items of `split` from the release folder `path` (the bundled fixture when None).
        `select` keeps the items whose strata hold one of the accepted values
        ({"subject": ["cardiology"]}: `medvqa run --select subject=cardiology`); the
        `selection_keywords` add to it (`subjects=["cardiology"]`: `--subjects cardiology`)."""
        split = self.checked_split(split)
        wanted = self.keyword_selection(select, **keywords)  # a keyword not declared: an error naming those that are
        root = Path(path) if path is not None and split != "sample" else FIXTURE
        first = self.active_language == self.offered_languages[0]
        file = root / (ITEMS if first else f"items.{self.active_language}.jsonl")
        items = [self._item(root, file, row, line) for line, row in enumerate(medvqa.read_jsonl(file), 1)]
        return self.select_items(items, wanted)

    def _item(self, root: Path, file: Path, row: dict, line: int) -> medvqa.Item:
        record = str(row.get("id") or f"line {line}")
        if not isinstance(row.get("id"), str) or not row["id"].strip():
            raise medvqa.DataError("every item needs a non-empty string id", file=file, record=record)
        options = row.get("options")
        if not isinstance(options, dict) or not options:
            raise medvqa.DataError("options must be a non-empty object {key: text}", file=file, record=record)
        if not isinstance(row.get("question"), str):
            raise medvqa.DataError("question must be a string", file=file, record=record)
        images = tuple(
            medvqa.ImageRef(ref=ref, path=medvqa.resolve_image(root, ref, file=file, record=record))
            for ref in row.get("images") or [])
        gold = medvqa.Gold.from_json(row.get("answer"), file=file, record=record)
        n_select = len(gold.alternatives[0]) if gold is not None and gold.alternatives else 1
        return medvqa.Item(
            id=row["id"], benchmark=self.name, question=row["question"], language=self.active_language,
            options=tuple(medvqa.Option(key=str(k), label=str(k), text=str(t)) for k, t in options.items()),
            gold=gold, n_select=n_select, images=images,
            meta={"subject": row.get("subject"), "has_image": bool(images)},
        )

    def template(self, item):
        return prompts.TEMPLATE

    def sample_path(self):
        return FIXTURE

    def validate(self, path):
        """Every problem in the release at `path`, each naming the file and the record. Each line
        is read by the loader's own `_item`, so what `load` refuses is what this reports."""
        root = Path(path)
        file = root / ITEMS
        findings, seen = [], set()

        def finding(record, rule, message, level="error"):
            findings.append(medvqa.Finding(file=str(file), section=None, number=record, rule=rule,
                                           level=level, message=message))

        try:
            rows = medvqa.read_jsonl(file)
        except medvqa.DataError as exc:
            finding(None, "readable", str(exc))
            return findings
        for line, row in enumerate(rows, 1):
            record = str(row.get("id") or f"line {line}")
            if record in seen:
                finding(record, "unique-id", "the id is used by an earlier item")
            seen.add(record)
            try:
                item = self._item(root, file, row, line)
            except medvqa.DataError as exc:
                finding(record, "item", exc.reason)
                continue
            keys = [o.key for o in item.options]
            if item.gold is None:
                finding(record, "answer", "no answer: the item is excluded", level="warning")
            else:
                for key in sorted(item.gold.keys - set(keys)):
                    finding(record, "gold-in-options", f"answer {key!r} is not an option")
            if others := [key for key in keys if key not in LABELS]:
                finding(record, "option-labels",
                        f"option(s) {', '.join(others)} not among the exam's labels ({', '.join(LABELS)})")
            for image in item.images:
                if image.path is None:
                    finding(record, "image-present", f"image {image.ref!r} is missing", level="warning")
        return findings
'''

TESTS = '''"""The adapter keeps every medvqa contract (the conformance kit) and reads its fixture and
its language's answers as it should. The tests take their ids, options and answers from the
fixture, so they hold when its items are replaced by real ones."""

import json
from pathlib import Path

import medvqa
from __MODULE__.benchmark import LABELS

FIXTURE = Path(__file__).resolve().parents[1] / "__MODULE__" / "fixture"
REPLY = __SAMPLE_REPLY__  # a reply in __LANGNAME__ naming the option {label}


def fixture_rows():
    """The fixture's lines as written, read beside the loader."""
    lines = (FIXTURE / "items.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def accepted(answer):
    """An answer as written ("B", ["A", "C"], [["A"], ["C"]], null) as its sets of keys, one per
    accepted alternative."""
    if answer in (None, "", []):
        return []
    if not isinstance(answer, list):
        return [{str(answer)}]
    if all(isinstance(alt, list) for alt in answer):
        return [set(map(str, alt)) for alt in answer]
    return [set(map(str, answer))]


def test_the_benchmark_keeps_every_contract(medvqa_check):
    items = medvqa.load("__NAME__", FIXTURE)
    report = medvqa_check("__NAME__", FIXTURE)
    # C and C+Q for every item with an answer; C+I and C+Q+I too for one whose images are present
    expected = sum(4 if it.image_available else 2 for it in items if not it.excluded)
    assert report.ok and report.n_items == len(items)
    assert report.n_records == {"random": expected, "gold": expected}


def test_the_loader_reads_the_fixture():
    rows, items = fixture_rows(), medvqa.load("__NAME__", FIXTURE)
    assert [it.id for it in items] == [row["id"] for row in rows]
    for it, row in zip(items, rows):
        assert [o.key for o in it.options] == list(row["options"]), it.id
        assert set(row["options"]) <= set(LABELS), it.id
        gold = [set(alt) for alt in it.gold.alternatives] if it.gold else []
        assert gold == accepted(row.get("answer")), it.id
        assert it.n_select == (len(gold[0]) if gold else 1), it.id
        assert it.has_images == bool(row.get("images")), it.id
    for subject in {row.get("subject") for row in rows if row.get("subject")}:
        chosen = medvqa.load("__NAME__", FIXTURE, select={"subject": [subject]})
        assert [it.id for it in chosen] == [row["id"] for row in rows if row.get("subject") == subject]


def test_answers_in_the_exam_language_are_read():
    items = [it for it in medvqa.load("__NAME__", FIXTURE) if it.gold is not None]
    single = [it for it in items if len(it.gold.alternatives[0]) == 1]
    assert single, "the fixture needs an item with one answer to read the language's answer phrase"
    for it in items:
        keys = sorted(it.gold.alternatives[0])
        assert medvqa.score(it, json.dumps({"answer": keys})).correct, it.id
        wrong = [o.key for o in it.options if o.key not in it.gold.keys]
        if wrong:
            assert not medvqa.score(it, json.dumps({"answer": wrong[:1]})).correct, it.id
    for it in single:
        (key,) = it.gold.alternatives[0]
        label = next(o.label for o in it.options if o.key == key)
        read = medvqa.score(it, REPLY.format(label=label))
        assert (read.predicted, read.correct) == ((key,), True), it.id
'''

README = """# medvqa-__DIST__

A [medvqa](https://pypi.org/project/medvqa/) adapter for __TITLE__, written by
`medvqa new-adapter __NAME____LANGOPT__ --labels __LABELSPEC__`.

```bash
pip install -e '.[test]'
medvqa list                              # __NAME__ is listed, with its plugin
medvqa run __NAME__ --model random       # on the bundled three-item fixture
medvqa run __NAME__ --data RELEASE/ --model openai/gpt-5
medvqa validate __NAME__ --data RELEASE/
python -m pytest -q                      # its own tests and the conformance kit
```

- `__MODULE__/benchmark.py`: the loader (`items.jsonl` in a release folder), strata, validator.
- `__MODULE__/prompts.py`: the template and answer phrases in __LANGNAME__.
- `__MODULE__/fixture/`: three items labelled __LABELSPEC__, one with an image; the tests and the kit
  run on it.
- `tests/test___NAME__.py`: `medvqa_check` (the conformance kit) and loader and answer tests that
  take their ids and answers from the fixture: replace its items with real ones and they still apply.

Next steps are in medvqa's docs/adding-an-exam.md: the real release's layout, its answer
conventions, its pass lines and its download.
"""


def _py(value) -> str:
    return pprint.pformat(value, width=100)


def write_adapter(
    name: str, out_dir: str | Path = ".", *, language: str = "en", title: str | None = None, labels: str | None = None
) -> Scaffold:
    """Write the adapter package `name` into `out_dir/name` (which must not exist or be empty),
    its options labelled `labels` ("A-E", "a-e", "1-5"; None: the language's default)."""
    if not NAME.match(name) or keyword.iskeyword(name):
        raise ValueError(
            f"adapter name {name!r}: use 2-40 lower-case letters, digits and underscores, "
            "starting with a letter (it is the benchmark's name in `medvqa run NAME`)"
        )
    if not LANGUAGE.match(language):
        raise ValueError(f"--language {language!r}: give an ISO 639 code such as en, ko, pl")
    keys = option_labels(labels, language)
    from . import plugins

    if name in plugins.benchmarks():
        raise ValueError(
            f"a benchmark named {name!r} is already installed ({plugins.benchmarks()[name].plugin}); "
            "choose another name"
        )
    root = Path(out_dir) / name
    if root.exists() and any(root.iterdir()):
        raise ValueError(f"{root} exists and is not empty: choose another --out or name")
    words, known = _phrases(language)
    numbered = keys[0].isdigit()
    module = f"medvqa_{name}"
    title = title or f"the {name} exam"
    cls = "".join(part.capitalize() for part in name.split("_")) or "Exam"
    if words.get("patterns_import"):
        pattern_import, patterns = words["patterns_import"] + "\n", ""
    elif not words["answer_prefixes"]:
        pattern_import, patterns = "", ""
    else:
        answer = "".join(f'rf"{p}{{medvqa.ANSWER_TOKEN}}", ' for p in words["answer_prefixes"]).rstrip()
        pattern_import = ""
        patterns = (
            f"\n# answer phrases (Rule 6 of the answer reader); English always applies, and so do the\n"
            f"# refusal sentences of every language medvqa ships (add the exam's own as refusal=(...))\n"
            f'PATTERNS = medvqa.LanguagePatterns(language="{language}", answer=({answer}))\n'
        )
    has_patterns = bool(pattern_import or patterns)
    langname = words["name"] if known else f"English (no phrasebook for {language!r} yet: translate them)"
    subst = {
        "__DIST__": name.replace("_", "-"),
        "__NAME__": name,
        "__MODULE__": module,
        "__CLASS__": cls,
        "__TITLE__": title,
        "__LANG__": language,
        "__LANGNAME__": langname,
        "__LANGOPT__": f" --language {language}" if language != "en" else "",
        "__QUESTION_HEADER__": _py(words["question_header"]),
        "__OPTIONS_HEADER__": _py(words["options_header"]),
        "__INSTRUCTION__": _py(words["numbered_instruction" if numbered else "instruction"]),
        "__IMAGE_INSTRUCTION__": _py(words["image_instruction"]),
        "__FORCED_GUESS__": _py(words["forced_guess"]),
        "__PATTERN_IMPORT__": pattern_import,
        "__PATTERNS__": patterns,
        "__PATTERNS_HOOK__": PATTERNS_HOOK if has_patterns else "",
        "__SAMPLE_REPLY__": _py(words["sample_reply"]),
        "__LABELS__": repr(keys),
        "__LABELSPEC__": f"{keys[0]}-{keys[-1]}",
        "__L0__": keys[0],
        "__L1__": keys[1],
        "__LABELWORD__": "numbers" if numbered else "letters",
    }

    def fill(text: str) -> str:
        for key in sorted(subst, key=len, reverse=True):
            text = text.replace(key, subst[key])
        return text

    files = {
        "pyproject.toml": fill(PYPROJECT),
        "README.md": fill(README),
        f"{module}/__init__.py": fill(INIT),
        f"{module}/plugin.py": fill(PLUGIN),
        f"{module}/prompts.py": fill(PROMPTS),
        f"{module}/benchmark.py": fill(BENCHMARK),
        f"{module}/fixture/items.jsonl": "".join(
            json.dumps(row, ensure_ascii=False) + "\n" for row in fixture_rows(keys)
        ),
        f"tests/test_{name}.py": fill(TESTS),
    }
    from .files import write_atomic

    written = [write_atomic(root / rel, text) for rel, text in files.items()]
    written.append(write_atomic(root / module / "fixture" / "images" / "q3.png", _png()))
    return Scaffold(root, name, module, language, known, tuple(written), keys)
