"""The refusal sentences of every language medvqa ships, in one place.

A reply that no rule reads as an answer is a refusal when it holds one of these sentences (the
answer reader's fallback, B.6), whatever the item's language: a model asked in Spanish may
decline in English. They are matched case-insensitively on the Rule-0 text after Unicode NFKC,
so half-width kana and punctuation (`申し訳ありませんが､…できません｡`, as GPT-4's IgakuQA
replies are written) and full-width Latin read as their usual forms; the patterns are written in
NFKC form.

Each sentence declines in the first person: it says the model cannot answer (`no puedo
responder`), cannot give an answer or a diagnosis, cannot see or analyse images at all (`no
puedo ver ni analizar imágenes`), or opens with an apology and says it cannot (`申し訳ありませ
んが…できません`). A hedge that goes on to an answer is not one of them: `No puedo descartar
la opción 3`, `確定診断はできませんが、…` (cannot, *but*), `Aunque no puedo ver la imagen, …`.
An exam's own phrases (a tool's fixed refusal strings) stay in its adapter, in
`LanguagePatterns.refusal` or its own scorer.
"""

from __future__ import annotations

# the end of a clause that ends the sentence: a capability stated, not conceded ("…, pero")
_STOP = r"(?=\s*(?:[.!?。]|$))"

REFUSALS: dict[str, tuple[str, ...]] = {
    "en": (
        r"\b(?:cannot|can ?not|can[’']t|unable to)\s+(?:determine|answer)\b",
        r"\b(?:i[’']m|i am)\s+(?:sorry|afraid)\b[^.!?]*?\b(?:cannot|can ?not|can[’']t|unable to|not able to)\b",
        r"\b(?:cannot|can ?not|can[’']t|unable to|not able to)\s+(?:see|view|analy[sz]e|interpret)"
        r"(?:\s+(?:or|and|nor)\s+(?:see|view|analy[sz]e|interpret))?\s+(?:medical\s+)?images\b",
    ),
    "ja": (
        # できませんが ("cannot, but") opens a hedge, not a refusal
        r"(?:回答|判断|お答え)できません(?!が)",
        r"答えられません(?!が)",
        # an apology, then "cannot" in the same sentence
        r"(?:申し訳(?:ありません|ございません)|残念ながら|ごめんなさい|すみません)[^。]*?"
        r"(?:でき(?:ません|かねます)|答えられません)(?!が)",
    ),
    "es": (
        r"\bno\s+(?:puedo|soy capaz de)\s+(?:responder|contestar)\b",
        r"\bno\s+(?:puedo|soy capaz de)\s+(?:proporcionar|dar|ofrecer)(?:te|le)?\s+(?:una\s+|la\s+|un\s+)?"
        r"(?:respuestas?|diagnósticos?|asesoramiento)\b",
        r"\bno\s+(?:puedo|soy capaz de|tengo la capacidad de)\s+(?:ver|analizar|interpretar)"
        r"(?:\s+(?:ni|o|y)\s+(?:ver|analizar|interpretar))?\s+imágenes\b",
        r"\b(?:lo siento|lamento|disculpe?|perdón)\b[^.!?]*?\bno\s+(?:puedo|soy capaz)\b",
    ),
    "pt": (
        r"\bnão\s+(?:posso|consigo|sou capaz de)\s+responder\b",
        r"\bnão\s+(?:posso|consigo|sou capaz de)\s+(?:fornecer|dar|oferecer|fazer)\s+(?:uma\s+|um\s+|a\s+|o\s+)?"
        r"(?:respostas?|diagnósticos?|conselhos?|aconselhamento)\b",
        r"\bnão\s+(?:posso|consigo|sou capaz de|tenho a capacidade de)\s+(?:ver|analisar|interpretar)"
        r"(?:\s+(?:nem|ou|e)\s+(?:ver|analisar|interpretar))?\s+imagens\b",
        r"\b(?:desculpe|lamento|sinto muito)\b[^.!?]*?\bnão\s+(?:posso|consigo|sou capaz)\b",
    ),
    "he": (
        r"(?:לא|אינני|איני)\s+(?:יכול|יכולה|מסוגל|מסוגלת)\s+(?:לענות|לספק\s+תשובה|לתת\s+תשובה|לקבוע)",
        r"(?:מצטער|מצטערת|לצערי)[^.!?]*?(?:לא\s+(?:יכול|יכולה|מסוגל|מסוגלת)|אינני|איני|אין\s+(?:לי|באפשרותי))",
    ),
    "ko": (
        r"(?:답|답변|대답|응답)(?:을|를)?\s*(?:드릴|할|해\s*드릴)\s*수\s*(?:없습니다|없어요|없다)",
        r"죄송(?:하지만|합니다)[^.!?]*?수\s*(?:없습니다|없어요)",
        r"(?:이미지|영상|사진)(?:을|를)?\s*(?:볼|확인할|분석할)\s*수\s*(?:없습니다|없어요)",
    ),
    "zh": (
        r"(?:无法|無法|不能)(?:回答|作答|解答)",
        r"(?:抱歉|对不起|對不起)[^。!?.]*?(?:无法|無法|不能)",
        rf"(?:无法|無法|不能)(?:查看|看到|分析)(?:图像|圖像|图片|圖片|影像){_STOP}",
    ),
    "pl": (
        r"\bnie\s+(?:mogę|moge|potrafię|potrafie)\s+(?:jednoznacznie\s+)?(?:odpowiedzieć|udzielić|wskazać|określić|ustalić|ocenić)",
        r"\bnie\s+jestem\s+w\s+stanie\b",
        r"\bnie\s+(?:da\s+się|można)\s+(?:jednoznacznie\s+)?(?:odpowiedzieć|określić|ustalić|wskazać)",
        r"\bodmawiam\b",
    ),
    "de": (
        r"\b(?:ich\s+kann|kann\s+ich)\b[^.!?]{0,60}?\bnicht\s+beantworten\b",
        r"\bich\s+bin\s+(?:leider\s+)?nicht\s+in\s+der\s+lage\b",
        r"\b(?:ich\s+kann|kann\s+ich)\s+(?:leider\s+)?keine\s+bilder\s+(?:sehen|ansehen|analysieren|auswerten)\b",
        r"\b(?:es\s+tut\s+mir\s+leid|entschuldigung)\b[^.!?]*?\bnicht\b",
    ),
    "fr": (
        r"\bje\s+ne\s+(?:peux|suis)\s+pas\s+(?:en\s+mesure\s+de\s+|capable\s+de\s+)?répondre\b",
        r"\bje\s+ne\s+(?:peux|suis)\s+pas\s+(?:en\s+mesure\s+de\s+|capable\s+de\s+)?(?:voir|analyser|interpréter)\s+"
        r"(?:les\s+|des\s+)?images\b",
        r"\b(?:désolée?|je\s+suis\s+désolée?)\b[^.!?]*?\bje\s+ne\s+(?:peux|suis)\s+pas\b",
    ),
    "it": (
        r"\bnon\s+(?:posso|sono in grado di)\s+rispondere\b",
        r"\bnon\s+(?:posso|sono in grado di)\s+(?:vedere|analizzare|interpretare)\s+(?:le\s+)?immagini\b",
        r"\b(?:mi dispiace|spiacente)\b[^.!?]*?\bnon\s+(?:posso|sono in grado)\b",
    ),
}


def refusal_sentences() -> tuple[str, ...]:
    """Every language's refusal sentences, in the table's order."""
    return tuple(rx for sentences in REFUSALS.values() for rx in sentences)
