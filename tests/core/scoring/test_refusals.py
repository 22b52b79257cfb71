"""Refusals in every language medvqa ships: each language's sentences recognise a real reply
that declines (read from the shared data wherever it holds one) and leave alone a near miss
that answers; they are matched after NFKC, so GPT-4's half-width IgakuQA apologies count. The
effect on real numbers: 3 of GPT-4's 5 unread IgakuQA 116-A replies are refusals (the other two
are hedged answers and stay parse failures), 2 of its 210 MIR 2024 replies, and GPT-4o-mini's
WorldMedQA-V Japan blind run counts 3 refusals where it counted 1."""

from __future__ import annotations

import json
import re
import unicodedata
from collections import Counter
from functools import cache

import pytest
from click.testing import CliRunner

import medvqa
from medvqa.cli.main import cli
from medvqa.core.scaffold.phrasebook import PHRASES
from medvqa.core.scoring.normalize import rule0_clean
from medvqa.core.scoring.patterns import compile_patterns
from medvqa.core.scoring.refusals import REFUSALS
from tests.conftest import shared_data

REFUSAL = compile_patterns(()).refusal  # every language's sentences, whatever is registered


def declines(text: str) -> bool:
    """The refusal sentences on a reply as the answer reader sees it (Rule 0, then NFKC)."""
    return bool(REFUSAL.search(unicodedata.normalize("NFKC", rule0_clean(text))))


def choice_item(keys="ABCD", gold="C", language="en", benchmark="t"):
    options = tuple(medvqa.Option(key=k, label=k, text=f"option {k}") for k in keys)
    return medvqa.Item(
        id="q",
        benchmark=benchmark,
        question="Which one?",
        options=options,
        gold=medvqa.Gold.from_json([gold]),
        language=language,
    )


# ------------------------------------------------------------------ real replies from the shared data


@cache
def igakuqa_replies() -> dict[str, str]:
    rows = medvqa.read_jsonl(shared_data("igakuqa", "baseline_results", "2022", "116-A_gpt4.jsonl"))
    return {r["problem_id"]: r["prediction"] for r in rows}


@cache
def igakuqa_items() -> dict[str, medvqa.Item]:
    return {it.id: it for it in medvqa.load("igakuqa", shared_data("igakuqa"), select={"block": ["116A"]})}


@cache
def mir_2024() -> list[tuple[medvqa.Item, str]]:
    """MIR 2024's 210 items (numbered by position: the sheet numbers two rows 70), options 1-4
    read from the stem (items 141 and 157 lack the text of option 3), the Ministry's key, and
    GPT-4's reply."""
    out = []
    for n, row in enumerate(medvqa.read_table(shared_data("mir", "2024", "MIR24GPT_final.xlsx")), start=1):
        texts = dict(re.findall(r"^\s*([1-4])\s*\.\s*(.*?)\s*$", row["Pregunta"], re.M))
        options = tuple(medvqa.Option(key=k, label=k, text=texts.get(k, "")) for k in "1234")
        item = medvqa.Item(
            id=f"mir2024-{n}",
            benchmark="mir",
            question=row["Pregunta"],
            options=options,
            gold=medvqa.Gold.from_json([row["Respuesta correcta Ministerio V0. "]]),
            language="es",
        )
        out.append((item, row[" GPT-4"]))
    return out


@cache
def worldmedqa_rows(folder: str, model: str, country: str, language: str = "local") -> dict[str, dict]:
    path = shared_data(
        "worldmedqa-v-outputs", "visuals", folder, model, f"{model}_{country}_{language}_gpt-4o-mini_result.xlsx"
    )
    return {row["index"]: row for row in medvqa.read_table(path)}


LANGUAGE = {"brazil": "pt", "israel": "he", "japan": "ja", "spain": "es"}


