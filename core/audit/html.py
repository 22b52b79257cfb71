"""One self-contained HTML page of an audit: tables, inline SVG figures and examples with
inline thumbnails; no network access. A stratum filter (also settable as `#filter=field=value`
in the URL) hides the rows and examples of other values of that field.

Every number cell carries `data-path` (the JSON path of its value in the audit document) and
`data-format`, so the page can be checked against `medvqa audit --json`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..render import bidi_auto
from ..stats import MIN_TESTED
from .between_models import BETWEEN_MODELS_TEXT
from .charts import audit_charts
from .clusters import intervals_text
from .confidence_page import confidence_tables
from .exam_dates_page import exam_date_section
from .order import order_lines
from .page import SCRIPT, STYLE, Page, TableRow, esc
from .pairing import language_columns
from .pairs import CONVENTIONS, STATES
from .summary import (
    PAIRED_COLUMNS,
    model_docs,
    pooled_line,
    reading_text,
    refusal_scope,
    renamed_columns,
    strata_rows,
)
from .thumbnails import thumbnail


def _strata_rows(base: list, section: dict) -> list[TableRow]:
    """A paired section's rows for `Page.table`; each level's row filters with its stratum."""
    return [
        ([label], [*base, *path], {path[1]: [path[2]]} if path[0] == "by" else {})
        for label, path, _ in strata_rows(section)
    ]


def _warned(columns: list[tuple[str, Any, str]], rows: Any) -> list[tuple[str, Any, str]]:
    """`columns` without the warning (note, cluster interval) column when no row of a Δ table has one."""
    rows = list(rows)
    return [c for c in columns if c[1] not in ("warning", "note", "ci_cluster") or any(r.get(c[1]) for r in rows)]


def _paired_table(page: Page, base: list, paired: dict, model: str) -> None:
    page.add(f"<h3>Image removal (C+Q+I vs C+Q), refusals {esc(paired['convention'])}</h3>")
    rows = _strata_rows([*base, "paired"], paired)
    # the item browser's filter of a cell: the model's paired items in the row's stratum, those
    # of one transition state for a state's cell
    columns = [
        ("95 % CI (Tango)" if key == "ci" else heading, key, kind)
        for heading, key, kind in _warned(PAIRED_COLUMNS, [r for _, _, r in strata_rows(paired)])
    ]

    def items(i: int, key: str) -> dict[str, str]:
        strata = [f"{name}={value}" for name, [value] in rows[i][2].items()]  # (a level's row has one)
        return {
            "model": model,
            "transition": key if key in STATES else "paired",
            **({"stratum": strata[0]} if strata else {}),
        }

    page.table(["stratum"], columns, rows, items=items)
    if paired["by"]:
        page.add(
            "<p>McNemar mid-p (Fagerland, Lydersen &amp; Laake 2013; the exact conditional p is in the JSON). "
            "The overall row is the primary Δimg; strata are secondary. Holm p: the mid-p adjusted by Holm's "
            f"method over the tested levels of each stratum; a stratum of fewer than {MIN_TESTED} pairs is "
            "descriptive (no test).</p>"
        )
    page.add(f"<p>Intervals: {esc(intervals_text(page.doc))}</p>")
    _unpaired(page, "Image items not paired", paired["unpaired"])


def _variant_tables(page: Page, base: list, variants: dict) -> None:
    """The variants' paired tables (a model's `variants`, `variants.variant_sections`), after the
    image-removal table and in its shape: per variant its table against its base condition, and
    for the swap the swap against removal on the same items. No cell links to the item browser,
    whose transitions are image removal's."""
    for key, entry in variants.items():
        cond, label, v = entry["base"], entry["label"], entry["variant"]
        page.add(
            f"<h3>Variant {esc(v)} ({esc(cond)} vs {esc(label)}, same items and template), refusals "
            f"{esc(entry['convention'])}: Δ{esc(v)} = {esc(cond)} − {esc(label)}</h3>"
        )
        names = {"a_with": (cond, "a_base"), "a_removed": (label, f"a_{v}"), "delta_img": (f"Δ{v}", f"delta_{v}")}
        _factor_table(page, [*base, "variants", key], entry, names)
        if "circular_accuracy" in entry:
            page.add("".join(f"<p>{esc(line)}</p>" for line in order_lines(entry)))
        if (line := pooled_line(entry)) is not None:
            page.add(f"<p>{esc(line)}</p>")
        if (vs := entry.get("vs_removal")) is not None:
            first, second = vs["first"], vs["second"]
            page.add(
                f"<h3>Swap vs removal ({esc(first)} vs {esc(second)}: is a wrong image worse than none?), "
                f"refusals {esc(vs['convention'])}: Δswap_removal = {esc(first)} − {esc(second)}</h3>"
            )
            names = {
                "a_with": (first, "a_swap"),
                "a_removed": (second, "a_removed"),
                "delta_img": ("Δswap_removal", "delta_swap_removal"),
            }
            _factor_table(page, [*base, "variants", key, "vs_removal"], vs, names)


