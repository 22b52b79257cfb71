"""The visual-reliance audit: pairing, ablation, refusals, IO control, statistics, figures, HTML."""
