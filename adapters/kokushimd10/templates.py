"""Japanese prompts: the model answers in JSON `{"answer": [...]}` whatever the benchmark's own
prediction format (saved predictions in that format are read by `medvqa import`)."""

from dataclasses import replace

from medvqa import Template
from medvqa.ja import ANSWER_INSTRUCTION as _INSTRUCTION
from medvqa.ja import FORCED_GUESS, SYSTEM_PROMPT

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

__all__ = ["FORCED_GUESS", "MULTIMODAL", "TEXT_ONLY"]
