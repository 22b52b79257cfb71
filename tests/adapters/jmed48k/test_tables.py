"""The `--table jmed48k` tables: hand-built records with hand-derived expected text, and the
CLI on a real run of the bundled sample."""

import json

from click.testing import CliRunner

from medvqa.adapters.jmed48k.tables import jmed48k_tables
from medvqa.cli.report_cmd import command as report
from medvqa.core.run.options import RunOptions, run
from medvqa.tables import Tables


def rec(item_id, condition, correct, status="answered", profession="Physician", year=2024, image=None):
    """A record; `image` = (dominant_type, image_types) for image items."""
    r = {
        "item_id": item_id,
        "condition": condition,
        "correct": correct,
        "status": status,
        "profession": profession,
        "year": year,
        "has_image": image is not None,
    }
    if image:
        r["dominant_type"], r["image_types"] = image
    return r


RADIOLOGY = ("Radiology", ["Radiology"])
UNCLEAR = ("Other/Unclear", ["Other/Unclear"])
CHART = ("Chart/Graph/Table", ["Chart/Graph/Table", "Diagram"])
NO_TAXONOMY = ("unknown", ["unknown"])
NURSE = {"profession": "Nurse", "year": 2023}
RECORDS = [
    rec("t1", "C+Q", True),
    rec("t2", "C+Q", True),
    rec("t3", "C+Q", False, "refusal"),
    rec("t4", "C+Q", True),
    rec("n1", "C+Q", True, **NURSE),
    rec("n2", "C+Q", False, "parse_failure", **NURSE),
    rec("i1", "C+Q", False, image=RADIOLOGY),
    rec("i1", "C+Q+I", True, image=RADIOLOGY),
    rec("i2", "C+Q", True, image=UNCLEAR),  # no usable image: counted under C+Q
    rec("i3", "C+Q", True, image=CHART, **NURSE),
    rec("i3", "C+Q+I", False, "error", image=CHART, **NURSE),
    rec("i4", "C+Q", False, image=NO_TAXONOMY, **NURSE),
]
EXCLUDED = [{"item_id": "x1", "reason": "correct_answer is null", "profession": "Physician", "year": 2024}]
MACRO = (
    "Macro average: the unweighted mean of the accuracies above (its CI: MOVER from the rows' Wilson limits; "
    "rows: Wilson); its n and correct are sums."
)
# The macro rows' intervals, by hand (MOVER-Wilson, docs/audit.md "Statistics"; z² = 3.8415):
# text-only rows 3/4 and 1/2: [0.3006, 0.9872] and Wilson's [0.0945, 0.9055]; 3/4 is one failure from
#   n, so its upper limit is Brown, Cai & DasGupta's: 1 − (−ln 0.95)/4 = 1 − 0.0513/4 = 0.9872 (Wilson's
#   0.9544); 1 of 2 is near neither end; mean 0.625;
#   low 0.625 − √((0.75 − 0.3006)² + (0.5 − 0.0945)²)/2 = 0.625 − 0.6053/2 = 0.322,
#   high 0.625 + √((0.9872 − 0.75)² + (0.9055 − 0.5)²)/2 = 0.625 + 0.4698/2 = 0.860.
# with-images rows 2/2 and 0/2: Wilson [0.3424, 1] and [0, 0.6576]; mean 0.5;
#   0.5 ∓ √(0.6576² + 0)/2 = [0.171, 0.829].
# dominant type rows 1/1, 0/1, 0/1: Wilson [0.2065, 1], [0, 0.7935] twice; mean 1/3;
#   low 1/3 − 0.7935/3 = 0.069, high 1/3 + √(2·0.7935²)/3 = 0.707.
FALLBACK = "2 of 4 image items have no usable image in the data and are counted under C+Q (without their images)."


def tables():
    return {t.name: Tables([t]) for t in jmed48k_tables(RECORDS, EXCLUDED).tables}


