"""The statistics medvqa's own tables and audit use, for a benchmark's own tables: exact
(Clopper-Pearson) intervals of proportions, Tango's score interval of a paired difference,
the MOVER-Wilson interval of a macro average, McNemar's exact test, Holm's adjustment, a
bootstrap interval and a bootstrap p-value that is never 0, and the `ci_method` names outputs
give their intervals.

    >>> from medvqa.stats import binomial_ci
    >>> [round(x, 3) for x in binomial_ci(7, 10)]
    [0.348, 0.933]
"""

from medvqa.core.audit.stats import (BOOTSTRAP, CLOPPER_PEARSON, MOVER_WILSON, TANGO, binomial_ci, bootstrap_ci,
                                     bootstrap_p, holm, mcnemar_exact, mean_of_proportions_ci, paired_difference_ci)

__all__ = ["BOOTSTRAP", "CLOPPER_PEARSON", "MOVER_WILSON", "TANGO", "binomial_ci", "bootstrap_ci", "bootstrap_p",
           "holm", "mcnemar_exact", "mean_of_proportions_ci", "paired_difference_ci"]
