"""Japanese prompts (text-only and multimodal), after the JMed48k paper's Appendix K.3.

Multimodal order: optional text_reference, stem, content image(s), option list (omitted for
image-as-options items), answer image(s), instruction block.
"""

from dataclasses import replace

from medvqa import Template
from medvqa.ja import ANSWER_INSTRUCTION as _INSTRUCTION
from medvqa.ja import CONFIDENCE_INSTRUCTION, FORCED_GUESS, SYSTEM_PROMPT

_NUMERIC = (
    "計算結果の数字を解答欄①②…の順に1桁ずつ、次の JSON 形式で出力してください: "
    '{{"answer": ["数字", ...]}}（解答欄は{slots}つ）'
)

TEXT_ONLY = Template(
    name="jmed48k-ja-text",
    system=SYSTEM_PROMPT,
    reference_header="【参考文】\n",
    question_header="【問題】\n",
    options_header="【選択肢】",
    option_line="{label}. {text}",
    instruction=_INSTRUCTION,
    numeric_instruction=_NUMERIC,
)

# the text-only template with the image instruction added
MULTIMODAL = replace(
    TEXT_ONLY,
    name="jmed48k-ja-multimodal",
    image_instruction=(
        "添付の画像をよく読んでから答えてください。選択肢が画像の中に示されている場合も、選択肢の記号で答えてください。"
    ),
)

__all__ = ["CONFIDENCE_INSTRUCTION", "FORCED_GUESS", "MULTIMODAL", "TEXT_ONLY"]
