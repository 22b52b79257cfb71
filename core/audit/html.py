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
from functools import lru_cache
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from medvqa.core.audit.analysis import CONVENTIONS, STATES, model_docs
from medvqa.core.audit.figures import figures, svg_texts
from medvqa.core.render import fmt


def _get(doc: dict, path: list) -> Any:
    value: Any = doc
    for key in path:
        if value is None:
            return None
        value = value[key] if isinstance(value, list) else value.get(key)
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

    def cell(self, path: list, kind: str, tag: str = "td", items: dict[str, str] | None = None) -> str:
        """A number from the document at `path`, tagged with its path and format; with `items`
        (the item browser's filter of the items behind it), a link to them in the browser."""
        text = html.escape(fmt(_get(self.doc, path), kind))
        if items is not None and self.view_href:
            text = f'<a class="view-link" href="{_attr(self.view_href + "#" + urlencode(items))}">{text}</a>'
        return (f'<{tag} class="num" data-path="{_attr(json.dumps(path, ensure_ascii=False))}" '
                f'data-format="{kind}">{text}</{tag}>')

    def row_attrs(self, strata: dict[str, list[str]]) -> str:
        for name, values in strata.items():
            self.filters.setdefault(name, set()).update(values)
        keys = [f"{name}={v}" for name, values in strata.items() for v in values]
        return (f' data-fields="{_attr(json.dumps(list(strata), ensure_ascii=False))}"'
                f' data-strata="{_attr(json.dumps(keys, ensure_ascii=False))}"')


def _attr(text: str) -> str:
    return html.escape(text, quote=True)


def _e(text: Any) -> str:
    return html.escape(str(text))


_PAIRED_COLS = [("n", "int"), *((s, "pct") for s in STATES), ("a_with", "pct"), ("a_removed", "pct"),
                ("delta_img", "pp"), ("ci", "ci_pp"), ("mcnemar_p", "p"), ("mcnemar_p_holm", "p")]
_PAIRED_HEAD = ["n", "p11", "p10", "p01", "p00", "a_with", "a_removed", "Δimg", "95 % CI (Tango)", "McNemar p",
                "Holm p"]


def _paired_items(model: str, key: str, stratum: str | None = None) -> dict[str, str]:
    """The item browser's filter of a paired-table cell: the model's paired items in the row's
    stratum, those of one transition state for a state's cell."""
    return {"model": model, "transition": key if key in STATES else "paired", **({"stratum": stratum} if stratum else {})}


def _paired_table(page: _Page, base: list, paired: dict, model: str) -> None:
    page.add(f"<h3>Image removal (C+Q+I vs C+Q), refusals {_e(paired['convention'])}</h3>")
    page.add('<table class="paired"><tr><th>stratum</th>' + "".join(f"<th>{h}</th>" for h in _PAIRED_HEAD) + "</tr>")
    page.add("<tr><td>overall</td>" + "".join(page.cell([*base, "paired", "overall", k], f, items=_paired_items(model, k))
                                              for k, f in _PAIRED_COLS if k != "mcnemar_p_holm")
             + "<td></td></tr>")  # one test: no family
    for name, values in paired["by"].items():
        for value in values:
            path = [*base, "paired", "by", name, value]
            page.add(f"<tr{page.row_attrs({name: [value]})}><td>{_e(name)} = {_e(value)}</td>"
                     + "".join(page.cell([*path, k], f, items=_paired_items(model, k, f"{name}={value}"))
                               for k, f in _PAIRED_COLS) + "</tr>")
    page.add("</table>")
    if paired["by"]:
        page.add("<p>Holm p: McNemar's exact p-value adjusted by Holm's method over the levels of each "
                 "stratum.</p>")
    if paired["unpaired"]:
        page.add("<p>Image items not paired: " + "; ".join(
            f"{_e(reason)}: {u['n']}" for reason, u in paired["unpaired"].items()) + "</p>")


_LANGUAGE_COLS = [("n", "int"), *((s, "pct") for s in STATES), ("a_local", "pct"), ("a_other", "pct"),
                  ("delta_lang", "pp"), ("ci", "ci_pp"), ("mcnemar_p", "p")]


