"""The conformance kit (`medvqa.testing.check_benchmark`): every contract a benchmark must keep,
checked on real data in one call, with every broken contract named by its item.

The checks, in order: the items load (twice, identically: ids unique and stable, the same data
fingerprint); gold keys are among the options; images lie inside the data root and decode;
conditions are admitted per item; prompts render for every admitted condition (question only
with Q, images only with I, the same instruction everywhere); a benchmark offering several
languages loads each, with the same item ids in the same order, the same gold and each item in
the language asked; each selection keyword selects what `select` on its field does; `validate`
finds no error; a random run and a replay of the gold answers both complete, and the gold
replay scores 100 % (free-text answers, whose correctness is a judge's verdict, are replayed
but left out of that check, with a note in the report); the audit runs on them; the plugin
implements documented hooks only and the benchmark spells the `Benchmark` surface correctly.

`kit` runs them (`check_benchmark`) and holds the plugin checks, `items` the checks on the
loaded items, `runs` the two runs and their audit, `report` what they find.
"""
