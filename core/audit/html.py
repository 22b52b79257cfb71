"""One self-contained HTML page of an audit: tables, inline SVG figures and examples with
inline thumbnails; no network access. A stratum filter (also settable as `#filter=field=value`
in the URL) hides the rows and examples of other values of that field.

Every number cell carries `data-path` (the JSON path of its value in the audit document) and
`data-format`, so the page can be checked against `medvqa audit --json`.
"""

from __future__ import annotations

import base64
import html
import io
import json
import re
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from ..render import FONT_STACK, bidi_auto, fmt, to_html
from ..stats import MIN_TESTED
from .between_models import BETWEEN_MODELS_TEXT
from .charts import audit_charts
from .clusters import intervals_text
from .pairing import language_columns
from .pairs import CONVENTIONS, STATES
from .summary import PAIRED_COLUMNS, model_docs, reading_text, refusal_scope, strata_rows

_ABSENT = object()


def _get(doc: dict, path: list, absent: Any = None) -> Any:
    """The value at `path` in the document: None past a missing value, `absent` where a dict on
    the path lacks the next key (an empty cell, not a missing value)."""
    value: Any = doc
    for key in path:
        if value is None:
            return None
        if isinstance(value, dict) and key not in value:
            return absent
        value = value[key]
    return value


class _Page:
    def __init__(self, doc: dict, thumbnail_px: int, view_href: str | None = None):
        self.doc = doc
        self.thumbnail_px = thumbnail_px
        self.view_href = view_href  # the item browser of the audited runs, when one is written
        self.parts: list[str] = []
        self.filters: dict[str, set[str]] = {}

    def add(self, text: str) -> None:
        self.parts.append(text)

    def cell(
        self, path: list, kind: str, tag: str = "td", items: dict[str, str] | None = None, text: str | None = None
    ) -> str:
        """A number from the document at `path` (shown as `text` when given), tagged with its path
        and format; with `items` (the item browser's filter of the items behind it), a link to
        them in the browser."""
        text = html.escape(fmt(_get(self.doc, path), kind)) if text is None else text
        if items is not None and self.view_href:
            text = f'<a class="view-link" href="{_e(self.view_href + "#" + urlencode(items))}">{text}</a>'
        return (
            f'<{tag} class="num" data-path="{_e(json.dumps(path, ensure_ascii=False))}" '
            f'data-format="{kind}">{text}</{tag}>'
        )

    def row_attrs(self, strata: dict[str, list[str]]) -> str:
        for name, values in strata.items():
            self.filters.setdefault(name, set()).update(values)
        keys = [f"{name}={v}" for name, values in strata.items() for v in values]
        return (
            f' data-fields="{_e(json.dumps(list(strata), ensure_ascii=False))}"'
            f' data-strata="{_e(json.dumps(keys, ensure_ascii=False))}"'
        )

    def table(
        self,
        texts: list[str],
        numbers: list[tuple[str, Any, str]],
        rows: list[tuple[list[str], list, dict]],
        items: Callable[[int, str], dict[str, str]] | None = None,
        cell: Callable[[int, str], str | None] | None = None,
    ) -> None:
        """A table through the one renderer: the text columns `texts`, then `numbers` (heading, key
        or keys under the row's path, format). Each row is (its texts, the document path of its
        numbers, its strata for the filter; rows are told apart by their texts); each number is
        tagged with its own path, an empty cell where the row's dict has no such key. `items(i,
        key)`: the item-browser filter the number of row i links to; `cell(i, heading)`: a cell of
        row i written otherwise."""
        import pandas as pd

        keys = {h: list(k) if isinstance(k, tuple) else [k] for h, k, _ in numbers}
        kinds = {h: kind for h, _, kind in numbers}
        values = [[*labels, *(_get(self.doc, [*path, *keys[h]]) for h in keys)] for labels, path, _ in rows]
        attrs = {tuple(labels): self.row_attrs(strata) if strata else "" for labels, _, strata in rows}

        def number(i: int, heading: str, text: str) -> str | None:
            if cell is not None and (custom := cell(i, heading)) is not None:
                return custom
            if heading not in keys:
                return None
            path = [*rows[i][1], *keys[heading]]
            if _get(self.doc, path, _ABSENT) is _ABSENT:
                return "<td></td>"
            return self.cell(path, kinds[heading], items=items(i, keys[heading][-1]) if items else None, text=text)

        self.add(
            to_html(
                pd.DataFrame(values, columns=[*texts, *keys]),
                kinds,
                cell=number,
                row_attrs=lambda row: attrs[tuple(row[h] for h in texts)],
            )
        )