def _language_tables(page: _Page, pairs: dict) -> None:
    """The language pairings (`paired_language`): one table per pair of languages and condition."""
    page.add("<h2>Language (the same items in two languages)</h2>")
    for key, section in pairs.items():
        first, second = section["languages"]
        head = ["n", "both right", f"only {first}", f"only {second}", "neither", first, second, "Δlang", "95 % CI",
                "McNemar p"]
        for cond, sec in section["conditions"].items():
            base = ["paired_language", key, "conditions", cond]
            page.add(f"<h3>{_e(key)}, {_e(cond)}: Δlang = {_e(first)} − {_e(second)}, refusals "
                     f"{_e(sec['convention'])}</h3>")
            page.add('<table class="paired"><tr><th>stratum</th>' + "".join(f"<th>{_e(h)}</th>" for h in head) + "</tr>")
            page.add("<tr><td>overall</td>" + "".join(page.cell([*base, "overall", k], f) for k, f in _LANGUAGE_COLS)
                     + "</tr>")
            for name, values in sec["by"].items():
                for value in values:
                    page.add(f"<tr{page.row_attrs({name: [value]})}><td>{_e(name)} = {_e(value)}</td>"
                             + "".join(page.cell([*base, "by", name, value, k], f) for k, f in _LANGUAGE_COLS)
                             + "</tr>")
            page.add("</table>")
            if sec["unpaired"]:
                page.add("<p>Items not paired: " + "; ".join(
                    f"{_e(reason)}: {u['n']}" for reason, u in sec["unpaired"].items()) + "</p>")


def _refusal_tables(page: _Page, base: list, refusals: dict) -> None:
    page.add("<h3>Refusals</h3><table><tr><th>condition</th><th>records</th><th>refusals</th><th>rate %</th></tr>")
    for cond in refusals["rates"]:
        path = [*base, "refusals", "rates", cond]
        page.add(f"<tr><td>{_e(cond)}</td>{page.cell([*path, 'n'], 'int')}{page.cell([*path, 'refusals'], 'int')}"
                 f"{page.cell([*path, 'rate'], 'pct')}</tr>")
    page.add("</table><table><tr><th>convention</th><th>n</th><th>a_with</th><th>a_removed</th><th>Δimg</th>"
             "<th>95 % CI</th></tr>")
    for conv in CONVENTIONS:
        path = [*base, "refusals", "delta_img", conv]
        note = refusals["notes"].get(conv)
        page.add(f"<tr><td>{conv}</td>" + "".join(page.cell([*path, k], f) for k, f in
                 (("n", "int"), ("a_with", "pct"), ("a_removed", "pct"), ("delta_img", "pp"), ("ci", "ci_pp")))
                 + "</tr>")
        if note:
            page.add(f'<tr><td colspan="6" class="note">{_e(note)}</td></tr>')
    fg = [*base, "refusals", "forced_guess"]
    page.add(f"</table><p>Forced-guess records: {page.cell([*fg, 'n'], 'int', 'span')}, accuracy "
             f"{page.cell([*fg, 'accuracy'], 'pct', 'span')} %</p>")


def _ablation_table(page: _Page, base: list, ablation: dict) -> None:
    conds = list(dict.fromkeys(c for g in ("image", "text_only", "image_unavailable")
                               for c in ablation[g]["conditions"]))
    page.add("<h3>Input ablation (accuracy %, same items per row)</h3><table><tr><th>items</th><th>n</th>"
             "<th>random baseline</th>" + "".join(f"<th>{_e(c)}</th>" for c in conds) + "</tr>")

    def row(path: list, label: str, group: dict, attrs: str = "") -> None:
        cells = [page.cell([*path, "n"], "int"), page.cell([*path, "baseline"], "pct")]
        cells += [page.cell([*path, "conditions", c, "accuracy"], "pct") if c in group["conditions"] else "<td></td>"
                  for c in conds]
        page.add(f"<tr{attrs}><td>{_e(label)}</td>{''.join(cells)}</tr>")

    for g in ("image", "text_only", "image_unavailable"):
        row([*base, "ablation", g], g, ablation[g])
    for name, values in ablation["by"].items():
        for value, groups in values.items():
            for g, group in groups.items():
                row([*base, "ablation", "by", name, value, g], f"{name} = {value}: {g}", group,
                    page.row_attrs({name: [value]}))
    page.add("</table>")