def worldmedqa(folder: str, model: str, country: str, index: str, language: str = "local", benchmark="worldmedqa_v"):
    """A published WorldMedQA-V reply and its item, scored as WorldMedQA-V scores (VLMEvalKit's
    matching, then medvqa's chain; `benchmark="t"`: medvqa's chain alone, as another exam reads
    it), and the option the authors' extractor named."""
    row = worldmedqa_rows(folder, model, country, language)[index]
    options = tuple(medvqa.Option(key=k, label=k, text=row[k]) for k in "ABCD")
    item = medvqa.Item(
        id=f"{country}-{index}",
        benchmark=benchmark,
        question=row["question"],
        options=options,
        gold=medvqa.Gold.from_json([row["correct_option"]]),
        language=LANGUAGE[country] if language == "local" else "en",
    )
    return item, row["prediction"], row["extracted"]


# (language, where, the reply and its item). WorldMedQA-V replies are read by medvqa's chain alone
# (`benchmark="t"`): WorldMedQA-V's own convention runs VLMEvalKit's matching first, which takes
# the Portuguese article of brazil-93's "A resposta correta exigiria…" for option A.
REAL_REFUSALS = [
    (
        "ja",
        "IgakuQA 116A20, GPT-4, half-width: 残念ながら…できません",
        lambda: (igakuqa_items()["116A20"], igakuqa_replies()["116A20"]),
    ),
    (
        "ja",
        "IgakuQA 116A45, GPT-4: 申し訳ありませんが…提示できません",
        lambda: (igakuqa_items()["116A45"], igakuqa_replies()["116A45"]),
    ),
    (
        "ja",
        "IgakuQA 116A66, GPT-4: 申し訳ありませんが…提供することができません",
        lambda: (igakuqa_items()["116A66"], igakuqa_replies()["116A66"]),
    ),
    (
        "ja",
        "WorldMedQA-V japan-197, GPT-4o-mini blind",
        lambda: worldmedqa("outputs_blind", "GPT4o_MINI", "japan", "197", benchmark="t")[:2],
    ),
    ("es", "MIR 2024 item 18, GPT-4: no puedo ver ni analizar imágenes", lambda: mir_2024()[17]),
    (
        "es",
        "MIR 2024 item 23, GPT-4: no tengo la capacidad de ver…, no puedo proporcionar una respuesta",
        lambda: mir_2024()[22],
    ),
    (
        "es",
        "WorldMedQA-V spain-102, GPT-4o-mini with the image: Lo siento, pero no puedo…",
        lambda: worldmedqa("outputs_w_images", "GPT4o_MINI", "spain", "102", benchmark="t")[:2],
    ),
    (
        "pt",
        "WorldMedQA-V brazil-93, Gemini 1.5 Pro blind: Infelizmente, não posso responder…",
        lambda: worldmedqa("outputs_blind", "GeminiPro1-5", "brazil", "93", benchmark="t")[:2],
    ),
    (
        "pt",
        "WorldMedQA-V brazil-89, Gemini 1.5 Pro blind: Eu não posso dar conselhos médicos",
        lambda: worldmedqa("outputs_blind", "GeminiPro1-5", "brazil", "89", benchmark="t")[:2],
    ),
    (
        "he",
        "WorldMedQA-V israel-136, Gemini 1.5 Flash blind: אני מצטער, אבל אני לא יכול לענות",
        lambda: worldmedqa("outputs_blind", "GeminiFlash1-5", "israel", "136", benchmark="t")[:2],
    ),
    (
        "he",
        "WorldMedQA-V israel-79, GPT-4o-mini blind: לצערי, אין לי אפשרות לראות תמונות",
        lambda: worldmedqa("outputs_blind", "GPT4o_MINI", "israel", "79", benchmark="t")[:2],
    ),
    (
        "en",
        "WorldMedQA-V brazil-78, Gemini 1.5 Pro blind, in English: I'm sorry, but I cannot…",
        lambda: worldmedqa("outputs_blind", "GeminiPro1-5", "brazil", "78", benchmark="t")[:2],
    ),
]


