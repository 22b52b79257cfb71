"""The one table renderer: number formats, and the LaTeX writer's escaping, alignment, percentages and
missing values."""

import pandas as pd

from medvqa.core.render import latex_escape, render, to_latex


def test_special_characters_are_escaped():
    assert latex_escape(r"a_b & 50% $x$ #1 {y} ~^\ ") == (
        r"a\_b \& 50\% \$x\$ \#1 \{y\} \textasciitilde{}\textasciicircum{}\textbackslash{} ")


def test_table_with_caption_notes_and_a_missing_value():
    table = pd.DataFrame({"stratum": ["Other/Unclear", "n_a"], "n": [3, 4], "accuracy": [0.5, None]})
    assert to_latex(table, caption="Accuracy (C+Q)", notes=["Macro: 50%"]) == "\n".join([
        r"\begin{table}[ht]", r"\centering", r"\caption{Accuracy (C+Q)}", r"\begin{tabular}{lrr}", r"\toprule",
        r"stratum & n & accuracy \% \\", r"\midrule", r"Other/Unclear & 3 & 50.0 \\", r"n\_a & 4 & -- \\",
        r"\bottomrule", r"\end{tabular}", r"\par\smallskip{\footnotesize Macro: 50\%}", r"\end{table}", ""])
    assert render(table, "latex") == to_latex(table)