def _io_table(page: _Page, base: list) -> None:
    path = [*base, "io_control"]
    cols = (("n", "int"), ("baseline", "pct"), ("a_with", "pct"), ("ci_a_with", "ci"), ("a_removed", "pct"),
            ("ci_a_removed", "ci"), ("binomial_p", "p"), ("binomial_p_with", "p"), ("leakage_hits", "int"))
    page.add("<h3>Image-as-options positive control</h3><table><tr>"
             + "".join(f"<th>{k}</th>" for k, _ in cols) + "</tr><tr>"
             + "".join(page.cell([*path, k], f) for k, f in cols) + "</tr></table>")
    un = [*path, "image_unavailable"]
    page.add(f"<p>Without their image files (text only): n {page.cell([*un, 'n'], 'int', 'span')}, accuracy "
             f"{page.cell([*un, 'a_removed'], 'pct', 'span')} %, binomial p {page.cell([*un, 'binomial_p'], 'p', 'span')}"
             "</p>")


def _selection_table(page: _Page, base: list, bias: dict) -> None:
    page.add("<h3>Selection bias</h3><table><tr><th>condition</th><th>n</th><th>over-selected labels (pp)</th>"
             "<th>outside the listed labels %</th></tr>")
    for cond, row in bias.items():
        path = [*base, "selection_bias", cond]
        over = ", ".join(f'{_e(o["label"])} {page.cell([*path, "over_selected", i, "difference"], "pp", "span")}'
                         for i, o in enumerate(row["over_selected"]))
        page.add(f"<tr><td>{_e(cond)}</td>{page.cell([*path, 'n'], 'int')}<td>{over or 'none'}</td>"
                 f"{page.cell([*path, 'outside_share'], 'pct')}</tr>")
    page.add("</table>")


@lru_cache(maxsize=512)
def thumbnail(path: str, px: int, image_format: str = "PNG") -> str | None:
    """A small image (at most `px` on its longer side) of the file at `path` as a data URL, PNG
    or JPEG; None for a file Pillow cannot read or would not decode (a decompression bomb: more
    pixels than Pillow's limit)."""
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
            thumbs = "".join(f'<img alt="{_attr(Path(p).name)}" src="{src}">' for p in ex["images"]
                             if (src := thumbnail(p, page.thumbnail_px)))
            options = "<br>".join(f"{_e(o['label'])}. {_e(o['text'])}" for o in ex["options"])
            sides = "".join(
                f"<p><b>{label}</b>: predicted {_e(ex[k]['predicted'])} ({_e(ex[k]['status'])}, "
                f"{'correct' if ex[k]['correct'] else 'wrong'})</p><pre>{_e(ex[k]['response'])}</pre>"
                for k, label in (("with_image", "with image"), ("removed", "image removed")))
            page.add(f'<div class="example" data-item="{_attr(ex["item_id"])}"{page.row_attrs(ex["strata"])}>'
                     f"<h5>{_e(ex['item_id'])}</h5>{thumbs}<p>{_e(ex['question'])}</p><p>{options}</p>"
                     f"<p>gold: {_e(ex['gold'])}</p>{sides}</div>")
        page.add("</div>")


def _cohorts(page: _Page, cohorts: dict) -> None:
    page.add("<h2>Cohorts (mean of member models)</h2><table><tr><th>cohort</th><th>stratum</th><th>models</th>"
             + "".join(f"<th>{h}</th>" for h in ("p11", "p10", "p01", "p00", "a_with", "a_removed", "Δimg")) + "</tr>")
    keys = (*STATES, "a_with", "a_removed", "delta_img")
    for name, c in cohorts.items():
        rows = [(["cohorts", name, "paired", "overall"], "overall", "")]
        rows += [(["cohorts", name, "paired", "by", f, v], f"{f} = {v}", page.row_attrs({f: [v]}))
                 for f, values in c["paired"]["by"].items() for v in values]
        for path, label, attrs in rows:
            page.add(f"<tr{attrs}><td>{_e(name)}</td><td>{_e(label)}</td>{page.cell([*path, 'n_models'], 'int')}"
                     + "".join(page.cell([*path, k], "pp" if k == "delta_img" else "pct") for k in keys) + "</tr>")
    page.add("</table>")


