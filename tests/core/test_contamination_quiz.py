"""The Data Contamination Quiz made and taken over real HTTP, against the local OpenAI-compatible
server: a generator that paraphrases deterministically, and examinees whose answers give levels
worked out by hand with the authors' formula (src/helpers/option_counter.py of
github.com/shahriargolchin/DCQ: non-preferred below ceil(n/5) BDQ picks; upper = best BCQ's
correct share; lower = max(kappa, second best), kappa = (best - BDQ at it) / (n - BDQ at it))."""

from __future__ import annotations

import functools
import json
import re

import pytest
from click.testing import CliRunner

from medvqa.cli.contamination_cmd import command
from medvqa.core import dcq
from medvqa.core.contamination import quiz as quizzes
from medvqa.core.contamination.checks import check_variant
from medvqa.core.items import DataError
from tests.conftest import shared_data
from tests.openai_server import OpenAIServer

# Ten IgakuQA questions of 2018, block 112A (numbers 1-10); the generator spoils one of them.
SELECT = ["--select", "block=112A", "--limit", "10"]
MARKS = ("甲", "乙", "丙", "丁")  # a deterministic paraphrase: a mark before the question
SPOILT = "112A3"


@functools.cache
def originals() -> dict[str, str]:
    import medvqa

    items = medvqa.load("igakuqa", shared_data("igakuqa"), select={"block": ["112A"]})
    return {i.id: i.question.strip() for i in items[:10]}


def generator(text: str) -> str | None:
    """A paraphraser: four variants, each the question with its own mark in front. The question
    of SPOILT gets a variant whose number differs (a rejected variant) every time."""
    found = re.search(r"INPUT TEXT:\n(.*)\n---\nFORMAT:", text, re.S)
    if found is None:
        return None
    original = found.group(1)
    variants = [f"{mark}：{original}" for mark in MARKS]
    if original == originals()[SPOILT]:
        variants[2] = "99 " + variants[2]
    return "\n\n".join(f"{letter})\n{v}" for letter, v in zip("ABCD", variants, strict=True))


def options(text: str) -> list[str]:
    """The options A-D of a quiz prompt."""
    body = text.split("---\n", 1)[1]
    return [m.strip() for m in re.split(r"^[A-E]\)\n", body, flags=re.M)[1:5]]


def memoriser(text: str) -> str | None:
    """Picks the option that is an exam question verbatim; E when none is."""
    if "five-choice quiz" not in text:
        return generator(text)
    known = set(originals().values())
    return next((letter for letter, o in zip("ABCD", options(text), strict=True) if o in known), "E")


# A fair examinee with a position bias: it never recognises the original, and answers by the
# question alone, whatever order the options are in: the first five A, then B, B, C, E, E.
BIASED = dict(zip(sorted(originals(), key=lambda i: int(i[4:])), "AAAAABBCEE", strict=True))


def biased(text: str) -> str | None:
    if "five-choice quiz" not in text:
        return generator(text)
    mine = {o[2:] if o[:1] in MARKS else o for o in options(text)}
    (item,) = [i for i, q in originals().items() if q in mine]
    return BIASED[item]


def contamination(tmp_path, server, model: str, *more: str) -> dict:
    args = [
        "igakuqa",
        "--data",
        str(shared_data("igakuqa")),
        *SELECT,
        "--quiz",
        str(tmp_path / "quiz.json"),
        "--quiz-model",
        "hosted_vllm/generator",
        "--quiz-api-base",
        server.url,
        "--model",
        model,
        "--api-base",
        server.url,
        "--json",
        *more,
    ]
    result = CliRunner().invoke(command, args)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_a_model_that_memorised_the_exam_scores_100_percent_at_both_bounds(tmp_path):
    with OpenAIServer(reply=memoriser) as server:
        doc = contamination(tmp_path, server, "hosted_vllm/memoriser", "--answers", str(tmp_path / "answers.csv"))
    quiz = doc["quiz"]
    # SPOILT's third variant adds the number 99: rejected each time, asked 3 times, then dropped
    assert quiz["created"] and quiz["n_items"] == 9 and quiz["n_dropped"] == 1
    (drop,) = quiz["dropped"]
    assert drop["item_id"] == SPOILT and drop["reason"] == "3 acceptable variants of 4 after 3 replies"
    assert drop["rejected"][0]["reason"].startswith("changes the numbers (none in the original, 99 here)")
    assert quiz["requested"] == 9 + 3 and quiz["generator"]["prompt_hash"] == quizzes.GENERATOR_PROMPT_HASH
    # n = 9: the BDQ shows only paraphrases, so the memoriser answers E to each: A-D 0 < ceil(9/5)
    # = 2, all four non-preferred; each BCQ: the original picked 9 of 9. Best A (the first of a
    # four-way tie at 9, BDQ 0 each): upper 9/9 = 1; kappa = (9 - 0) / (9 - 0) = 1; lower 1
    ex = doc["examinations"]["hosted_vllm/memoriser"]
    o = ex["overall"]
    assert o["n"] == 9 and o["bdq"]["counts"] == {"A": 0, "B": 0, "C": 0, "D": 0, "E": 9}
    assert o["non_preferred"] == ["A", "B", "C", "D"] and o["level"] == {"lower": 1.0, "upper": 1.0}
    assert ex["requested"] == 9 * 5 and ex["errors"] == 0
    assert set(ex["by"]) == {"year", "block"} and ex["by"]["year"]["2018"]["level"] == {"lower": 1.0, "upper": 1.0}
    # the answers written in the authors' layout read back to the same level, by the same function
    again = CliRunner().invoke(command, ["--dcq-results", str(tmp_path / "answers.csv"), "--json"])
    assert json.loads(again.stdout)["dcq"]["level"] == o["level"]


