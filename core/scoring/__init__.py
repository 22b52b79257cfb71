"""Response → keys → correct: the answer reader, format-aware scoring, language patterns, re-scoring."""