def test_text_only_and_with_images_tables_in_markdown():
    t = tables()
    assert (
        t["text_only"].render("md")
        == f"""### Text-only items, C+Q: accuracy by profession

| profession | n | correct | accuracy % | CI low % | CI high % | ci_method | refusal | parse_failure | error | missing |
|---|---|---|---|---|---|---|---|---|---|---|
| Physician | 4 | 3 | 75.0 | 30.1 | 98.7 | wilson-score-bcd | 1 | 0 | 0 | 0 |
| Nurse | 2 | 1 | 50.0 | 9.5 | 90.5 | wilson-score-bcd | 0 | 1 | 0 | 0 |
| Macro average | 6 | 4 | 62.5 | 32.2 | 86.0 | mover-wilson | 1 | 1 | 0 | 0 |

{MACRO}
"""
    )
    assert (
        t["with_images"].render("md")
        == f"""### Image items, C+Q+I (C+Q without a usable image): accuracy by profession

| profession | n | correct | accuracy % | CI low % | CI high % | ci_method | refusal | parse_failure | error | missing | without_image |
|---|---|---|---|---|---|---|---|---|---|---|---|
| Physician | 2 | 2 | 100.0 | 34.2 | 100.0 | wilson-score-bcd | 0 | 0 | 0 | 0 | 1 |
| Nurse | 2 | 0 | 0.0 | 0.0 | 65.8 | wilson-score-bcd | 0 | 0 | 1 | 0 | 1 |
| Macro average | 4 | 2 | 50.0 | 17.1 | 82.9 | mover-wilson | 0 | 0 | 1 | 0 | 2 |

{FALLBACK}

{MACRO}
"""
    )


def test_image_type_tables_leave_out_other_unclear_and_keep_unknown():
    t = tables()
    dominant = t["dominant_type"].tables[0].frame.round({"ci_low": 3, "ci_high": 3})
    # Wilson for 1/1 and 0/1: [1/(1 + z²), 1] = [0.207, 1] and [0, z²/(1 + z²)] = [0, 0.793];
    # MOVER-Wilson for the macro row
    w, mw = "wilson-score-bcd", "mover-wilson"
    assert dominant.values.tolist() == [
        ["Radiology", 1, 1, 1.0, 0.207, 1.0, w, 0, 0, 0, 0, 0],
        ["Chart/Graph/Table", 1, 0, 0.0, 0.0, 0.793, w, 0, 0, 1, 0, 0],
        ["unknown", 1, 0, 0.0, 0.0, 0.793, w, 0, 0, 0, 0, 1],
        ["Macro average", 3, 1, 1 / 3, 0.069, 0.707, mw, 0, 0, 1, 0, 1],
    ]
    any_type = t["any_type"].tables[0].frame
    assert any_type["image_type"].tolist() == ["Radiology", "Chart/Graph/Table", "Diagram", "unknown", "Macro average"]
    assert any_type["n"].tolist() == [1, 1, 1, 1, 4] and any_type["accuracy"].iloc[-1] == 0.25


def test_with_images_and_exclusions_tables_in_latex():
    t = tables()
    assert (
        t["with_images"].render("latex")
        == rf"""\begin{{table}}[ht]
\centering
\caption{{Image items, C+Q+I (C+Q without a usable image): accuracy by profession}}
\begin{{tabular}}{{lrrrrrlrrrrr}}
\toprule
profession & n & correct & accuracy \% & CI low \% & CI high \% & ci\_method & refusal & parse\_failure & error & missing & without\_image \\
\midrule
Physician & 2 & 2 & 100.0 & 34.2 & 100.0 & wilson-score-bcd & 0 & 0 & 0 & 0 & 1 \\
Nurse & 2 & 0 & 0.0 & 0.0 & 65.8 & wilson-score-bcd & 0 & 0 & 1 & 0 & 1 \\
Macro average & 4 & 2 & 50.0 & 17.1 & 82.9 & mover-wilson & 0 & 0 & 1 & 0 & 2 \\
\bottomrule
\end{{tabular}}
\par\smallskip{{\footnotesize {FALLBACK}}}
\par\smallskip{{\footnotesize {MACRO}}}
\end{{table}}
"""
    )
    assert (
        t["exclusions"].render("latex")
        == r"""\begin{table}[ht]
\centering
\caption{Items per profession-year: excluded (null correct\_answer) and scored}
\begin{tabular}{llrrrrr}
\toprule
profession & year & items & excluded & scored & text\_only & with\_images \\
\midrule
Physician & 2024 & 7 & 1 & 6 & 4 & 2 \\
Nurse & 2023 & 4 & 0 & 4 & 2 & 2 \\
Total &  & 11 & 1 & 10 & 6 & 4 \\
\bottomrule
\end{tabular}
\end{table}
"""
    )


