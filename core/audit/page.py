"""The building blocks of the audit's page (`html`): a number cell tagged with the JSON path of
its value in the document and its format (`Page.cell`), a table through the one renderer whose
every number is so tagged (`Page.table`), the row attributes the stratum filter reads
(`Page.row_attrs`), and the page's style sheet and filter script.
"""

from __future__ import annotations

import html
import json
from collections.abc import Callable
from typing import Any
from urllib.parse import urlencode

from ..render import FONT_STACK, fmt, to_html

_ABSENT = object()

# A table's row: its texts, the document path of its numbers, its strata for the filter ({field: [level]}).
TableRow = tuple[list[str], list, dict[str, list[str]]]


def value_at(doc: dict, path: list, absent: Any = None) -> Any:
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


class Page:
    """The page's body as it is written, part by part (`add`), with the strata its rows and
    examples hold, for the filter's choices (`filters`)."""

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
        text = html.escape(fmt(value_at(self.doc, path), kind)) if text is None else text
        if items is not None and self.view_href:
            text = f'<a class="view-link" href="{esc(self.view_href + "#" + urlencode(items))}">{text}</a>'
        return (
            f'<{tag} class="num" data-path="{esc(json.dumps(path, ensure_ascii=False))}" '
            f'data-format="{kind}">{text}</{tag}>'
        )

    def row_attrs(self, strata: dict[str, list[str]]) -> str:
        for name, values in strata.items():
            self.filters.setdefault(name, set()).update(values)
        keys = [f"{name}={v}" for name, values in strata.items() for v in values]
        return (
            f' data-fields="{esc(json.dumps(list(strata), ensure_ascii=False))}"'
            f' data-strata="{esc(json.dumps(keys, ensure_ascii=False))}"'
        )

    def table(
        self,
        texts: list[str],
        numbers: list[tuple[str, Any, str]],
        rows: list[TableRow],
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
        values = [[*labels, *(value_at(self.doc, [*path, *keys[h]]) for h in keys)] for labels, path, _ in rows]
        attrs = {tuple(labels): self.row_attrs(strata) if strata else "" for labels, _, strata in rows}

        def number(i: int, heading: str, text: str) -> str | None:
            if cell is not None and (custom := cell(i, heading)) is not None:
                return custom
            if heading not in keys:
                return None
            path = [*rows[i][1], *keys[heading]]
            if value_at(self.doc, path, _ABSENT) is _ABSENT:
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


def esc(text: Any) -> str:
    """`text` escaped for the page, as element text or a quoted attribute value."""
    return html.escape(str(text), quote=True)


STYLE = (  # the page's style sheet
    """
body{font-family:"""
    + FONT_STACK
    + """;margin:1.5em;max-width:1200px}
table{border-collapse:collapse;margin:.5em 0 1em}td,th{border:1px solid #ccc;padding:2px 6px}
td.num{text-align:right;font-variant-numeric:tabular-nums}.note{color:#a00}
.examples{display:flex;flex-wrap:wrap;gap:1em}.example{border:1px solid #ddd;padding:.5em;width:360px}
.example img{max-width:160px;margin:2px}pre{white-space:pre-wrap;background:#f6f6f6;padding:4px}
figure svg{max-width:100%;height:auto}
"""
)

# the stratum filter: hides the rows (`data-fields`, `data-strata`) of other levels of the chosen field
SCRIPT = """
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
