"""Japanese prompts: the model answers in JSON `{"answer": [...]}` whatever the benchmark's own
prediction format (saved predictions in that format are read by `medvqa import`)."""

from dataclasses import replace

from medvqa import Template
from medvqa.ja import ANSWER_INSTRUCTION as _INSTRUCTION
from medvqa.ja import CONFIDENCE_INSTRUCTION, FORCED_GUESS, SYSTEM_PROMPT

_NUMERIC = '答えの数値を、次の JSON 形式で出力してください: {{"answer": ["数値"]}}（単位は不要です）'

TEXT_ONLY = Template(
    name="kokushi-ja-text",
    system=SYSTEM_PROMPT,
    question_header="【問題】\n",
    options_header="【選択肢】",
    option_line="{label}. {text}",
    instruction=_INSTRUCTION,
    numeric_instruction=_NUMERIC,
)

# the text-only template with the image instruction added
MULTIMODAL = replace(
    TEXT_ONLY,
    name="kokushi-ja-multimodal",
    image_instruction="添付の画像をよく読んでから答えてください。",
)

# IgakuQA's English translation (`--language en`): the same answer format, in English
TEXT_ONLY_EN = Template(
    name="kokushi-en-text",
    system="You are an expert at Japan's national medical licensing examination.",
    question_header="Question:\n",
    options_header="Options:",
    option_line="{label}. {text}",
    instruction=(
        'Answer with the option label(s) only, as JSON: {{"answer": ["<label>"]}}\n'
        "Option labels: {labels}\nNumber to choose: {n}"
    ),
    numeric_instruction='Give the numeric answer as JSON: {{"answer": ["<number>"]}} (no unit)',
)

FORCED_GUESS_EN = "Even if you are not sure, you must answer with the option you think most likely."
CONFIDENCE_INSTRUCTION_EN = (
    "In the same JSON object, also give your confidence that your answer is right, as a number from 0 "
    'to 100 under "confidence" (for example "confidence": 80).'
)

MULTIMODAL_EN = replace(
    TEXT_ONLY_EN,
    name="kokushi-en-multimodal",
    image_instruction="Read the attached image(s) carefully before answering.",
)

__all__ = [
    "CONFIDENCE_INSTRUCTION",
    "CONFIDENCE_INSTRUCTION_EN",
    "FORCED_GUESS",
    "FORCED_GUESS_EN",
    "MULTIMODAL",
    "MULTIMODAL_EN",
    "TEXT_ONLY",
    "TEXT_ONLY_EN",
]
