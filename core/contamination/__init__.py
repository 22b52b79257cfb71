"""Was the exam memorised? The contamination audit (docs/audit.md, "Contamination"): the Data
Contamination Quiz (`quiz` writes and checks it, `checks` its rules for a paraphrase, `exam` has
a model take it, `..dcq` estimates the level as its authors do, `plan` prices it), slot guessing
(`slots`), and exam-date curves (`curves`); `api` is the Python form of `medvqa contamination`."""
