"""The chapters' recorded experiments and the setting they share.

A study fixes *which* questions a chapter asks, what the reader or judge reads, and where the recorded answers and
labels live, so that a notebook, ``tools/record.py`` and the tests send a model exactly the same prompts. The
ideas themselves (a metric, a judge, a harness) live in the flat modules above; a study only applies them.

- ``handbook``          the shared setting: the handbook, its queries, chunks, qrels and retrievers; the reader sample
- ``synth_data``        02: the question writer's targets, its recorded rows, the realism ratings, the audit labels
- ``faithfulness_data`` 06: the reader's recorded answers, the labelled claims, the context-swap sample
- ``position_study``    04 and 09: lost in the middle with a language model, trials and accuracy by position
- ``position_view``     04: one question of the position study, for reading
- ``answers_data``      07-09: the reader's recorded answers and their correctness labels
- ``cascade``           09: the small model first, the large one when the small answer fails a check
- ``class_sim``         11: a simulated class (simulated raters, never people) written into a class folder
- ``class_lessons``     11: the chapters' lessons re-run on a class's majority, beside the AI rater's labels
- ``relevance_pairs``   06: each judged question with another department's answer: irrelevant by construction
- ``domain_data``       02: a seeded sample of handbook and Python FAQ questions, in or out of the domain by source
- ``fact_first_data``   02: the fact-first prompt's rows beside the question-first ones, audited blind
"""
