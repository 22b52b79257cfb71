"""Paired factors: the same item with one thing changed.

Image removal pairs an item's `C+Q+I` record with its `C+Q` record in one run (Δimg); the
language pairs an item's record in the exam's own language with its record, under the same
condition, in a run that differs only in the language (Δlang). Both go through the same
code: the records become `Pair`s and `transitions.paired_section` (`transition_row`) computes the
transition table, the accuracies, the difference with its interval and McNemar's exact test,
overall and by stratum. A `Factor` names the row's fields after what changed.

Language rows: `a_local` is the accuracy in the first language (the benchmark's own, the one
it declares first), `a_other` in the second, `delta_lang` = a_local − a_other = p10 − p01
(p10: right only in the first language); `counts` holds n11, n10, n01, n00.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import Any

from .. import metrics, plugins
from ..inference.base import generation_params
from ..metrics import held_fields
from ..results import condition_order, is_derived, model_name
from .clusters import cluster_map
from .names import scope
from .pairs import STATES, Pair, Settings
from .sections import forced_guess
from .summary import paired_markdown
from .transitions import flat_row, paired_section


@dataclass(frozen=True)
class Factor:
    """What a paired factor's rows call the two sides and their difference."""

    name: str
    first: str
    second: str
    delta: str

    def row(self, row: dict) -> dict:
        """A `transition_row` (fields named for image removal) with its side and difference fields
        named after this factor."""
        names = {
            "a_with": self.first,
            "a_removed": self.second,
            "ci_a_with": f"ci_{self.first}",
            "ci_a_removed": f"ci_{self.second}",
            "delta_img": self.delta,
        }
        return {names.get(k, k): v for k, v in row.items()}


IMAGE = Factor("image removal", "a_with", "a_removed", "delta_img")  # the fields as `transition_row` names them
LANGUAGE = Factor("language", "a_local", "a_other", "delta_lang")


def factor_section(section: dict, factor: Factor) -> dict:
    """A `paired_section` (rows named for image removal) with every row's fields named after
    `factor` (`Factor.row`)."""
    return {
        **section,
        "overall": factor.row(section["overall"]),
        "by": {
            name: {level: factor.row(row) for level, row in levels.items()} for name, levels in section["by"].items()
        },
    }


def pair_records(
    items: dict, first: Mapping[tuple[str, str], Mapping], second: Mapping[tuple[str, str], Mapping], condition: str
) -> tuple[list[Pair], dict[str, list[str]]]:
    """Pairs (record in `first`, record in `second`) of each item under `condition`, and the
    items with a record on one side only, by reason."""
    pairs: list[Pair] = []
    unpaired: dict[str, list[str]] = {}
    for item_id, item in items.items():
        a, b = first.get((item_id, condition)), second.get((item_id, condition))
        if a is not None and b is not None:
            pairs.append(Pair(item, a, b))
        elif a is not None or b is not None:
            unpaired.setdefault(
                "no record in the first language" if a is None else "no record in the second language", []
            ).append(item_id)
    return pairs, unpaired


@dataclass(frozen=True)
class LanguageSide:
    """One side of a language pairing: a run (or runs joined as one experiment)."""

    language: str | None  # the items' language, as the records hold it (ja, en, ...); None where unknown
    rank: int  # its place among the benchmark's languages (0: the exam's own)
    source: str
    records: list[Mapping[str, Any]]  # the records that count under the benchmark's rules
    items: dict


def manifest_language(manifest: Mapping[str, Any], benchmark: Any = None) -> str | None:
    """The language a run was asked in, by its manifest; a manifest written before languages were
    recorded is in its benchmark's first (`benchmark`, else the one registered under its name)."""
    if manifest.get("language"):
        return manifest["language"]
    if benchmark is None:
        name = manifest.get("benchmark")
        entry = plugins.benchmarks().get(name) if isinstance(name, str) else None
        benchmark = entry.obj if entry else None
    return benchmark.offered_languages[0] if benchmark is not None else None


def side(runs: Sequence[Any]) -> LanguageSide:
    """A `LanguageSide` of saved runs of one experiment."""
    first = runs[0]
    bench = first.benchmark
    records: list[Mapping[str, Any]] = [*metrics.counted([r for run in runs for r in run.records], bench)[0]]
    code = manifest_language(first.manifest, bench)
    held = {str(r.get("language")) for r in records if r.get("language")}
    language = next(iter(held)) if len(held) == 1 else code
    rank = bench.offered_languages.index(code) if code in bench.offered_languages else len(bench.offered_languages)
    return LanguageSide(
        language,
        rank,
        " + ".join(str(run.path) for run in runs),
        records,
        {k: v for run in runs for k, v in run.items.items()},
    )


def same_but_language(a: Sequence[Any], b: Sequence[Any]) -> bool:
    """Runs of the same benchmark and model with the same generation parameters, in two languages
    (two files of saved answers replayed under one model name pair: where answers came from is
    not how they were generated)."""
    ma, mb = a[0].manifest, b[0].manifest
    return (
        ma["benchmark"] == mb["benchmark"]
        and model_name(ma) == model_name(mb)
        and generation_params(ma.get("params")) == generation_params(mb.get("params"))
        and manifest_language(ma, a[0].benchmark) != manifest_language(mb, b[0].benchmark)
    )