def _factor_table(page: Page, path: list, section: dict, names: dict[str, tuple[str, str]]) -> None:
    """A paired factor's section at `path` as the image-removal table, its columns `names`d."""
    columns = [
        ("95 % CI (Tango)" if key == "ci" else heading, key, kind)
        for heading, key, kind in _warned(renamed_columns(names), [r for _, _, r in strata_rows(section)])
    ]
    page.table(["stratum"], columns, _strata_rows(path, section))
    _unpaired(page, "Items not paired", section["unpaired"])


def _unpaired(page: Page, what: str, unpaired: dict) -> None:
    if unpaired:
        page.add(f"<p>{what}: " + "; ".join(f"{esc(reason)}: {u['n']}" for reason, u in unpaired.items()) + "</p>")


def _language_tables(page: Page, pairs: dict) -> None:
    """The language pairings (`paired_language`): one table per pair of languages and condition."""
    page.add("<h2>Language (the same items in two languages)</h2>")
    for key, section in pairs.items():
        first, second = section["languages"]
        for cond, sec in section["conditions"].items():
            page.add(
                f"<h3>{esc(key)}, {esc(cond)}: Δlang = {esc(first)} − {esc(second)}, "
                f"refusals {esc(sec['convention'])}</h3>"
            )
            page.table(
                ["stratum"],
                _warned(language_columns(first, second), [r for _, _, r in strata_rows(sec)]),
                _strata_rows(["paired_language", key, "conditions", cond], sec),
            )
            _unpaired(page, "Items not paired", sec["unpaired"])


def _refusal_tables(page: Page, base: list, refusals: dict) -> None:
    page.add(f"<h3>Refusals</h3><p>Rates {esc(refusal_scope(refusals))}.</p>")
    page.table(
        ["condition"],
        [("records", "n", "int"), ("refusals", "refusals", "int"), ("rate %", "rate", "pct")],
        [([cond], [*base, "refusals", "rates", cond], {}) for cond in refusals["rates"]],
    )
    page.table(
        ["convention"],
        [
            ("n", "n", "int"),
            ("a_with", "a_with", "pct"),
            ("a_removed", "a_removed", "pct"),
            ("Δimg", "delta_img", "pp"),
            ("95 % CI", "ci", "ci_pp"),
        ],
        [([conv], [*base, "refusals", "delta_img", conv], {}) for conv in CONVENTIONS],
    )
    page.add("".join(f'<p class="note">{conv}: {esc(note)}</p>' for conv, note in refusals["notes"].items() if note))
    fg = [*base, "refusals", "forced_guess"]
    page.add(
        f"<p>Forced-guess records: {page.cell([*fg, 'n'], 'int', 'span')}, accuracy "
        f"{page.cell([*fg, 'accuracy'], 'pct', 'span')} %</p>"
    )


def _ablation_table(page: Page, base: list, ablation: dict) -> None:
    groups = ("image", "text_only", "image_unavailable")
    conds = list(dict.fromkeys(c for g in groups for c in ablation[g]["conditions"]))
    page.add("<h3>Input ablation (accuracy %, same items per row)</h3>")
    rows: list[TableRow] = [([g], [*base, "ablation", g], {}) for g in groups] + [
        ([f"{name} = {value}: {g}"], [*base, "ablation", "by", name, value, g], {name: [value]})
        for name, values in ablation["by"].items()
        for value, by_group in values.items()
        for g in by_group
    ]
    page.table(
        ["items"],
        [
            ("n", "n", "int"),
            ("random baseline", "baseline", "pct"),
            *((c, ("conditions", c, "accuracy"), "pct") for c in conds),
        ],
        rows,
    )


