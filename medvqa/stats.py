"""The statistics medvqa's own tables and audit use, for a benchmark's own tables: exact
(Clopper-Pearson) intervals of proportions, Tango's score interval of a paired difference,
the MOVER-Wilson interval of a macro average, McNemar's exact test, Holm's adjustment, a
bootstrap interval and a bootstrap p-value that is never 0. Outputs name each interval's method
in `ci_method`: `clopper-pearson`, `tango-score`, `mover-wilson`, `bootstrap-percentile`.

    >>> from medvqa.stats import binomial_ci
    >>> [round(x, 3) for x in binomial_ci(7, 10)]
    [0.348, 0.933]
"""

from medvqa.core.audit.stats import (binomial_ci, bootstrap_ci, bootstrap_p, holm, mcnemar_exact,
                                     mean_of_proportions_ci, paired_difference_ci)

__all__ = ["binomial_ci", "bootstrap_ci", "bootstrap_p", "holm", "mcnemar_exact", "mean_of_proportions_ci",
           "paired_difference_ci"]
