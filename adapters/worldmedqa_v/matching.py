"""VLMEvalKit's multiple-choice matching (`can_infer`, `vlmeval/utils/matching_util.py`), as the
WorldMedQA-V authors' own VLMEvalKit run applied it to their published accuracies:

1. A reply holding one of VLMEvalKit's refusal phrases ("Cannot determine the answer", ...) is
   a refusal (VLMEvalKit's option "Z").
2. Option letter: the reply with `.()[],:;!*#{}` turned into spaces and split at whitespace;
   when exactly one option letter is among the words and it is among the last words
   (`splits.index(ch) > len(splits) - 5`: at most three words after it, so among the last four;
   the rule is often called "the last five words"), that option. A bare "D" is read, and so are
   "The correct answer is: D" and "D. Tremor of polyneuropathy" (three words after it); "D is
   the right option" is not (four words after it, the letter the fifth word from the end).
3. Option text: when the reply is at most twice as long as the options' texts together and
   exactly one option's text (case ignored) occurs in it, that option.

Which rule: the study's own logs. The authors published every result table of their run
(shared data `worldmedqa-v-outputs/visuals/`, SOURCE.txt), and they record VLMEvalKit's
decision per row, so the rule is measured, not assumed:

- The 48 tables without an extractor column (the open models' blind tables) carry VLMEvalKit's
  `log`: "Match Log: <the reply>" where its matching read the reply, "Failed in Prefetch" where
  it did not. On their 6,816 rows the last-words rule agrees with the log on 6,770; the rule
  as `matching_util.py` reads at commit 134b4ea (`splits.index(ch) < len(splits) - 5`: the letter
  with at least five words after it) on 1,080: it leaves the 5,621 bare-letter replies unread
  that the logs show read. The 46 others the log shows read and this rule does not: a lone
  letter before the last four words, or an option's text in a longer reply; the matching of
  those runs read both (as commit 18fc37a's does: any lone letter, no length cap on rule 3,
  which agrees with all 6,816 logs).
- The 120 tables with an extractor column carry the option VLMEvalKit took (`extracted`): its
  matching's where matching read the reply, so a rule that reads another option there is not the
  run's. The last-words rule reads 9,258 replies and contradicts `extracted` on 22; 134b4ea's
  reads 3,491 and contradicts 108; 18fc37a's reads 12,950 and contradicts 145.

The last-words rule is the one both kinds of table bear out (68 rows against it in all,
against 145 for 18fc37a's and 5,844 for 134b4ea's), and with the published extractor's option
where it cannot read, 119 of the 120 tables with a published accuracy above 0 are reproduced
within 2 items (docs/benchmarks/worldmedqa_v.md). medvqa does not follow the rule as 134b4ea
writes it: whatever VLMEvalKit's history, it is not what the study's run applied, and it would
leave unread the very replies ("D") the study's logs read. History: medvqa followed 134b4ea at
first, chosen on the four GPT-4o Japan tables alone, where 134b4ea's rule contradicted the
published extraction once (japan-84), 18fc37a's five times and the last-words rule
twice (japan-254 English and japan-144 Japanese, with the image); the 168 tables, logs included,
overturned that choice. Under the last-words rule japan-84 agrees with the published
extraction (its "A" stands first in a long reply: no match, the extractor's option), japan-254
reads "A" as the published extraction does not (both are wrong: gold C) and japan-144 reads the
gold D where the published extractor named A (`matching-version` in the import).

The quantifier check: VLMEvalKit, run with `VERBOSE` set, takes a lone "A" among more than three
words for an article and sends the reply to its extractor model; it is off by default there and
here (`quantifier_check`). Where medvqa reads "A" and the published run took another option, the
import names the difference `quantifier-check`.

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

from collections.abc import Mapping

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
    """Rules 1 and 2: the one option letter among the reply's last four words (at most three
    words after it), "Z" for a refusal, else None. `quantifier_check` is VLMEvalKit's `VERBOSE` check:
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
        return found[0] if words.index(found[0]) > len(words) - 5 else None
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
