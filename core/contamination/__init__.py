"""Was the exam memorised? The contamination audit: the Data Contamination Quiz (`..dcq` holds
its estimate; `api` reads the authors' results files and medvqa's own quizzes through it)."""