@pytest.mark.parametrize("language, where, get", REAL_REFUSALS, ids=[w for _, w, _ in REAL_REFUSALS])
def test_a_real_refusal_is_recognised(language, where, get):
    item, reply = get()
    assert re.search(
        "|".join(f"(?:{rx})" for rx in REFUSALS[language]),
        unicodedata.normalize("NFKC", rule0_clean(reply)),
        re.IGNORECASE,
    ), f"{language} sentences miss {reply!r}"
    score = medvqa.score(item, reply, saved=item.benchmark == "igakuqa")
    assert (score.status, score.correct, score.predicted) == ("refusal", False, None)


REAL_NEAR_MISSES = [  # (where, the reply and its item, the option it names = the published extractor's)
    (
        "WorldMedQA-V japan-85, Gemini 1.5 Pro blind: 正解は C, an option 創部には使用できません",
        lambda: worldmedqa("outputs_blind", "GeminiPro1-5", "japan", "85"),
        "C",
    ),
    (
        "WorldMedQA-V israel-118, GPT-4o blind: A. …שלא ניתן להסיק",
        lambda: worldmedqa("outputs_blind", "GPT4o", "israel", "118"),
        "A",
    ),
    (
        "WorldMedQA-V israel-24 English, GPT-4o-mini blind: the answer is A. It cannot be inferred",
        lambda: worldmedqa("outputs_blind", "GPT4o_MINI", "israel", "24", language="english"),
        "A",
    ),
]


@pytest.mark.parametrize("where, get, option", REAL_NEAR_MISSES, ids=[w for w, _, _ in REAL_NEAR_MISSES])
def test_a_real_answer_that_says_cannot_is_an_answer(where, get, option):
    item, reply, extracted = get()
    assert extracted == option  # the authors' extractor read the same option
    assert not declines(reply)
    score = medvqa.score(item, reply)
    assert (score.status, score.predicted) == ("answered", (option,))


def test_a_real_answer_that_says_cannot_and_names_its_option_early_is_no_refusal():
    """WorldMedQA-V spain-64, GPT-4o-mini with the image: "aunque no puedo interpretarla ..., el
    diagnóstico clínico más probable es: **C. Carcinoma de supraglotis ...** Esto se debe a ...".
    Not a refusal; its "C" has more than three words after it, so VLMEvalKit's matching as the
    authors ran it leaves it to the extractor (which named C), and so does medvqa's: a parse
    failure, for `score --extractor` to read."""
    item, reply, extracted = worldmedqa("outputs_w_images", "GPT4o_MINI", "spain", "64")
    assert extracted == "C" and "no puedo interpretarla" in reply and not declines(reply)
    assert medvqa.score(item, reply).status == "parse_failure"


def test_the_two_hedged_igakuqa_replies_stay_parse_failures():
    """116A24 (声帯結節(b)や声帯ﾎﾟﾘｰﾌﾟ(d)が考えられます) and 116A60 (｢d: 血管拡張性肉芽腫｣が最も考え
    られる) say できません but name options without an apology: the rules read neither, and they
    are not refusals."""
    for pid in ("116A24", "116A60"):
        reply = igakuqa_replies()[pid]
        assert "できません" in unicodedata.normalize("NFKC", reply) and not declines(reply)
        assert medvqa.score(igakuqa_items()[pid], reply, saved=True).status == "parse_failure"


def test_a_hedge_that_cannot_but_goes_on_is_no_refusal():
    """GPT-4o-mini on WorldMedQA-V japan-33 (blind): 明確には判断できませんが、…以下のように解釈できます
    ("cannot judge clearly, but…"), an explanation the authors' extractor read as A."""
    item, reply, extracted = worldmedqa("outputs_blind", "GPT4o_MINI", "japan", "33")
    assert "判断できませんが" in reply and extracted == "A"
    assert not declines(reply) and medvqa.score(item, reply).status == "parse_failure"


