"""The statistics medvqa's own tables and audit use, for a benchmark's own tables: Wilson's
score intervals of proportions with Brown, Cai & DasGupta's boundary correction
(`binomial_ci`), Tango's score interval of a paired difference, the MOVER-Wilson interval of a
macro average (`macro_method`: Wilson for one row), McNemar's mid-p test with the exact
conditional p beside it (`mcnemar`), Holm's adjustment, the delta-method interval of a ratio of
sums (`ratio_ci`, micro-F1), a bootstrap interval and a bootstrap p-value that is never 0, and
the calibration of stated or token-probability confidences (`calibration`: ECE, Brier, AUROC,
the risk-coverage curve and its area, each with its bootstrap interval).
Outputs name each interval's method in `ci_method`: `wilson-score-bcd` (`WILSON`),
`tango-score`, `mover-wilson`, `delta-method-ratio`, `paired-z`, `sign-flip-inverted`,
`differing-items-bound`, `bootstrap-percentile` (`bootstrap_ci`),
`bootstrap-expanded-percentile`, `cluster-bootstrap-expanded-percentile`.

    >>> from medvqa.stats import binomial_ci
    >>> [round(x, 3) for x in binomial_ci(7, 10)]
    [0.397, 0.892]
"""

from medvqa.core.bootstrap import bootstrap_ci, bootstrap_p
from medvqa.core.calibration import calibration
from medvqa.core.stats import (
    WILSON,
    binomial_ci,
    holm,
    macro_method,
    mcnemar,
    mcnemar_exact,
    mean_of_proportions_ci,
    paired_difference_ci,
    ratio_ci,
)

__all__ = [
    "WILSON",
    "binomial_ci",
    "bootstrap_ci",
    "bootstrap_p",
    "calibration",
    "holm",
    "macro_method",
    "mcnemar",
    "mcnemar_exact",
    "mean_of_proportions_ci",
    "paired_difference_ci",
    "ratio_ci",
]
