"""The visual-reliance audit (`medvqa audit`). Its inputs and the pairing of each item with itself
under another condition (`pairs`), the transition table and its tests (`transitions`), cluster
intervals (`clusters`), the other sections: ablation, refusals, IO control, selection bias,
examples (`sections`), tests between models (`between_models`), language pairing (`pairing`),
cohorts and names (`cohorts`, `names`), the document (`analysis`) and its Markdown (`summary`);
saved runs read for it (`runs`); the page (`html`, `page`, `thumbnails`), its charts (`charts`,
`svg`) and figures for print (`figures`)."""