# ------------------------------------------------------------------ languages without a real reply here

# No real reply in the shared data declines in these languages (the Polish PES fixture is ours,
# the other exams are Japanese, Spanish, Portuguese and Hebrew): each refusal is phrased as
# models typically decline, and each near miss uses the same verb in an answer.
SYNTHETIC = [  # (language, refusal, near miss that answers (C))
    (
        "pl",
        "Przepraszam, ale nie mogę odpowiedzieć na to pytanie bez obrazu.",
        "Nie mogę wykluczyć B, ale prawidłowa odpowiedź to C.",
    ),
    (
        "ko",
        "죄송하지만 이미지를 볼 수 없어서 답변을 드릴 수 없습니다.",
        "영상을 볼 수 없지만 임상 소견으로 보아 정답은 (C)",
    ),
    ("zh", "抱歉，我无法查看图像，因此无法回答这个问题。", "虽然无法查看图像，但根据病史最可能是 (C)"),
    (
        "de",
        "Es tut mir leid, aber ich kann diese Frage ohne das Bild nicht beantworten.",
        "Ich kann Option B nicht ausschließen, am wahrscheinlichsten ist aber (C)",
    ),
    (
        "fr",
        "Désolé, je ne peux pas voir les images ; je ne peux donc pas répondre à cette question.",
        "Je ne peux pas exclure B, mais la réponse la plus probable est (C)",
    ),
    (
        "it",
        "Mi dispiace, non posso vedere le immagini e quindi non posso rispondere.",
        "Non posso escludere la B, ma la risposta più probabile è (C)",
    ),
    (
        "pt",
        "Desculpe, mas não consigo analisar imagens médicas.",
        "Não posso descartar a alternativa B, mas a mais provável é (C)",
    ),
    (
        "es",
        "No puedo responder a esta pregunta sin la imagen.",
        "No puedo descartar la opción B, pero la respuesta es (C)",
    ),
    (
        "en",
        "I'm afraid I am not able to view images, so I cannot answer.",
        "I can't rule out B entirely, but the answer is C",
    ),
]


@pytest.mark.parametrize("language, refusal, near_miss", SYNTHETIC, ids=[s[0] for s in SYNTHETIC])
def test_typical_refusal_and_near_miss(language, refusal, near_miss):
    own = re.compile("|".join(f"(?:{rx})" for rx in REFUSALS[language]), re.IGNORECASE)
    assert own.search(unicodedata.normalize("NFKC", rule0_clean(refusal)))
    assert medvqa.score(choice_item(language=language), refusal).status == "refusal"
    assert not declines(near_miss)
    score = medvqa.score(choice_item(language=language), near_miss)
    assert (score.status, score.predicted, score.correct) == ("answered", ("C",), True)


# ------------------------------------------------------------------ NFKC and coverage


def test_matching_is_after_nfkc():
    """Full-width Latin reads as ASCII, and a half-width 。 (｡) ends a sentence: an apology in one
    sentence and できません in the next are no refusal."""
    assert medvqa.score(choice_item(), "Ｉ ＣＡＮＮＯＴ ＡＮＳＷＥＲ ＴＨＩＳ．").status == "refusal"
    hedge = "残念ながら予後は不良です｡手術はできません｡"
    assert re.search("|".join(REFUSALS["ja"]), hedge)  # read as it is, the half-width ｡ ends nothing
    assert not declines(hedge)


def test_every_sentence_is_written_in_nfkc_form_for_every_language_medvqa_ships():
    """The reply is NFKC'd before matching, so a sentence with a full-width or half-width form
    would never match; every language the new-adapter phrasebook knows, and the WorldMedQA-V and
    MIR languages, have sentences."""
    assert {*PHRASES, "he"} <= set(REFUSALS)
    for language, sentences in REFUSALS.items():
        assert sentences, language
        for rx in sentences:
            assert unicodedata.normalize("NFKC", rx) == rx, (language, rx)
            re.compile(rx)