def _index(records: list[Mapping]) -> dict[tuple[str, str], Mapping]:
    return {(r["item_id"], r["condition"]): r for r in records}


def language_section(a: Sequence[Any], b: Sequence[Any], s: Settings) -> dict:
    """The language pairing of two experiments (saved runs) that differ only in the language, the
    exam's own language first, per condition both hold: the image-removal section's fields, named
    for the language (see the module)."""
    model, benchmark = model_name(a[0].manifest), a[0].benchmark
    first, second = sorted((side(a), side(b)), key=lambda x: x.rank)
    ka, kb = _index(first.records), _index(second.records)
    conditions = sorted(
        {c for _, c in ka if not is_derived(c)} & {c for _, c in kb if not is_derived(c)}, key=condition_order
    )
    fields, _ = held_fields(s.by, first.records + second.records, benchmark.stratum_aliases if benchmark else {})
    items = {k: v for k, v in first.items.items() if k in second.items}
    # --refusals imputed credits a refusal with the forced-guess accuracy of both runs together
    forced = forced_guess(first.records + second.records)["accuracy"]
    out: dict[str, Any] = {
        "languages": [first.language, second.language],
        "runs": [first.source, second.source],
        "conditions": {},
    }
    clusters = cluster_map(benchmark, items.values(), s.cluster)
    for cond in conditions:
        section = paired_section(*pair_records(items, ka, kb, cond), fields, s, forced, first.source or model, clusters)
        out["conditions"][cond] = factor_section(section, LANGUAGE)
    return out


def _language_sections(groups: Sequence[Sequence[Any]], s: Settings) -> list[tuple[Sequence[Any], dict]]:
    """(the first experiment, the `language_section`) of every two experiments (saved runs) that
    differ only in the language."""
    return [
        (a, language_section(a, b, s))
        for a, b in combinations(groups, 2)
        if same_but_language(a, b) and _share_items(a, b)
    ]


def _share_items(a: Sequence[Any], b: Sequence[Any]) -> bool:
    """Whether two experiments hold some item in common (runs of one country's questions and
    another's, in two languages, have nothing to pair)."""
    ids = {k for run in a for k in run.items}
    return any(k in ids for run in b for k in run.items)


def language_pairs(groups: Sequence[Sequence[Any]], s: Settings) -> dict[str, dict]:
    """{"<first> vs <second>" (and the model, when several): section} for every two experiments
    that differ only in the language."""
    out: dict[str, dict] = {}
    several_models = len({model_name(g[0].manifest) for g in groups}) > 1
    for a, section in _language_sections(groups, s):
        key = " vs ".join(section["languages"])
        out[f"{key} ({model_name(a[0].manifest)})" if key in out or several_models else key] = section
    return out


def language_delta_rows(groups: Sequence[Sequence[Any]], s: Settings) -> list[dict]:
    """`compare`'s Δlang rows: per model × benchmark × condition, for every two experiments that
    differ only in the language, on the items both hold (the audit's language pairing)."""
    return [
        {
            "model": model_name(a[0].manifest),
            "benchmark": a[0].benchmark.name,
            "condition": cond,
            "languages": " vs ".join(section["languages"]),
            "scope": scope_text(a),
            **flat_row(sec, ("a_local", "a_other", "delta_lang")),
        }
        for a, section in _language_sections(groups, s)
        for cond, sec in section["conditions"].items()
    ]


def scope_text(runs: Sequence[Any]) -> str:
    """`scope` as text: `country=japan`, several joined by `, `; empty where nothing is common."""
    return scope_line(scope(runs))


def scope_line(levels: Mapping[str, str]) -> str:
    """A `scope` already worked out, as `scope_text` writes it."""
    return ", ".join(f"{k}={v}" for k, v in levels.items())


def language_columns(first: str, second: str) -> list[tuple[str, str, str]]:
    """The language table's number columns, in Markdown and on the page: (heading, key, format)."""
    return [
        ("n", "n", "int"),
        *((h, s, "pct") for h, s in zip(("both right", f"only {first}", f"only {second}", "neither"), STATES)),
        (first, "a_local", "pct"),
        (second, "a_other", "pct"),
        ("Δlang", "delta_lang", "pp"),
        ("95 % CI", "ci", "ci_pp"),
        ("cluster 95 % CI", "ci_cluster", "ci_pp"),
        ("McNemar mid-p", "mcnemar_p", "p"),
        ("role", "role", "text"),
        ("warning", "warning", "text"),
        ("note", "note", "text"),
    ]


def language_markdown(doc: dict) -> str:
    """The audit's language pairings as Markdown, through the one table renderer (empty when
    there are none)."""
    lines: list[str] = []
    for key, section in (doc.get("paired_language") or {}).items():
        first, second = section["languages"]
        for cond, sec in section["conditions"].items():
            lines += [
                f"## Language: {key}, {cond}",
                "",
                f"{first} vs {second} on the same items (refusals {sec['convention']}); Δlang = {first} − {second}:",
                "",
                *paired_markdown(sec, language_columns(first, second)),
                "",
            ]
    return "\n" + "\n".join(lines) if lines else ""
