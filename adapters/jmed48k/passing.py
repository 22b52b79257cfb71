"""Pass-threshold calibration for JMed48k (`medvqa report RUN --pass`): the MHLW criteria and
their checking live in `medvqa.mhlw`, shared by every adapter of MHLW exams."""

from medvqa.mhlw import CRITERIA_FILE, PassReport, Rule, evaluate, load_rules, scoring_record

__all__ = ["CRITERIA_FILE", "PassReport", "Rule", "evaluate", "load_rules", "scoring_record"]