def _e(text: Any) -> str:
    return html.escape(str(text), quote=True)


def _strata_rows(base: list, section: dict) -> list[tuple[list[str], list, dict]]:
    """A paired section's rows for `_Page.table`; each level's row filters with its stratum."""
    return [
        ([label], [*base, *path], {path[1]: [path[2]]} if path[0] == "by" else {})
        for label, path, _ in strata_rows(section)
    ]


def _warned(columns: list[tuple[str, Any, str]], rows: Any) -> list[tuple[str, Any, str]]:
    """`columns` without the warning (note, cluster interval) column when no row of a Δ table has one."""
    rows = list(rows)
    return [c for c in columns if c[1] not in ("warning", "note", "ci_cluster") or any(r.get(c[1]) for r in rows)]


def _paired_table(page: _Page, base: list, paired: dict, model: str) -> None:
    page.add(f"<h3>Image removal (C+Q+I vs C+Q), refusals {_e(paired['convention'])}</h3>")
    rows = _strata_rows([*base, "paired"], paired)
    # the item browser's filter of a cell: the model's paired items in the row's stratum, those
    # of one transition state for a state's cell
    columns = [
        ("95 % CI (Tango)" if key == "ci" else heading, key, kind)
        for heading, key, kind in _warned(PAIRED_COLUMNS, [r for _, _, r in strata_rows(paired)])
    ]
    page.table(
        ["stratum"],
        columns,
        rows,
        items=lambda i, key: {
            "model": model,
            "transition": key if key in STATES else "paired",
            **{"stratum": f"{name}={value}" for name, [value] in rows[i][2].items()},
        },
    )
    if paired["by"]:
        page.add(
            "<p>McNemar mid-p (Fagerland, Lydersen &amp; Laake 2013; the exact conditional p is in the JSON). "
            "The overall row is the primary Δimg; strata are secondary. Holm p: the mid-p adjusted by Holm's "
            f"method over the tested levels of each stratum; a stratum of fewer than {MIN_TESTED} pairs is "
            "descriptive (no test).</p>"
        )
    page.add(f"<p>Intervals: {_e(intervals_text(page.doc))}</p>")
    _unpaired(page, "Image items not paired", paired["unpaired"])


def _unpaired(page: _Page, what: str, unpaired: dict) -> None:
    if unpaired:
        page.add(f"<p>{what}: " + "; ".join(f"{_e(reason)}: {u['n']}" for reason, u in unpaired.items()) + "</p>")


def _language_tables(page: _Page, pairs: dict) -> None:
    """The language pairings (`paired_language`): one table per pair of languages and condition."""
    page.add("<h2>Language (the same items in two languages)</h2>")
    for key, section in pairs.items():
        first, second = section["languages"]
        for cond, sec in section["conditions"].items():
            page.add(
                f"<h3>{_e(key)}, {_e(cond)}: Δlang = {_e(first)} − {_e(second)}, refusals {_e(sec['convention'])}</h3>"
            )
            page.table(
                ["stratum"],
                _warned(language_columns(first, second), [r for _, _, r in strata_rows(sec)]),
                _strata_rows(["paired_language", key, "conditions", cond], sec),
            )
            _unpaired(page, "Items not paired", sec["unpaired"])


def _refusal_tables(page: _Page, base: list, refusals: dict) -> None:
    page.add(f"<h3>Refusals</h3><p>Rates {_e(refusal_scope(refusals))}.</p>")
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
    page.add("".join(f'<p class="note">{conv}: {_e(note)}</p>' for conv, note in refusals["notes"].items() if note))
    fg = [*base, "refusals", "forced_guess"]
    page.add(
        f"<p>Forced-guess records: {page.cell([*fg, 'n'], 'int', 'span')}, accuracy "
        f"{page.cell([*fg, 'accuracy'], 'pct', 'span')} %</p>"
    )


