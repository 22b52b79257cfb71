"""Spain's MIR (Examen de Médicos Internos Residentes): the Ministry's 210 questions of 2024 and
2026 with their images, and the exam's own scoring rules (annulled questions, reserve questions,
the net score)."""
