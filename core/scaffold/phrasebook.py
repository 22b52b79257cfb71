"""The words `medvqa new-adapter --language xx` writes into a new adapter's prompts: headers,
the answer instruction and answer phrases of each language it knows. A language not listed gets
the English words, to be translated in the adapter's `prompts.py`. Refusal sentences are not
here: every language's apply to every reply already (`medvqa.core.scoring.refusals`).

Each entry: the language's name; question and options headers; the instruction (a `Template`
format string with `{labels}` and `{n}`) for lettered options and the one for numbered options,
each naming the labels as the exam prints them (a model asked for "the letter" of option 3 may
answer "C"); the sentence added when images are shown; regular expressions placed before
`medvqa.ANSWER_TOKEN` in answer phrases; the forced-guess sentence; a reply
in the language naming the option `{label}` (the new adapter's tests fill in each fixture
item's answer); and, where medvqa already ships the language's answer patterns, the import that
uses them instead of a copy.
"""

from __future__ import annotations

PHRASES: dict[str, dict] = {
    "en": {
        "name": "English",
        "question_header": "Question: ",
        "options_header": "Options:",
        "instruction": 'Answer with the option letter(s) only, as JSON: {{"answer": ["<letter>"]}}. '
        "Valid letters: {labels}. Choose {n}.",
        "numbered_instruction": 'Answer with the option number(s) only, as JSON: {{"answer": ["<number>"]}}. '
        "Valid numbers: {labels}. Choose {n}.",
        "image_instruction": "Use the image(s) shown.",
        "answer_prefixes": [],
        "forced_guess": "If you are unsure, give your single best guess anyway; an answer is required.",
        "sample_reply": "The answer is {label}",
    },
    "ja": {  # the Japanese answer patterns are medvqa.ja.JAPANESE
        "name": "Japanese",
        "question_header": "問題: ",
        "options_header": "選択肢:",
        "instruction": '選択肢の記号のみを JSON で答えてください: {{"answer": ["記号"]}}。'
        "記号: {labels}。{n} つ選んでください。",
        "numbered_instruction": '選択肢の番号のみを JSON で答えてください: {{"answer": ["番号"]}}。'
        "番号: {labels}。{n} つ選んでください。",
        "image_instruction": "画像を参照してください。",
        "patterns_import": "from medvqa.ja import JAPANESE as PATTERNS  # the shared Japanese patterns",
        "answer_prefixes": [],
        "forced_guess": "確信がなくても、最も可能性の高い選択肢を必ず1つ答えてください。",
        "sample_reply": "正解は {label}",
    },
    "ko": {
        "name": "Korean",
        "question_header": "문제: ",
        "options_header": "보기:",
        "instruction": '보기 기호만 JSON으로 답하시오: {{"answer": ["기호"]}}. 기호: {labels}. {n}개를 고르시오.',
        "numbered_instruction": '보기 번호만 JSON으로 답하시오: {{"answer": ["번호"]}}. '
        "번호: {labels}. {n}개를 고르시오.",
        "image_instruction": "제시된 영상을 참고하시오.",
        "answer_prefixes": [r"정답은\s*", r"답은\s*"],
        "forced_guess": "확실하지 않더라도 가장 가능성이 높은 답을 반드시 하나 고르시오.",
        "sample_reply": "정답은 {label}",
    },
    "pl": {
        "name": "Polish",
        "question_header": "Pytanie: ",
        "options_header": "Odpowiedzi:",
        "instruction": 'Podaj wyłącznie literę odpowiedzi w formacie JSON: {{"answer": ["<litera>"]}}. '
        "Dozwolone litery: {labels}. Wybierz {n}.",
        "numbered_instruction": 'Podaj wyłącznie numer odpowiedzi w formacie JSON: {{"answer": ["<numer>"]}}. '
        "Dozwolone numery: {labels}. Wybierz {n}.",
        "image_instruction": "Skorzystaj z załączonego obrazu.",
        "answer_prefixes": [r"(?:prawidłowa\s+)?odpowied[źz](?:\s+to)?\s*:?\s*"],
        "forced_guess": "Jeśli nie masz pewności, i tak wskaż jedną najbardziej prawdopodobną odpowiedź.",
        "sample_reply": "Prawidłowa odpowiedź to {label}",
    },
    "de": {
        "name": "German",
        "question_header": "Frage: ",
        "options_header": "Antwortmöglichkeiten:",
        "instruction": 'Antworte nur mit dem Buchstaben der Antwort als JSON: {{"answer": ["<Buchstabe>"]}}. '
        "Gültige Buchstaben: {labels}. Wähle {n}.",
        "numbered_instruction": 'Antworte nur mit der Nummer der Antwort als JSON: {{"answer": ["<Nummer>"]}}. '
        "Gültige Nummern: {labels}. Wähle {n}.",
        "image_instruction": "Beziehe das Bild ein.",
        "answer_prefixes": [r"(?:die\s+)?(?:richtige\s+)?antwort\s*(?:ist|:)\s*"],
        "forced_guess": "Wenn du unsicher bist, gib trotzdem deine beste Vermutung an; eine Antwort ist Pflicht.",
        "sample_reply": "Die richtige Antwort ist {label}",
    },
    "fr": {
        "name": "French",
        "question_header": "Question : ",
        "options_header": "Propositions :",
        "instruction": 'Répondez uniquement par la lettre, en JSON : {{"answer": ["<lettre>"]}}. '
        "Lettres valides : {labels}. Choisissez-en {n}.",
        "numbered_instruction": 'Répondez uniquement par le numéro, en JSON : {{"answer": ["<numéro>"]}}. '
        "Numéros valides : {labels}. Choisissez-en {n}.",
        "image_instruction": "Appuyez-vous sur l'image.",
        "answer_prefixes": [r"(?:la\s+)?(?:bonne\s+)?réponse\s*(?:est|:)\s*"],
        "forced_guess": "Si vous n'êtes pas sûr, donnez quand même votre meilleure réponse ; une réponse est exigée.",
        "sample_reply": "La bonne réponse est {label}",
    },
    "es": {
        "name": "Spanish",
        "question_header": "Pregunta: ",
        "options_header": "Opciones:",
        "instruction": 'Responda solo con la letra de la opción, en JSON: {{"answer": ["<letra>"]}}. '
        "Letras válidas: {labels}. Elija {n}.",
        "numbered_instruction": 'Responda solo con el número de la opción, en JSON: {{"answer": ["<número>"]}}. '
        "Números válidos: {labels}. Elija {n}.",
        "image_instruction": "Utilice la imagen.",
        "answer_prefixes": [r"(?:la\s+)?respuesta(?:\s+correcta)?\s*(?:es|:)\s*"],
        "forced_guess": "Si no está seguro, dé igualmente su mejor respuesta; la respuesta es obligatoria.",
        "sample_reply": "La respuesta correcta es {label}",
    },
    "pt": {
        "name": "Portuguese",
        "question_header": "Pergunta: ",
        "options_header": "Alternativas:",
        "instruction": 'Responda apenas com a letra da alternativa, em JSON: {{"answer": ["<letra>"]}}. '
        "Letras válidas: {labels}. Escolha {n}.",
        "numbered_instruction": 'Responda apenas com o número da alternativa, em JSON: {{"answer": ["<número>"]}}. '
        "Números válidos: {labels}. Escolha {n}.",
        "image_instruction": "Utilize a imagem.",
        "answer_prefixes": [r"(?:a\s+)?resposta(?:\s+correta)?\s*(?:é|:)\s*"],
        "forced_guess": "Se não tiver certeza, dê mesmo assim o seu melhor palpite; a resposta é obrigatória.",
        "sample_reply": "A resposta correta é {label}",
    },
    "it": {
        "name": "Italian",
        "question_header": "Domanda: ",
        "options_header": "Opzioni:",
        "instruction": 'Rispondi solo con la lettera dell\'opzione, in JSON: {{"answer": ["<lettera>"]}}. '
        "Lettere valide: {labels}. Scegline {n}.",
        "numbered_instruction": 'Rispondi solo con il numero dell\'opzione, in JSON: {{"answer": ["<numero>"]}}. '
        "Numeri validi: {labels}. Scegline {n}.",
        "image_instruction": "Usa l'immagine.",
        "answer_prefixes": [r"(?:la\s+)?risposta(?:\s+corretta)?\s*(?:è|:)\s*"],
        "forced_guess": "Se non sei sicuro, dai comunque la tua risposta migliore; una risposta è obbligatoria.",
        "sample_reply": "La risposta corretta è {label}",
    },
    "zh": {
        "name": "Chinese",
        "question_header": "题目：",
        "options_header": "选项：",
        "instruction": '请只用 JSON 回答选项字母：{{"answer": ["字母"]}}。有效选项：{labels}。选择 {n} 个。',
        "numbered_instruction": '请只用 JSON 回答选项编号：{{"answer": ["编号"]}}。有效选项：{labels}。选择 {n} 个。',
        "image_instruction": "请参考所示图像。",
        "answer_prefixes": [r"(?:正确)?答案是\s*", r"答案[:：]\s*"],
        "forced_guess": "如果不确定，也请给出一个最可能的答案；必须作答。",
        "sample_reply": "正确答案是 {label}",
    },
}