def _io_table(page: Page, base: list) -> None:
    path = [*base, "io_control"]
    page.add("<h3>Image-as-options positive control</h3>")
    page.table(
        [],
        [
            (k, k, f)
            for k, f in (
                ("n", "int"),
                ("baseline", "pct"),
                ("a_with", "pct"),
                ("ci_a_with", "ci"),
                ("a_removed", "pct"),
                ("ci_a_removed", "ci"),
                ("binomial_p", "p"),
                ("binomial_p_with", "p"),
                ("leakage_hits", "int"),
            )
        ],
        [([], path, {})],
    )
    un = [*path, "image_unavailable"]
    page.add(
        f"<p>Without their image files (text only): n {page.cell([*un, 'n'], 'int', 'span')}, accuracy "
        f"{page.cell([*un, 'a_removed'], 'pct', 'span')} %, binomial p {page.cell([*un, 'binomial_p'], 'p', 'span')}"
        "</p>"
    )


def _selection_table(page: Page, base: list, bias: dict) -> None:
    page.add("<h3>Selection bias</h3>")
    rows: list[TableRow] = [([cond], [*base, "selection_bias", cond], {}) for cond in bias]

    def over_selected(i: int, heading: str) -> str | None:  # each label with its difference
        if heading != "over-selected labels (pp)":
            return None
        path, over = rows[i][1], bias[rows[i][0][0]]["over_selected"]
        return (
            "<td>"
            + (
                ", ".join(
                    f"{esc(o['label'])} {page.cell([*path, 'over_selected', j, 'difference'], 'pp', 'span')}"
                    for j, o in enumerate(over)
                )
                or "none"
            )
            + "</td>"
        )

    page.table(
        ["condition"],
        [
            ("n", "n", "int"),
            ("over-selected labels (pp)", "over_selected", "text"),
            ("outside the listed labels %", "outside_share", "pct"),
        ],
        rows,
        cell=over_selected,
    )


def _examples(page: Page, examples: dict) -> None:
    page.add("<h3>Examples</h3>")
    for state in STATES:
        page.add(f'<h4>{state}</h4><div class="examples">')
        for ex in examples.get(state, []):
            thumbs = "".join(
                f'<img alt="{esc(Path(p).name)}" src="{esc(src)}">'
                for p in ex["images"]
                if (src := thumbnail(p, page.thumbnail_px))
            )
            options = "<br>".join(f"{esc(o['label'])}. {esc(o['text'])}" for o in ex["options"])
            sides = "".join(
                f"<p><b>{label}</b>: predicted {esc(ex[k]['predicted'])} ({esc(ex[k]['status'])}, "
                f"{'correct' if ex[k]['correct'] else 'wrong'})</p><pre>{esc(ex[k]['response'])}</pre>"
                for k, label in (("with_image", "with image"), ("removed", "image removed"))
            )
            page.add(
                f'<div class="example" data-item="{esc(ex["item_id"])}"{page.row_attrs(ex["strata"])}>'
                f"<h5>{esc(ex['item_id'])}</h5>{thumbs}<p>{esc(ex['question'])}</p><p>{options}</p>"
                f"<p>gold: {esc(ex['gold'])}</p>{sides}</div>"
            )
        page.add("</div>")


def _cohorts(page: Page, cohorts: dict) -> None:
    page.add("<h2>Cohorts (mean of member models)</h2>")
    rows = [
        ([name, label], path, strata)
        for name, c in cohorts.items()
        for [label], path, strata in _strata_rows(["cohorts", name, "paired"], c["paired"])
    ]
    page.table(["cohort", "stratum"], [("models", "n_models", "int"), *PAIRED_COLUMNS[1:8]], rows)