def _ablation_table(page: _Page, base: list, ablation: dict) -> None:
    groups = ("image", "text_only", "image_unavailable")
    conds = list(dict.fromkeys(c for g in groups for c in ablation[g]["conditions"]))
    page.add("<h3>Input ablation (accuracy %, same items per row)</h3>")
    rows = [([g], [*base, "ablation", g], {}) for g in groups] + [
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


def _io_table(page: _Page, base: list) -> None:
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


def _selection_table(page: _Page, base: list, bias: dict) -> None:
    page.add("<h3>Selection bias</h3>")
    rows = [([cond], [*base, "selection_bias", cond], {}) for cond in bias]

    def over_selected(i: int, heading: str) -> str | None:  # each label with its difference
        if heading != "over-selected labels (pp)":
            return None
        path, over = rows[i][1], bias[rows[i][0][0]]["over_selected"]
        return (
            "<td>"
            + (
                ", ".join(
                    f"{_e(o['label'])} {page.cell([*path, 'over_selected', j, 'difference'], 'pp', 'span')}"
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


THUMBNAILS = "thumbnails"  # the folder of kept thumbnails in medvqa's cache folder
# What a kept thumbnail may hold: a data URL of an image and nothing else (it is pasted into pages).
DATA_URL = re.compile(r"data:image/(png|jpeg|webp);base64,[A-Za-z0-9+/=]*")


@lru_cache(maxsize=512)
def thumbnail(path: str, px: int, image_format: str = "PNG") -> str | None:
    """A small image (at most `px` on its longer side) of the file at `path` as a data URL, PNG
    or JPEG; None for a file Pillow cannot read or would not decode (a decompression bomb: more
    pixels than Pillow's limit). A thumbnail made once is kept in `<cache>/thumbnails/`, keyed by
    the file's path, size, modification and change times and inode and the thumbnail's size and
    format: decoding a large PNG took most of a page's extra time over its JSON, every time a
    page was written. A kept file is read as untrusted: anything but an image's data URL
    (`DATA_URL`) is made again and replaced."""
    import hashlib
    import os

    from ..files import cache_dir, read_kept, write_atomic
    from ..items import DataError

    try:
        st = os.stat(path)
    except OSError:
        return None
    key = hashlib.sha256(
        f"2|{os.path.abspath(path)}|{st.st_size}|{st.st_mtime_ns}|{st.st_ctime_ns}|{st.st_ino}|"
        f"{px}|{image_format}".encode("utf-8", "surrogateescape")
    ).hexdigest()
    kept = cache_dir() / THUMBNAILS / key[:2] / key
    text = (read_kept(kept) or b"").decode("ascii", "replace")
    if DATA_URL.fullmatch(text):
        return text
    made = _make_thumbnail(path, px, image_format)
    if made is not None:
        try:  # written whole (a temporary file renamed); a cache folder that cannot be written keeps nothing
            write_atomic(kept, made, sync=False)
        except DataError:
            pass
    return made


def _make_thumbnail(path: str, px: int, image_format: str) -> str | None:
    import warnings

    from PIL import Image

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            with Image.open(path) as im:
                im.thumbnail((px, px))
                buf = io.BytesIO()
                im.convert("RGB").save(buf, format=image_format, **({"quality": 80} if image_format == "JPEG" else {}))
    except (OSError, ValueError, SyntaxError, Image.DecompressionBombError, Image.DecompressionBombWarning):
        return None
    mime = "jpeg" if image_format == "JPEG" else image_format.lower()
    return f"data:image/{mime};base64," + base64.b64encode(buf.getvalue()).decode("ascii")


def _examples(page: _Page, examples: dict) -> None:
    page.add("<h3>Examples</h3>")
    for state in STATES:
        page.add(f'<h4>{state}</h4><div class="examples">')
        for ex in examples.get(state, []):
            thumbs = "".join(
                f'<img alt="{_e(Path(p).name)}" src="{_e(src)}">'
                for p in ex["images"]
                if (src := thumbnail(p, page.thumbnail_px))
            )
            options = "<br>".join(f"{_e(o['label'])}. {_e(o['text'])}" for o in ex["options"])
            sides = "".join(
                f"<p><b>{label}</b>: predicted {_e(ex[k]['predicted'])} ({_e(ex[k]['status'])}, "
                f"{'correct' if ex[k]['correct'] else 'wrong'})</p><pre>{_e(ex[k]['response'])}</pre>"
                for k, label in (("with_image", "with image"), ("removed", "image removed"))
            )
            page.add(
                f'<div class="example" data-item="{_e(ex["item_id"])}"{page.row_attrs(ex["strata"])}>'
                f"<h5>{_e(ex['item_id'])}</h5>{thumbs}<p>{_e(ex['question'])}</p><p>{options}</p>"
                f"<p>gold: {_e(ex['gold'])}</p>{sides}</div>"
            )
        page.add("</div>")


def _cohorts(page: _Page, cohorts: dict) -> None:
    page.add("<h2>Cohorts (mean of member models)</h2>")
    rows = [
        ([name, label], path, strata)
        for name, c in cohorts.items()
        for [label], path, strata in _strata_rows(["cohorts", name, "paired"], c["paired"])
    ]
    page.table(["cohort", "stratum"], [("models", "n_models", "int"), *PAIRED_COLUMNS[1:8]], rows)


def _comparisons(page: _Page, comparisons: list) -> None:
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
    page.add(f'<p class="note">{_e(BETWEEN_MODELS_TEXT)}</p>')


_STYLE = (
    """
body{font-family:%s;margin:1.5em;max-width:1200px}
table{border-collapse:collapse;margin:.5em 0 1em}td,th{border:1px solid #ccc;padding:2px 6px}
td.num{text-align:right;font-variant-numeric:tabular-nums}.note{color:#a00}
.examples{display:flex;flex-wrap:wrap;gap:1em}.example{border:1px solid #ddd;padding:.5em;width:360px}
.example img{max-width:160px;margin:2px}pre{white-space:pre-wrap;background:#f6f6f6;padding:4px}
figure svg{max-width:100%%;height:auto}
"""
    % FONT_STACK
)

_SCRIPT = """
(function(){
  var select = document.getElementById('stratum-filter');
  function apply(value){
    var field = value ? value.slice(0, value.indexOf('=')) : null;
    document.querySelectorAll('[data-fields]').forEach(function(el){
      var fields = JSON.parse(el.getAttribute('data-fields'));
      var strata = JSON.parse(el.getAttribute('data-strata'));
      el.hidden = !!value && fields.indexOf(field) >= 0 && strata.indexOf(value) < 0;
    });
    document.getElementById('filter-state').textContent = value || 'all';
  }
  select.addEventListener('change', function(){
    apply(select.value);
    history.replaceState(null, '', '#filter=' + encodeURIComponent(select.value));
  });
  var m = location.hash.match(/^#filter=(.*)$/);
  if (m) { select.value = decodeURIComponent(m[1]); apply(select.value); }
})();
"""


def render_html(
    doc: dict, svgs: dict[str, str] | None = None, *, thumbnail_px: int = 160, view_href: str | None = None
) -> str:
    """The whole page as a string; `svgs` are the figures already rendered as SVG; `view_href`
    (relative) is the item browser of the same runs, which each paired cell links to filtered
    to its items."""
    page = _Page(doc, thumbnail_px, view_href)
    models = model_docs(doc)
    several = "models" in doc
    for name, m in models.items():
        base = ["models", name] if several else []
        page.add(
            f'<section class="model" data-model="{_e(name)}"><h2>{_e(name)}</h2>'
            f"<p>{_e(m['source'])}: {m['n_records']} records</p>"
        )
        _paired_table(page, base, m["paired"], name)
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
    page.add("<h2>Figures</h2>")
    for stem, svg in (audit_charts(doc) if svgs is None else svgs).items():
        page.add(f'<figure id="fig-{_e(stem)}">{svg[svg.index("<svg") :]}<figcaption>{_e(stem)}</figcaption></figure>')
    options = ['<option value="">all</option>'] + [
        f'<option value="{_e(f"{name}={v}")}">{_e(name)} = {_e(v)}</option>'
        for name, values in page.filters.items()
        for v in sorted(values)
    ]
    settings = doc["settings"]
    head = (
        f'<!DOCTYPE html><html><head><meta charset="utf-8"><title>medvqa audit</title>'
        f"<style>{_STYLE}</style></head><body><h1>Visual-reliance audit</h1>"
        f"<p>{_e(experiments_text(models))}; refusals {_e(settings['refusals'])}; {settings['resamples']} bootstrap "
        f"resamples, seed {settings['seed']}. Percentages; differences (Δimg, a − b, over-selection) in "
        f"percentage points.</p>"
        f'<p id="reading" data-reading="{_e(doc.get("reading", "strict"))}">{_e(reading_text(doc))}</p>'
        + "".join(f'<p class="note">{_e(note)}</p>' for note in doc.get("notes", []))
        + f'<p><label>Stratum: <select id="stratum-filter">{"".join(options)}</select></label> '
        f'showing <span id="filter-state">all</span></p>'
    )
    return bidi_auto(head + "\n".join(page.parts) + f"<script>{_SCRIPT}</script></body></html>\n")


def experiments_text(models: dict[str, dict]) -> str:
    """ "1 model", "3 models", or "1 model in 2 experiments" where a model is audited in several
    languages or on several parts of a benchmark (each a section of its own)."""
    n_models = len({d.get("model", name) for name, d in models.items()})
    said = f"{n_models} model{'s' * (n_models != 1)}"
    return said if n_models == len(models) else f"{said} in {len(models)} experiments"


def write_html(doc: dict, path: Path, svgs: dict[str, str] | None = None, view_href: str | None = None) -> Path:
    from ..files import write_atomic

    return write_atomic(Path(path), render_html(doc, svgs, view_href=view_href))
