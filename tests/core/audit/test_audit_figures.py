import warnings

from medvqa.core.audit.figures import japanese_font_path, save_figures


def paired_row(n: int, p10: float) -> dict:
    return {
        "n": n,
        "p11": 0.5,
        "p10": p10,
        "p01": 0.1,
        "p00": 0.4 - p10,
        "delta_img": p10 - 0.1,
        "ci": [p10 - 0.2, p10],
    }


def test_japanese_labels_render_with_the_bundled_font(tmp_path):
    assert japanese_font_path() is not None and japanese_font_path().stat().st_size > 1_000_000
    doc = {
        "model": "random",
        "settings": {"by": ["section"]},
        "paired": {
            "overall": paired_row(10, 0.2),
            "by": {"section": {"必修問題": paired_row(4, 0.25), "一般臨床問題": paired_row(6, 0.15)}},
        },
    }
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        written = save_figures(doc, tmp_path)
    missing = [str(w.message) for w in caught if "missing from font" in str(w.message)]
    assert missing == []
    assert len(written) == 10 and "IPAexGothic" in (tmp_path / "states_by_section.svg").read_text(encoding="utf-8")
