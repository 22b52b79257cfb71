"""Comparisons across runs (`medvqa compare`). The numbers: the runs read as entries
(`entries`), the long table (`table`), Δimg and Δlang (`deltas`), the tests between models
(`between_models`), pass verdicts (`passes`), the panel views (`panels`), the numbers over repeats
(`repeats`), and the `Comparison` that holds them all (`comparison`). Their outputs: the tables
every output shows (`frames`), Markdown, CSV, LaTeX, JSON and Parquet (`render`), the HTML page
(`page`) and the figure (`figure`)."""
