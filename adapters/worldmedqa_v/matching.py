"""VLMEvalKit's multiple-choice matching, the convention WorldMedQA-V's published accuracies
were scored under (open-compass/VLMEvalKit, `vlmeval/utils/matching_util.py` at commit
134b4ea, `can_infer`):

1. A reply holding one of VLMEvalKit's refusal phrases ("Cannot determine the answer", ...) is
   a refusal (VLMEvalKit's option "Z").
2. Option letter: the reply with `.()[],:;!*#{}` turned into spaces and split at whitespace;
   when exactly one option letter is among the words and at least five words follow it
   (`splits.index(ch) < len(splits) - 5`), that option.
3. Option text: when the reply is at most twice as long as the options' texts together and
   exactly one option's text (case ignored) occurs in it, that option.

The rule has changed over VLMEvalKit's history: at commit 18fc37a any lone letter counts (no
position test, no length cap on rule 3), and copies elsewhere require the letter among the last
five words. On the authors' published Japan tables the rule as written at 134b4ea agrees with the
published extraction on every item it matches but one; 18fc37a's contradicts it on five
(japan-84 and japan-254 English with the image, japan-144 and japan-197 local with the image,
japan-204 local without), the last-five-words variant on two (japan-254, japan-144): medvqa
follows 134b4ea. The one item, japan-84 (English, with the image), reads "A" here, the published
extraction says B: VLMEvalKit, run with `VERBOSE` set, takes a lone "A" among more than three
words for an article and sends the reply to its extractor model; that check is off by default
there and here (`quantifier_check`).

Two conventions:

- `vlmevalkit` (the default of `medvqa run`): where matching fails, VLMEvalKit asks an extractor
  model (the published results used gpt-4o-mini) to name the option. No model is called at
  scoring: medvqa's own answer chain reads the reply instead (an answer in the requested JSON,
  "the answer is D", a label standing alone, ...), and what it cannot read stays a parse failure.
- `vlmevalkit-exact` (the default of `medvqa import worldmedqa_v`): VLMEvalKit's exact matching
  alone; a reply it cannot match is a parse failure, exactly the replies VLMEvalKit sent to its
  extractor model. Imported from a result table, those records keep the published extractor's
  option as their assisted reading (`Record.assisted`), so the strict accuracy is VLMEvalKit's
  exact matching and the assisted one its published accuracy.

In both, a live reply in the JSON format medvqa asks for (`{"answer": ["D"]}`) is read as JSON
first: VLMEvalKit's word split keeps the quotes around the letter and would miss it.
"""

from __future__ import annotations

from typing import Mapping

from medvqa import Item, Score

VLMEVALKIT = "vlmevalkit"
VLMEVALKIT_EXACT = "vlmevalkit-exact"  # matching alone: no fallback to medvqa's chain
REFUSAL_PHRASES = (
    "Sorry, I can't help with images of people yet.",
    "I can't process this file.",
    "I'm sorry, but without the image provided",
    "Cannot determine the answer",
)
_SEPARATORS = str.maketrans({c: " " for c in ".()[],:;!*#{}"})
REFUSED = "Z"


def match_option(reply: str, choices: Mapping[str, str], quantifier_check: bool = False) -> str | None:
    """Rules 1 and 2: the one option letter among the reply's words (at least five words before
    the end), "Z" for a refusal, else None. `quantifier_check` is VLMEvalKit's `VERBOSE` check:
    no match when "A" is among more than three words."""
    if "Failed to obtain answer via API" in reply:
        return None
    if any(phrase in reply for phrase in REFUSAL_PHRASES):
        return REFUSED
    words = reply.translate(_SEPARATORS).split()
    found = [letter for letter in choices if letter in words]
    if len(found) == 1:
        if quantifier_check and "A" in words and len(words) > 3:
            return None
        return found[0] if words.index(found[0]) < len(words) - 5 else None
    if not found and sum(w in words for w in ("Z", "")) == 1:
        return REFUSED
    return None


def match_text(reply: str, choices: Mapping[str, str]) -> str | None:
    """Rule 3: the one option whose text occurs in a short reply, else None."""
    text = reply.lower()
    if len(text) > 2 * sum(len(str(v)) for v in choices.values()):
        return None
    found = [k for k, v in choices.items() if str(v).lower() in text]
    return found[0] if len(found) == 1 else None


def can_infer(reply: str, choices: Mapping[str, str]) -> str | None:
    """VLMEvalKit's `can_infer`: an option letter, "Z" (refused), or None (no match)."""
    return match_option(reply, choices) or match_text(reply, choices)


def exact_score(item: Item, text: str, chain: Score, saved: bool) -> Score:
    """An answer read by VLMEvalKit's matching alone (JSON first); what it cannot match is a parse
    failure, whatever medvqa's chain would read (`vlmevalkit-exact`)."""
    read = vlmevalkit_score(item, text, chain, saved)
    if read is chain and chain.rule != "json" and chain.status in ("answered", "refusal"):
        return Score(False, "parse_failure", None, None)
    return read


def vlmevalkit_score(item: Item, text: str, chain: Score, saved: bool) -> Score:
    """An answer read by VLMEvalKit's matching, else by medvqa's chain (see the module)."""
    if chain.rule == "json":
        return chain
    choices = {o.key: o.text for o in item.options}
    letter = match_option(text, choices)
    rule = "vlmevalkit-option"
    if letter is None:
        letter, rule = match_text(text, choices), "vlmevalkit-text"
    if letter == REFUSED:
        return Score(False, "refusal", None, "vlmevalkit-refusal")
    if letter is None:
        return chain
    correct = item.gold is not None and (letter,) in item.gold.alternatives
    return Score(correct, "answered", (letter,), rule)
