"""`medvqa new-adapter NAME`: a new, installable adapter package that passes its own tests and
the conformance kit as written — a loader for a JSON Lines release, prompts and answer phrases
in the exam's language, a validator, a three-item fixture with one image whose options carry
the exam's labels (`--labels`), tests that use the kit and take their ids and answers from the
fixture, and a README. docs/adding-an-exam.md walks through what to change next.

The files' text is in `templates/` (one `.tmpl` file each, shipped as package data), their
placeholders (`__NAME__`, `__TITLE__`, ...) filled here; the words in the exam's language come
from `phrasebook`, the fixture's items from `fixture`.
"""

from __future__ import annotations

import json
import keyword
import pprint
import re
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from .fixture import fixture_rows, image_png
from .phrasebook import PHRASES

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
        from ..errors import UsageError

        raise UsageError(f"--labels {spec!r}: give a range of option labels from the first one: {LABEL_FORMS}")
    first, last = spec.split("-")
    if first.isdigit():
        return tuple(str(n) for n in range(int(first), int(last) + 1))
    return tuple(chr(c) for c in range(ord(first), ord(last) + 1))


def _phrases(language: str) -> tuple[dict, bool]:
    if language in PHRASES:
        return PHRASES[language], True
    return PHRASES["en"], False  # the default language of a Benchmark


def template(name: str) -> str:
    """The text of `templates/NAME.tmpl`, as written."""
    return resources.files(__package__).joinpath("templates", f"{name}.tmpl").read_text(encoding="utf-8")


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
    from .. import plugins

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

    # the answer phrases end prompts.py, and the hook registering them ends plugin.py
    hook = "\n\n" + template("patterns_hook.py") if has_patterns else ""
    files = {
        "pyproject.toml": fill(template("pyproject.toml")),
        "README.md": fill(template("README.md")),
        f"{module}/__init__.py": fill(template("__init__.py")),
        f"{module}/plugin.py": fill(template("plugin.py")) + hook,
        f"{module}/prompts.py": fill(template("prompts.py")) + patterns,
        f"{module}/benchmark.py": fill(template("benchmark.py")),
        f"{module}/fixture/items.jsonl": "".join(
            json.dumps(row, ensure_ascii=False) + "\n" for row in fixture_rows(keys)
        ),
        f"tests/test_{name}.py": fill(template("test.py")),
    }
    from ..files import write_atomic

    written = [write_atomic(root / rel, text) for rel, text in files.items()]
    written.append(write_atomic(root / module / "fixture" / "images" / "q3.png", image_png()))
    return Scaffold(root, name, module, language, known, tuple(written), keys)
