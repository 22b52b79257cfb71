"""The one table renderer: number formats, and the LaTeX writer's escaping, alignment, percentages and
missing values."""

import pandas as pd
import pytest

from medvqa.core.render import latex_escape, render, to_latex


def test_special_characters_are_escaped():
    assert latex_escape(r"a_b & 50% $x$ #1 {y} ~^\ ") == (
        r"a\_b \& 50\% \$x\$ \#1 \{y\} \textasciitilde{}\textasciicircum{}\textbackslash{} "
    )


def test_table_with_caption_notes_and_a_missing_value():
    table = pd.DataFrame({"stratum": ["Other/Unclear", "n_a"], "n": [3, 4], "accuracy": [0.5, None]})
    assert to_latex(table, caption="Accuracy (C+Q)", notes=["Macro: 50%"]) == "\n".join(
        [
            r"\begin{table}[ht]",
            r"\centering",
            r"\caption{Accuracy (C+Q)}",
            r"\begin{tabular}{lrr}",
            r"\toprule",
            r"stratum & n & accuracy \% \\",
            r"\midrule",
            r"Other/Unclear & 3 & 50.0 \\",
            r"n\_a & 4 & -- \\",
            r"\bottomrule",
            r"\end{tabular}",
            r"\par\smallskip{\footnotesize Macro: 50\%}",
            r"\end{table}",
            "",
        ]
    )
    assert render(table, "latex") == to_latex(table)


def test_number_formats_are_one_set():
    from medvqa.core.render import fmt

    # percentage points: a difference of two fractions, times 100, signed
    assert [fmt(v, "pp") for v in (0.05, -0.123, 0.0, None)] == ["+5.0", "-12.3", "+0.0", "–"]
    assert [fmt(v, "pct") for v in (0.625, 1.0, float("nan"))] == ["62.5", "100.0", "–"]
    assert (fmt(0.0123456, "p"), fmt((0.1, 0.25), "ci"), fmt((-0.05, 0.1), "ci_pp")) == (
        "0.0123",
        "[10.0, 25.0]",
        "[-5.0, +10.0]",
    )


def test_the_audit_page_and_the_comparison_page_show_the_same_delta(tmp_path):
    """A replay right on every item with its image and wrong on one image item without it:
    5 image items pair (B1's file is absent, so it runs as C+Q only), Δimg = 1/5 = 0.2, shown as
    +20.0 points on both pages."""
    import html as html_lib
    import json
    import re

    import medvqa
    from medvqa.core.audit.html import render_html
    from medvqa.core.compare.comparison import compare_runs
    from medvqa.core.compare.page import page

    items = [it for it in medvqa.load("jmed48k", split="sample") if not it.excluded]
    label = {it.id: {o.key: o.label for o in it.options} for it in items}
    wrong = next(it for it in items if it.images and it.id != "Physician_2024_B_Q1")
    replay = tmp_path / "replay.jsonl"
    with replay.open("w", encoding="utf-8") as fh:
        for it in items:
            for cond in ("C+Q", "C+Q+I"):
                keys = it.gold.alternatives[0]
                if cond == "C+Q" and it is wrong:
                    keys = [next(o.key for o in it.options if (o.key,) not in it.gold.alternatives)]
                answer = [label[it.id].get(k, k) for k in keys]
                fh.write(
                    json.dumps({"item_id": it.id, "condition": cond, "response": json.dumps({"answer": answer})}) + "\n"
                )
    run_dir = tmp_path / "run"
    medvqa.run(
        "jmed48k",
        f"replay:{replay}",
        sample=True,
        conditions="C+Q,C+Q+I",
        run_dir=str(run_dir),
        cache=False,
        progress=False,
    )
    doc = medvqa.audit(run_dir, resamples=50)
    assert (doc["paired"]["overall"]["n"], doc["paired"]["overall"]["delta_img"]) == (5, pytest.approx(0.2))

    def shown(page_text: str, path: list) -> str:
        pattern = re.escape(html_lib.escape(json.dumps(path), quote=True)) + r'" data-format="pp">([^<]*)<'
        (value,) = re.findall(pattern, page_text)
        return value

    audit_page = render_html(doc, svgs={})
    comparison_page = page(compare_runs([run_dir], resamples=50).as_json())
    assert (
        shown(audit_page, ["paired", "overall", "delta_img"])
        == shown(comparison_page, ["delta_img", 0, "delta_img"])
        == "+20.0"
    )
