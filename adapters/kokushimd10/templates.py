"""Japanese prompts: the model answers in JSON `{"answer": [...]}` whatever the benchmark's own
prediction format (saved predictions in that format are read by `medvqa import`)."""

from medvqa import Template

_INSTRUCTION = ('回答は選択肢の記号のみを、次の JSON 形式で出力してください: {{"answer": ["記号"]}}\n'
                "選択肢の記号: {labels}\n選ぶ数: {n}つ")
_NUMERIC = '答えの数値を、次の JSON 形式で出力してください: {{"answer": ["数値"]}}（単位は不要です）'

TEXT_ONLY = Template(
    name="kokushi-ja-text",
    system="あなたは日本の医療系国家試験を解く専門家です。",
    question_header="【問題】\n",
    options_header="【選択肢】",
    option_line="{label}. {text}",
    instruction=_INSTRUCTION,
    numeric_instruction=_NUMERIC,
)

MULTIMODAL = Template(
    name="kokushi-ja-multimodal",
    system=TEXT_ONLY.system,
    question_header=TEXT_ONLY.question_header,
    options_header=TEXT_ONLY.options_header,
    option_line=TEXT_ONLY.option_line,
    instruction=_INSTRUCTION,
    numeric_instruction=_NUMERIC,
    image_instruction="添付の画像をよく読んでから答えてください。",
)

FORCED_GUESS = "確信が持てない場合でも、最も可能性が高いと考える選択肢を必ず選んで回答してください。"
