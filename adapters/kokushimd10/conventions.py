"""The scoring conventions the three benchmarks offer (`--convention`):

- `mhlw` (the default): MHLW's published handling. Officially accepted alternatives (複数正解,
  `a or d`) each count; an item scored correct for every examinee (全員正解, IgakuQA 116A71) is
  correct whatever the answer; items taken out of scoring (採点除外, `points: "0"`) keep their
  records but score no points and leave the maxima (see `passing.py`).
- `igakuqa`: exactly IgakuQA's `scripts/evaluate_main.py`: the saved prediction split at commas
  without stripping spaces (`"b, e"` is not `["b", "e"]`), sorted, compared with the sorted
  answer list as written; 116A71 always correct; 112B30 correct for `a` or `d`.
- `kokushimd10`: exactly KokushiMD-10's `calculate_scores.py`: prediction and answer both
  stripped of every character but ASCII letters and digits, sorted, upper-cased and cut to six
  characters; correct iff equal and the answer is not empty.

A live reply (a model asked by `medvqa run`) is read by the answer chain first; the two script
conventions then judge the keys it read, written as the script's prediction string (`"b,e"`,
`"BE"`). Saved predictions (records with `"saved": true`, written by `medvqa import`) are
judged on their text exactly as the scripts read it.
"""

from __future__ import annotations

import re

from medvqa import AnswerConventions, Item, Score

MHLW, IGAKUQA, KOKUSHIMD10 = "mhlw", "igakuqa", "kokushimd10"
DEPARTURES = {
    IGAKUQA: (
        "convention igakuqa departs from MHLW: correctness as IgakuQA's evaluate_main.py (comma-split "
        "predictions, spaces kept; 116A71 always correct; 112B30 a or d); the MHLW lines applied to it"
    ),
    KOKUSHIMD10: (
        "convention kokushimd10 departs from MHLW: correctness, points, lines and the 禁忌肢 rule as "
        "KokushiMD-10's calculate_scores.py (hard-coded lines; withdrawn items not taken out of the "
        "maxima; more than 3 禁忌肢 answers fail whatever the year's limit)"
    ),
}


def script_normal_form(answer: str) -> str:
    """KokushiMD-10's `normalize_answer`: ASCII letters and digits only, sorted, upper-cased,
    at most six characters."""
    return "".join(sorted(re.sub(r"[^a-zA-Z0-9]", "", answer))).upper()[:6]


def raw_answer_text(item: Item) -> str:
    raw = item.meta.get("answer_raw")
    return "".join(map(str, raw)) if isinstance(raw, list) else str(raw or "")


def _mhlw(item: Item, text: str, chain: Score, saved: bool) -> Score:
    if item.meta.get("credited_to_all"):
        return Score(True, chain.status, chain.predicted, chain.rule)
    return chain


def igakuqa_prediction(item: Item, text: str, chain: Score, saved: bool) -> str:
    """The prediction string IgakuQA's script would read."""
    if saved:
        return text
    return ",".join(k.lower() for k in chain.predicted or ())


def _igakuqa(item: Item, text: str, chain: Score, saved: bool) -> Score:
    if not saved and item.answer_format == "numeric":  # a number read from a reply: the chain's comparison
        return chain
    prediction = sorted(igakuqa_prediction(item, text, chain, saved).split(","))
    raw = item.meta.get("answer_raw")
    gold = sorted(raw) if isinstance(raw, list) else [str(raw)]
    correct = item.id == "116A71" or (item.id == "112B30" and prediction in (["a"], ["d"])) or prediction == gold
    return Score(correct, chain.status, chain.predicted, chain.rule)


def kokushimd10_prediction(item: Item, text: str, chain: Score, saved: bool) -> str:
    return text if saved else "".join(chain.predicted or ())


def _kokushimd10(item: Item, text: str, chain: Score, saved: bool) -> Score:
    gold = script_normal_form(raw_answer_text(item))
    correct = gold != "" and script_normal_form(kokushimd10_prediction(item, text, chain, saved)) == gold
    return Score(correct, chain.status, chain.predicted, chain.rule)


SCORERS = {MHLW: _mhlw, IGAKUQA: _igakuqa, KOKUSHIMD10: _kokushimd10}


def answer_conventions(convention: str | None) -> AnswerConventions:
    """Saved predictions join labels ("a,c", "AC"); the convention has the last word."""
    return AnswerConventions(saved_label_sets=True, final_score=SCORERS[convention or MHLW])
