"""The statistics medvqa's own tables and audit use, for a benchmark's own tables: exact and
bootstrap confidence intervals and McNemar's exact test.

    >>> from medvqa.stats import binomial_ci
    >>> [round(x, 3) for x in binomial_ci(7, 10)]
    [0.348, 0.933]
"""

from medvqa.core.audit.stats import binomial_ci, bootstrap_ci, mcnemar_exact, mean_of_proportions_ci

__all__ = ["binomial_ci", "bootstrap_ci", "mcnemar_exact", "mean_of_proportions_ci"]