def test_csv_and_json_carry_the_same_rows_and_notes():
    t = tables()
    lines = t["text_only"].render("csv").splitlines()
    assert lines[:2] == [
        "# Text-only items, C+Q: accuracy by profession",
        "profession,n,correct,accuracy,ci_low,ci_high,ci_method,refusal,parse_failure,error,missing",
    ]
    rows = [line.split(",") for line in lines[2:5]]
    assert [r[:4] + r[6:] for r in rows] == [
        ["Physician", "4", "3", "0.75", "wilson-score-bcd", "1", "0", "0", "0"],
        ["Nurse", "2", "1", "0.5", "wilson-score-bcd", "0", "1", "0", "0"],
        ["Macro average", "6", "4", "0.625", "mover-wilson", "1", "1", "0", "0"],
    ]
    assert [[round(float(x), 3) for x in r[4:6]] for r in rows] == [[0.301, 0.987], [0.095, 0.905], [0.322, 0.86]]
    assert lines[5:] == [f"# {MACRO}"]
    doc = json.loads(jmed48k_tables(RECORDS, EXCLUDED).render("json"))
    assert list(doc) == ["text_only", "with_images", "dominant_type", "any_type", "exclusions"]
    assert doc["with_images"]["notes"] == [FALLBACK, MACRO]
    assert doc["exclusions"]["rows"][-1] == {
        "profession": "Total",
        "year": "",
        "items": 11,
        "excluded": 1,
        "scored": 10,
        "text_only": 6,
        "with_images": 4,
    }


def test_cli_tables_and_pass_on_a_run_of_the_bundled_sample(tmp_path):
    run(RunOptions(benchmark="jmed48k", model="constant:A", sample=True, run_dir=str(tmp_path / "r")), progress=False)
    runner = CliRunner()
    doc = json.loads(runner.invoke(report, [str(tmp_path / "r"), "--table", "jmed48k", "--json"]).output)
    # bundled sample: Physician 2024 has 13 items (A7 has a null answer; A3, A4, B1, B2, B3 reference
    # images, B1's file is absent) and Nurse 2023 has 5 (AM3 references an image)
    assert doc["exclusions"]["rows"][:2] == [
        {
            "profession": "Physician",
            "year": 2024,
            "items": 13,
            "excluded": 1,
            "scored": 12,
            "text_only": 7,
            "with_images": 5,
        },
        {"profession": "Nurse", "year": 2023, "items": 5, "excluded": 0, "scored": 5, "text_only": 4, "with_images": 1},
    ]
    assert doc["with_images"]["notes"][0] == (
        "1 of 6 image items have no usable image in the data and are counted under C+Q (without their images)."
    )
    latex = runner.invoke(report, [str(tmp_path / "r"), "--table", "jmed48k", "--format", "latex"])
    assert latex.exit_code == 0 and latex.output.count(r"\begin{table}") == 5
    passed = json.loads(runner.invoke(report, [str(tmp_path / "r"), "--pass", "--json"]).output)
    assert [(r["exam"], r["status"]) for r in passed["rows"] if r["criterion"] == "overall"] == [
        ("Physician 2024", "not evaluable"),
        ("Nurse 2023", "not evaluable"),
    ]  # a few items, not whole exams
    hisshu = next(r for r in passed["rows"] if r["criterion"] == "hisshu")
    assert (hisshu["exam"], hisshu["maximum"], hisshu["required"], hisshu["status"]) == (
        "Physician 2024",
        6,
        160,
        "not evaluable",
    )


def test_a_macro_average_of_one_row_is_that_row_with_its_own_interval():
    # 124 right of 599 in the one row: the macro row is the row, with the row's Wilson interval
    # [0.17648, 0.24128] (under Clopper-Pearson rows the macro once gave MOVER-Wilson's beside the
    # row's [0.17524, 0.24170])
    from medvqa.adapters.jmed48k.tables import accuracy_frame

    records = [
        {"item_id": f"q{i}", "condition": "C+Q", "correct": i < 124, "status": "answered", "profession": "Physician"}
        for i in range(599)
    ]
    frame = accuracy_frame(records, "profession", lambda r: [r["profession"]])
    row, macro = frame.iloc[0], frame.iloc[-1]
    assert (macro["ci_low"], macro["ci_high"], macro["ci_method"]) == (
        row["ci_low"],
        row["ci_high"],
        "wilson-score-bcd",
    )
    assert (round(macro["ci_low"], 5), round(macro["ci_high"], 5)) == (0.17648, 0.24128)