def test_a_fair_examinee_with_a_position_bias_gets_a_lower_bound_of_zero_and_an_upper_of_its_bias(tmp_path):
    with OpenAIServer(reply=biased) as server:
        doc = contamination(tmp_path, server, "hosted_vllm/biased")
    o = doc["examinations"]["hosted_vllm/biased"]["overall"]
    # The 9 items kept (112A3, an A, dropped): A A A A B B C E E in every quiz, whatever the order.
    # BDQ: A 4, B 2, C 1, D 0, E 2; chance ceil(9/5) = 2: C (1) and D (0) are non-preferred, B (2)
    # is not. BCQ C: the one C-answering item picks C, 1 of 9 right; BCQ D: 0 of 9. Best C:
    # upper = 1/9 = 11.11 %, a hit of the bias, not of memory; kappa = (1 - 1) / (9 - 1) = 0;
    # second best (D) 0/9, so lower = max(0, 0) = 0: [0.00 %, 11.11 %]
    assert o["bdq"]["counts"] == {"A": 4, "B": 2, "C": 1, "D": 0, "E": 2}
    assert o["non_preferred"] == ["C", "D"] and o["best"] == "C"
    assert (o["kappa"], o["second"]) == (0.0, 0.0)
    assert o["level"] == {"lower": 0.0, "upper": pytest.approx(1 / 9)}
    assert o["printed"] == "Detected Contamination Level: [0.00%, 11.11%]"


def test_the_quiz_is_reused_across_examined_models_without_asking_the_generator(tmp_path):
    with OpenAIServer(reply=biased) as server:
        contamination(tmp_path, server, "hosted_vllm/biased")
        asked = sum(server.counts.values())
        doc = contamination(tmp_path, server, "hosted_vllm/memoriser-2")
        # only the new examinee's 9 x 5 quizzes went out, after its preflight request: the quiz was
        # read, not written
        assert not doc["quiz"]["created"] and sum(server.counts.values()) == asked + 1 + 45
        again = contamination(tmp_path, server, "hosted_vllm/biased")
        assert sum(server.counts.values()) == asked + 1 + 45  # the response cache answers a repeat
    assert again["examinations"]["hosted_vllm/biased"]["cache_hits"] == 45


@pytest.mark.parametrize(
    ("variant", "reason"),
    [
        ("高アンモニア血症をきたす疾患はどれか。", "identical to the original"),
        ("  高アンモニア血症を きたす疾患はどれか。", None),
        ("", "empty"),
        ("高アンモニア血症を起こす疾患は２つ選べ。", "changes the numbers (none in the original, 2 here)"),
    ],
)
def test_variants_are_checked(variant, reason):
    got = check_variant("高アンモニア血症をきたす疾患はどれか。", variant)
    assert got == reason if reason is None or reason == "empty" else got.startswith(reason)


def test_drug_names_and_sides_must_survive_the_paraphrase():
    original = "A 54-year-old man on lisinopril has pain in the left knee."
    assert check_variant(original, "A 54-year-old male on lisinopril has ache in the left knee.") is None
    assert check_variant(original, "A 54-year-old male on enalapril has ache in the left knee.").startswith(
        "changes a drug name (lisinopril in the original, enalapril here)"
    )
    assert check_variant(original, "A 54-year-old male on lisinopril has ache in the right knee.") == (
        "changes the side of the body (left, right, both)"
    )
    assert check_variant(original, "A 45-year-old male on lisinopril has ache in the left knee.").startswith(
        "changes the numbers"
    )