def _comparisons(page: Page, comparisons: list) -> None:
    page.add(
        "<h2>Model differences (accuracy: McNemar mid-p, Tango interval; Δimg: sign-flip or z test and the "
        "interval beside it)</h2>"
    )
    page.table(
        ["a", "b", "measure"],
        _warned(
            [
                ("n", "n", "int"),
                ("a − b", "difference", "pp"),
                ("95 % CI", "ci", "ci_pp"),
                ("cluster 95 % CI", "ci_cluster", "ci_pp"),
                ("test", "test", "text"),
                ("p", "p", "p"),
                ("Holm p", "p_holm", "p"),
                ("warning", "warning", "text"),
                ("note", "note", "text"),
            ],
            comparisons,
        ),
        [([c["a"], c["b"], c["measure"]], ["comparisons", i], {}) for i, c in enumerate(comparisons)],
    )
    page.add(f'<p class="note">{esc(BETWEEN_MODELS_TEXT)}</p>')


def render_html(
    doc: dict, svgs: dict[str, str] | None = None, *, thumbnail_px: int = 160, view_href: str | None = None
) -> str:
    """The whole page as a string; `svgs` are the figures already rendered as SVG; `view_href`
    (relative) is the item browser of the same runs, which each paired cell links to filtered
    to its items."""
    page = Page(doc, thumbnail_px, view_href)
    models = model_docs(doc)
    several = "models" in doc
    for name, m in models.items():
        base = ["models", name] if several else []
        page.add(
            f'<section class="model" data-model="{esc(name)}"><h2>{esc(name)}</h2>'
            f"<p>{esc(m['source'])}: {m['n_records']} records</p>"
        )
        _paired_table(page, base, m["paired"], name)
        _variant_tables(page, base, m.get("variants") or {})
        confidence_tables(page, base, m.get("confidence"))
        _refusal_tables(page, base, m["refusals"])
        _ablation_table(page, base, m["ablation"])
        _io_table(page, base)
        _selection_table(page, base, m["selection_bias"])
        _examples(page, m["examples"])
        page.add("</section>")
    if doc.get("paired_language"):
        _language_tables(page, doc["paired_language"])
    if doc.get("cohorts"):
        _cohorts(page, doc["cohorts"])
    if doc.get("comparisons"):
        _comparisons(page, doc["comparisons"])
    if doc.get("exam_dates"):
        exam_date_section(page, doc["exam_dates"])
    page.add("<h2>Figures</h2>")
    for stem, svg in (audit_charts(doc) if svgs is None else svgs).items():
        page.add(
            f'<figure id="fig-{esc(stem)}">{svg[svg.index("<svg") :]}<figcaption>{esc(stem)}</figcaption></figure>'
        )
    options = ['<option value="">all</option>'] + [
        f'<option value="{esc(f"{name}={v}")}">{esc(name)} = {esc(v)}</option>'
        for name, values in page.filters.items()
        for v in sorted(values)
    ]
    settings = doc["settings"]
    head = (
        f'<!DOCTYPE html><html><head><meta charset="utf-8"><title>medvqa audit</title>'
        f"<style>{STYLE}</style></head><body><h1>Visual-reliance audit</h1>"
        f"<p>{esc(experiments_text(models))}; refusals {esc(settings['refusals'])}; {settings['resamples']} bootstrap "
        f"resamples, seed {settings['seed']}. Percentages; differences (Δimg, a − b, over-selection) in "
        f"percentage points.</p>"
        f'<p id="reading" data-reading="{esc(doc.get("reading", "strict"))}">{esc(reading_text(doc))}</p>'
        + "".join(f'<p class="note">{esc(note)}</p>' for note in doc.get("notes", []))
        + f'<p><label>Stratum: <select id="stratum-filter">{"".join(options)}</select></label> '
        f'showing <span id="filter-state">all</span></p>'
    )
    return bidi_auto(head + "\n".join(page.parts) + f"<script>{SCRIPT}</script></body></html>\n")


def experiments_text(models: dict[str, dict]) -> str:
    """ "1 model", "3 models", or "1 model in 2 experiments" where a model is audited in several
    languages or on several parts of a benchmark (each a section of its own)."""
    n_models = len({d.get("model", name) for name, d in models.items()})
    said = f"{n_models} model{'s' * (n_models != 1)}"
    return said if n_models == len(models) else f"{said} in {len(models)} experiments"


def write_html(doc: dict, path: Path, svgs: dict[str, str] | None = None, view_href: str | None = None) -> Path:
    from ..files import write_atomic

    return write_atomic(Path(path), render_html(doc, svgs, view_href=view_href))
