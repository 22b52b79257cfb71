"""Running a benchmark: options, the runner, the run store, progress, interrupts, summaries."""
