"""Pass-threshold calibration for JMed48k (`medvqa report RUN --pass`): the MHLW criteria and
their checking live in `medvqa.mhlw`, shared by every adapter of MHLW exams."""

from medvqa.mhlw import CRITERIA_FILE, Rule, evaluate, load_rules, pass_lines, scoring_record

__all__ = ["CRITERIA_FILE", "Rule", "evaluate", "load_rules", "pass_lines", "scoring_record"]