def test_a_hand_edited_quiz_that_breaks_a_rule_is_refused_naming_the_item(tmp_path):
    with OpenAIServer(reply=memoriser) as server:
        contamination(tmp_path, server, "hosted_vllm/memoriser")
    path = tmp_path / "quiz.json"
    doc = json.loads(path.read_text(encoding="utf-8"))
    doc["items"][1]["variants"][3] = doc["items"][1]["instance"]
    path.write_text(json.dumps(doc, ensure_ascii=False), encoding="utf-8")
    with pytest.raises(
        DataError,
        match=rf"{re.escape(str(path))}: record item 2 \(112A2\): variant D is rejected: "
        "identical to the original",
    ):
        quizzes.read_quiz(path)


def test_the_quiz_prompt_is_the_authors_word_for_word():
    # src/prompts/quiz_question.py: the five options, E "None of the provided options.", ANSWER:
    text = quizzes.quiz_messages(["w", "x", "y", "z"], dataset="igakuqa", split="full")[0]["content"]
    assert text.startswith(
        "You are provided with a five-choice quiz. Your task is to CORRECTLY select the option "
        "that EXACTLY corresponds to an instance from the full split of the igakuqa dataset."
    )
    assert text.endswith("D)\nz\n\nE)\nNone of the provided options.\n---\nANSWER:\n")
    assert quizzes.parse_variants("A)\nw\n\nB)\nx\n\nC)\ny\n\nD)\nz\n") == ["w", "x", "y", "z"]
    assert dcq.POSITIONS == ("a", "b", "c", "d")


def test_a_dry_run_counts_the_requests_and_prices_them_without_sending_or_writing(tmp_path):
    quiz = tmp_path / "quiz.json"
    common = ["igakuqa", "--data", str(shared_data("igakuqa")), *SELECT, "--quiz", str(quiz), "--dry-run", "--json"]
    with OpenAIServer(reply=memoriser) as server:
        args = [*common, "--quiz-model", "openai/gpt-4o", "--model", "openai/gpt-4o-mini", "--model", "hosted_vllm/m"]
        result = CliRunner().invoke(command, [*args, "--api-base", server.url])
        assert result.exit_code == 0, result.output
        assert sum(server.counts.values()) == 0 and not quiz.exists()  # nothing sent, nothing written
    plan = json.loads(result.stdout)
    # 10 items: 10 generator requests; each examinee 10 x 5 quizzes (BDQ and four BCQs)
    assert plan["n_items"] == 10 and plan["generator"]["requests"] == 10
    mini, local = plan["examinations"]["openai/gpt-4o-mini"], plan["examinations"]["hosted_vllm/m"]
    assert mini["requests"] == local["requests"] == 50 and mini["cached"] == 0
    # litellm's prices: gpt-4o-mini has one, a local model none; one output token a quiz (max_tokens 1)
    assert mini["cost_usd"] > 0 and mini["tokens"]["output_max"] == 50 and local["cost_usd"] is None
    assert plan["generator"]["cost_usd"] > mini["cost_usd"]  # 4,000 tokens a reply at most, gpt-4o's price


def test_slot_guessing_rates_by_hand_over_real_http(tmp_path):
    import medvqa
    from medvqa.core import stats
    from medvqa.core.contamination.slots import masked_option

    items = {i.id: i for i in medvqa.load("igakuqa", shared_data("igakuqa"), select={"block": ["112A"]})[:10]}

    def slot_model(text: str) -> str | None:
        """Restores the masked option of 112A1-5 exactly, of 112A6-8 with a full stop added (a
        normalised match only), and does not know the rest."""
        found = [i for i in items.values() if f"Question: {i.question.strip()}\n" in text]
        if not found:  # the backend's preflight request
            return None
        item = found[0]
        number = int(item.id[4:])
        truth = item.options[masked_option(item)].text
        return truth if number <= 5 else truth + "。" if number <= 8 else "わからない"

    with OpenAIServer(reply=slot_model) as server:
        args = ["igakuqa", "--data", str(shared_data("igakuqa")), *SELECT, "--slots", "--json"]
        result = CliRunner().invoke(command, [*args, "--model", "hosted_vllm/slots", "--api-base", server.url])
    assert result.exit_code == 0, result.output
    g = json.loads(result.stdout)["slot_guessing"]["hosted_vllm/slots"]
    # 10 single-answer questions of five options, all asked: exact 5/10; normalised 8/10 (the
    # full stop is punctuation); each with Wilson's interval (boundary-corrected) of k of 10
    assert (g["n"], g["skipped"], g["exact"]["matches"], g["normalised"]["matches"]) == (10, 0, 5, 8)
    assert g["exact"]["ci"] == list(stats.binomial_ci(5, 10)) and g["normalised"]["rate"] == 0.8
    assert g["guesses"]["112A6"]["exact"] is False and g["guesses"]["112A6"]["normalised"] is True