def _comparisons(page: _Page, comparisons: list) -> None:
    page.add("<h2>Model differences (accuracy: exact McNemar, Tango interval; Δimg: paired bootstrap p, "
             "MOVER interval)</h2><table><tr><th>a</th><th>b</th><th>measure</th>"
             "<th>n</th><th>a − b</th><th>95 % CI</th><th>p</th></tr>")
    for i, c in enumerate(comparisons):
        path = ["comparisons", i]
        page.add(f"<tr><td>{_e(c['a'])}</td><td>{_e(c['b'])}</td><td>{_e(c['measure'])}</td>"
                 + "".join(page.cell([*path, k], f) for k, f in
                           (("n", "int"), ("difference", "pp"), ("ci", "ci_pp"), ("p", "p"))) + "</tr>")
    page.add("</table>")


_STYLE = """
body{font-family:system-ui,sans-serif;margin:1.5em;max-width:1200px}
table{border-collapse:collapse;margin:.5em 0 1em}td,th{border:1px solid #ccc;padding:2px 6px}
td.num{text-align:right;font-variant-numeric:tabular-nums}.note{color:#a00}
.examples{display:flex;flex-wrap:wrap;gap:1em}.example{border:1px solid #ddd;padding:.5em;width:360px}
.example img{max-width:160px;margin:2px}pre{white-space:pre-wrap;background:#f6f6f6;padding:4px}
figure svg{max-width:100%;height:auto}
"""

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


def render_html(doc: dict, svgs: dict[str, str] | None = None, *, thumbnail_px: int = 160,
                view_href: str | None = None) -> str:
    """The whole page as a string; `svgs` are the figures already rendered as SVG; `view_href`
    (relative) is the item browser of the same runs, which each paired cell links to filtered
    to its items."""
    page = _Page(doc, thumbnail_px, view_href)
    models = model_docs(doc)
    several = "models" in doc
    for name, m in models.items():
        base = ["models", name] if several else []
        page.add(f'<section class="model" data-model="{_attr(name)}"><h2>{_e(name)}</h2>'
                 f"<p>{_e(m['source'])}: {m['n_records']} records</p>")
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
    for stem, svg in (svg_texts(figures(doc)) if svgs is None else svgs).items():
        page.add(f'<figure id="fig-{_attr(stem)}">{svg[svg.index("<svg"):]}<figcaption>{_e(stem)}</figcaption></figure>')
    options = ['<option value="">all</option>'] + [
        f'<option value="{_attr(f"{name}={v}")}">{_e(name)} = {_e(v)}</option>'
        for name, values in page.filters.items() for v in sorted(values)]
    settings = doc["settings"]
    head = (f"<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>medvqa audit</title>"
            f"<style>{_STYLE}</style></head><body><h1>Visual-reliance audit</h1>"
            f"<p>{len(models)} model(s); refusals {_e(settings['refusals'])}; {settings['resamples']} bootstrap "
            f"resamples, seed {settings['seed']}. Percentages; differences (Δimg, a − b, over-selection) in "
            f"percentage points.</p>"
            + "".join(f'<p class="note">{_e(note)}</p>' for note in doc.get("notes", []))
            + f'<p><label>Stratum: <select id="stratum-filter">{"".join(options)}</select></label> '
            f'showing <span id="filter-state">all</span></p>')
    return head + "\n".join(page.parts) + f"<script>{_SCRIPT}</script></body></html>\n"


def write_html(doc: dict, path: Path, svgs: dict[str, str] | None = None, view_href: str | None = None) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(render_html(doc, svgs, view_href=view_href), encoding="utf-8")
    return path