# ------------------------------------------------------------------ the effect on real numbers


def invoke(*args):
    result = CliRunner().invoke(cli, [str(a) for a in args])
    assert result.exit_code == 0, result.output
    return result.stdout


def test_igakuqa_116a_gpt4_three_refusals_two_parse_failures(tmp_path):
    """GPT-4's five unread 116-A replies were five parse failures; three are apologies (refusals
    in the summary and the audit's refusal rate), two hedged answers stay parse failures, and
    the accuracy is the authors' 0.8 as before."""
    data = shared_data("igakuqa")
    run = tmp_path / "gpt4"
    summary = json.loads(
        invoke(
            "import",
            "igakuqa",
            data / "baseline_results" / "2022" / "116-A_gpt4.jsonl",
            "--data",
            data,
            "--run-dir",
            run,
            "--convention",
            "igakuqa",
            "--json",
        )
    )
    cell = summary["conditions"]["C+Q"]
    assert (cell["n"], cell["correct"], cell["answered"], cell["refusal"], cell["parse_failure"]) == (75, 60, 70, 3, 2)
    audit = json.loads(invoke("audit", run, "--json"))
    assert audit["refusals"]["rates"]["C+Q"] == {"n": 75, "refusals": 3, "rate": 3 / 75}
    statuses = {r["item_id"]: r["status"] for r in medvqa.records(run).to_dict("records") if r["status"] != "answered"}
    assert statuses == {
        "116A20": "refusal",
        "116A45": "refusal",
        "116A66": "refusal",
        "116A24": "parse_failure",
        "116A60": "parse_failure",
    }


def test_mir_2024_gpt4_two_refusals_of_210():
    """SOURCE.txt: "some GPT-4 replies are free text ("1. Estenosis..."), two are refusals"."""
    statuses = Counter(medvqa.score(item, reply).status for item, reply in mir_2024())
    assert statuses == {"answered": 208, "refusal": 2}
    assert [item.id for item, reply in mir_2024() if medvqa.score(item, reply).status == "refusal"] == [
        "mir2024-18",
        "mir2024-23",
    ]


def test_worldmedqa_v_japan_blind_gpt4o_mini_counts_its_apologies(tmp_path):
    """GPT-4o-mini without the image, Japanese, scored as a live run scores (`vlmevalkit`):
    japan-167, -197 and -199 (ごめんなさい / 申し訳ありませんが…できません) are refusals, where
    only one reply was; japan-33 (判断できませんが…) is a parse failure, no longer a refusal, so the
    authors' extractor answer is its assisted reading and the assisted count is the published
    128 of 168 hits (it was 127)."""
    table = shared_data(
        "worldmedqa-v-outputs",
        "visuals",
        "outputs_blind",
        "GPT4o_MINI",
        "GPT4o_MINI_japan_local_gpt-4o-mini_result.xlsx",
    )
    published = sum(int(row["hit"]) for row in worldmedqa_rows("outputs_blind", "GPT4o_MINI", "japan").values())
    summary = json.loads(
        invoke(
            "import",
            "worldmedqa_v",
            table,
            "--data",
            shared_data("worldmedqa-v-japan"),
            "--run-dir",
            tmp_path / "run",
            "--convention",
            "vlmevalkit",
            "--json",
        )
    )
    cell = summary["conditions"]["C+Q"]
    assert (cell["n"], cell["refusal"], cell["parse_failure"], cell["correct"]) == (168, 3, 6, published)
    assert published == 128
    refused = sorted(
        r["item_id"] for r in medvqa.records(tmp_path / "run").to_dict("records") if r["status"] == "refusal"
    )
    assert refused == ["japan-167", "japan-197", "japan-199"]