def test_the_masked_option_is_a_wrong_one_the_same_each_time():
    import medvqa
    from medvqa.core.contamination.slots import masked_option, read_reply

    items = medvqa.load("igakuqa", shared_data("igakuqa"), select={"block": ["112A"]})
    for item in items:
        m = masked_option(item)
        if len(item.gold.keys) != 1:  # "choose two": not asked
            assert m is None
        else:
            assert item.options[m].key not in item.gold.keys and m == masked_option(item)
    assert any(masked_option(i) is None for i in items)
    # the reading of LLMSanitize's process_response: after "C:", the first sentence
    assert read_reply("C: Hurler syndrome. It is a storage disease.", "C") == "Hurler syndrome."
    assert read_reply("[Hurler症候群]", "C") == "Hurler症候群"


def test_a_quiz_whose_generator_fails_is_not_written_and_the_next_command_completes_it(tmp_path):
    broken = {"on": True}

    def flaky(text: str) -> str | None:
        # the question of 112A5 fails (a 500: the handler raises) while `broken` is on
        if broken["on"] and f"INPUT TEXT:\n{originals()['112A5']}\n" in text:
            raise RuntimeError("the generator's server fails")
        return memoriser(text)

    quiz = tmp_path / "quiz.json"
    args = ["igakuqa", "--data", str(shared_data("igakuqa")), *SELECT, "--quiz", str(quiz)]
    with OpenAIServer(reply=flaky) as server:
        more = ["--quiz-model", "hosted_vllm/generator", "--quiz-api-base", server.url]
        result = CliRunner().invoke(command, [*args, *more, "--quiz-option", "max_retries=0"])
        assert result.exit_code == 1 and not quiz.exists()
        assert "1 of 10 quiz requests to hosted_vllm/generator failed" in result.output
        asked = sum(server.counts.values())
        broken["on"] = False
        result = CliRunner().invoke(command, [*args, *more, "--json"])
        assert result.exit_code == 0, result.output
        # the nine replies came from the cache: only 112A5 (and the spoilt 112A3's re-asks, whose
        # rejected replies are never cached: 3 more) went out again, after one preflight
        assert sum(server.counts.values()) == asked + 1 + 1 + 3
    doc = json.loads(result.stdout)["quiz"]
    assert doc["created"] and doc["n_items"] == 9 and quiz.exists()


def test_a_stratum_the_quiz_does_not_hold_is_refused_before_anything_is_asked(tmp_path):
    with OpenAIServer(reply=memoriser) as server:
        contamination(tmp_path, server, "hosted_vllm/memoriser")
        asked = sum(server.counts.values())
        args = ["igakuqa", "--quiz", str(tmp_path / "quiz.json"), "--model", "hosted_vllm/other"]
        result = CliRunner().invoke(command, [*args, "--api-base", server.url, "--by", "organ"])
        assert result.exit_code == 2 and "the quiz's items hold the strata block, year" in result.output
        assert sum(server.counts.values()) == asked


def test_the_dataset_name_in_the_quiz_prompt_is_the_one_the_quiz_was_made_with(tmp_path):
    prompts = []

    def named(text: str) -> str | None:
        if "five-choice quiz" in text:
            prompts.append(text)
        return memoriser(text)

    with OpenAIServer(reply=named) as server:
        contamination(tmp_path, server, "hosted_vllm/memoriser", "--dataset-name", "IgakuQA")
    # the authors' framing, with the name given: 9 items x 5 quizzes, each naming it
    assert len(prompts) == 45 and all("from the full split of the IgakuQA dataset." in p for p in prompts)
    assert json.loads((tmp_path / "quiz.json").read_text(encoding="utf-8"))["dataset"] == "IgakuQA"


@pytest.mark.parametrize(
    ("change", "says"),
    [
        ({"version": 2}, "quiz format version 2; this medvqa reads 1"),
        ({"format": "other"}, "not a quiz file"),
        ({"items": {}}, "an 'items' list"),
    ],
)
def test_a_quiz_file_of_another_kind_or_version_is_refused(tmp_path, change, says):
    doc = {
        "format": quizzes.QUIZ_FORMAT,
        "version": quizzes.QUIZ_VERSION,
        "benchmark": "igakuqa",
        "split": "full",
        "language": "ja",
        "dataset": "igakuqa",
        "generator": {},
        "items": [],
        **change,
    }
    path = tmp_path / "quiz.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(DataError, match=re.escape(says)):
        quizzes.read_quiz(path)
