"""Comparisons across runs: the numbers (`runs`), the Markdown and pages (`render`), the figure
(`figure`) and the numbers over repeats (`repeats`)."""
