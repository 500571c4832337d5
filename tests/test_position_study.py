"""labkit.studies.position_study: the trials, their prompts, the tables and bad input. The readers are test doubles
(functions with a fixed rule), never a model's answers."""

import pytest

from labkit.data.corpus import Query, Span
from labkit.generation import reader as rd
from labkit.measures import stats
from labkit.studies import position_study as ps
from labkit.studies import position_view as pv


def _context(qid="q1", above=0):
    return {
        "qid": qid,
        "question": f"How many days for {qid}?",
        "gold": f"GOLD {qid}: it takes 45 days.",
        "distractors": [f"D{i} {qid} about something else, 3 days." for i in range(1, 10)],
        "nonrelevant_above": above,
    }


def test_arrange_inserts_the_gold_among_the_first_distractors():
    c = _context()
    assert ps.arrange(c, 1, 3) == [c["gold"], *c["distractors"][:2]]
    assert ps.arrange(c, 3, 3) == [*c["distractors"][:2], c["gold"]]
    assert len(ps.arrange(c, 5, 10)) == 10 and ps.arrange(c, 5, 10)[4] == c["gold"]


def test_ends_order_puts_the_best_at_both_ends():
    assert ps.ends_order(5) == [1, 3, 5, 4, 2]
    assert ps.ends_order(10) == [1, 3, 5, 7, 9, 10, 8, 6, 4, 2]
    assert ps.ends_order(1) == [1]


def test_retrieved_position_is_capped_at_n_docs():
    assert ps.retrieved_position(_context(above=0), 5) == 1
    assert ps.retrieved_position(_context(above=2), 5) == 3
    assert ps.retrieved_position(_context(above=40), 5) == 5


def test_trials_cover_every_condition_once_per_question():
    trials = ps.study_trials([_context("q1", above=1), _context("q2")])  # the chapter's design
    per_q = [t for t in trials if t.qid == "q1"]
    kinds = [(t.condition, t.n_docs, t.position) for t in per_q]
    assert kinds[:2] == [("closed-book", 0, None), ("oracle", 1, 1)]
    assert ("no gold", 10, None) in kinds and ("no gold", 5, None) not in kinds
    assert [p for c, n, p in kinds if c == "position" and n == 5] == [1, 3, 5, 2]  # 2: where it was retrieved
    assert [p for c, n, p in kinds if c == "position" and n == 10] == [1, 5, 10]
    ends = next(t for t in per_q if t.condition == "ends")
    c = _context("q1", above=1)  # retrieved second -> "ends" puts it last
    assert ends.position == 5 and ends.passages[-1] == c["gold"]
    assert sorted(ends.passages) == sorted(ps.arrange(c, 2, 5))
    no_gold = next(t for t in per_q if t.condition == "no gold")
    assert list(no_gold.passages) == c["distractors"][:9]
    assert len(trials) == 11 + 10
    full = ps.study_trials([_context()], positions=None, no_gold=(5, 10))
    assert len(full) == 2 + 2 + 5 + 10 + 1
    small = ps.study_trials([_context()], **ps.SMALL_DESIGN)
    assert [(t.condition, t.n_docs, t.position) for t in small] == [
        ("closed-book", 0, None),
        ("oracle", 1, 1),
        ("position", 10, 1),
        ("position", 10, 5),
        ("position", 10, 10),
    ]


def test_trial_prompt_is_what_the_llm_reader_sends():
    seen = []

    def fake(prompt, schema=None, max_tokens=None):  # a test double standing in for a client
        seen.append(prompt)
        return " 45 days. "

    trials = ps.study_trials([_context()])
    table = ps.run_study(trials, rd.llm_reader(fake))
    assert seen == [ps.trial_prompt(t) for t in trials]
    assert seen[0] == rd.closed_book_prompt("How many days for q1?") and "[1]" not in seen[0]
    assert list(table.columns) == ["qid", "condition", "n_docs", "position", "answer"]
    assert set(table["answer"]) == {"45 days."}
    assert "model" in ps.run_study(trials[:2], rd.llm_reader(fake), model="m").columns


def _u_reader(question, passages):
    """A test double: right only when the gold passage is first or last (a perfect U)."""
    gold = [i for i, p in enumerate(passages) if p.startswith("GOLD")]
    return "45 days." if gold and gold[0] in (0, len(passages) - 1) else "3 days."


def _table(contexts):
    queries = {c["qid"]: Query(c["qid"], c["question"], "45 days.", "easy", "fact", "dev", ()) for c in contexts}
    from labkit.judges.correctness import reference_rule

    table = ps.run_study(ps.study_trials(contexts), _u_reader)
    return ps.add_check(table, reference_rule(), queries)


def test_accuracy_by_position_with_wilson_intervals_and_a_u():
    contexts = [_context(f"q{i}", above=i % 5) for i in range(6)]
    acc = ps.accuracy_by_position(_table(contexts))
    assert acc.loc[("position", 5, 1), "accuracy"] == 1 and acc.loc[("position", 5, 3), "accuracy"] == 0
    assert acc.loc[("position", 5, 2), "questions"] == 1  # q1, paired with its ends trial
    assert acc.loc[("position", 10, 10), "right"] == 6 and acc.loc[("oracle", 1, 1), "accuracy"] == 1
    p, low, high = stats.wilson(0, 6)
    assert (acc.loc[("position", 10, 5), ["accuracy", "low", "high"]].tolist()) == [p, low, high]
    assert acc.xs("closed-book", level="condition")["accuracy"].iloc[0] == 0  # no gold passage, no "45"
    u = ps.ends_vs_middle(_table(contexts), 5)
    assert (u["ends"], u["middle"], u["difference"], u["questions"]) == (1.0, 0.0, 1.0, 6)
    assert u["middle positions"] == [3]  # not 2 or 4, which only the reordered questions were tried at
    assert u["low"] == u["high"] == 1.0


def test_padded_trials_put_the_gold_first_among_padding_of_the_same_length():
    c = {**_context(), "padding": [f"P{i} a passage with no number." for i in range(9)]}
    trials = ps.study_trials([c], **ps.PADDING_DESIGN)
    assert [t.condition for t in trials] == ["closed-book", "oracle", "padded"]
    padded = trials[-1]
    assert (padded.n_docs, padded.position, padded.passages) == (10, 1, (c["gold"], *c["padding"]))
    assert pv.trial_label("padded", 10, 1) == "gold first · 9 padding"


def test_padding_is_far_from_the_question_holds_no_digit_and_is_seeded():
    from labkit.text.chunking import Chunk

    def chunk(doc, i, text, words=64):
        return Chunk(f"{doc}#{i}", doc, i, 0, len(text), text, words)

    chunks = [chunk("gold", 0, "the gold 45"), chunk("gold", 1, "same document, no digit"),
              chunk("a", 0, "ranked near the question"), chunk("a", 1, "has a 7 in it"),
              chunk("a", 2, "short, no digit", 20)]  # fmt: skip
    chunks += [chunk("b", i, f"padding {'x' * i}") for i in range(6)]
    context = {**_context(), "gold_id": "gold#0"}
    ids = ps.padding_ids(context, chunks, ["a#0", "gold#0"], 4)
    assert len(ids) == 4 == len(set(ids)) and all(i.startswith("b#") for i in ids)
    assert ids == ps.padding_ids(context, chunks, ["a#0", "gold#0"], 4)  # seeded per question
    assert ps.padding_ids({**context, "qid": "q2"}, chunks, [], 6) != ps.padding_ids(context, chunks, [], 6)
    with pytest.raises(ValueError, match="only 6 chunks can pad 'q1'; n must be <= 6"):
        ps.padding_ids(context, chunks, ["a#0"], 7)


def test_the_per_question_frames_are_what_the_tests_average():
    contexts = [_context(f"q{i}", above=i % 5) for i in range(6)]
    em = ps.ends_and_middle(_table(contexts), 5)
    assert em.attrs["middle positions"] == [3] and (em["ends"] == 1).all() and (em["middle"] == 0).all()
    oa = ps.oracle_and_among(_table(contexts), 5)
    assert list(oa.columns) == ["oracle", "among"] and oa["among"].mean() == pytest.approx(2 / 3)


def test_reorder_effect_pairs_the_retrieved_order_with_the_ends_order():
    contexts = [_context(f"q{i}", above=a) for i, a in enumerate([0, 1, 2, 3, 4])]  # retrieved 1st..5th
    eff = ps.reorder_effect(_table(contexts), contexts, 5)
    # retrieved order: right at 1 and 5 (2/5); ends order puts ranks 1, 2 at the ends -> right for 2/5 as well
    assert eff["as retrieved"] == 0.4 and eff["ends"] == 0.4 and eff["questions"] == 5
    assert eff["only ends right"] == 1 and eff["only as retrieved right"] == 1  # rank 2 gains, rank 5 loses
    assert eff["gold not moved"] == 2  # ranks 1 and 4 keep their place


def test_distractor_cost_pairs_the_oracle_with_every_position():
    contexts = [_context(f"q{i}", above=i % 5) for i in range(6)]
    cost = ps.distractor_cost(_table(contexts), 5)
    # the U reader: oracle right (the gold is first and last), among 5 right at 1 and 5, wrong at 3 -> 2/3
    assert cost["positions"] == [1, 3, 5] and cost["questions"] == 6
    assert cost["oracle"] == 1.0 and cost["among distractors"] == pytest.approx(2 / 3)
    assert cost["difference"] == pytest.approx(1 / 3) and cost["low"] == cost["high"] == pytest.approx(1 / 3)
    assert ps.distractor_cost(_table(contexts), 10)["among distractors"] == pytest.approx(2 / 3)


def test_study_questions_keep_one_gold_span_with_its_key_number_in_the_gold():
    contexts = [_context("a"), _context("b"), _context("c")]
    one = (Span("d", 0, 5, 3),)
    queries = {
        "a": Query("a", "How many days for a?", "45 days.", "easy", "fact", "dev", one),
        "b": Query("b", "How many days for b?", "45 days.", "easy", "fact", "dev", one * 2),  # two grade-3 spans
        "c": Query("c", "How many days for c?", "60 days.", "easy", "fact", "dev", one),  # 60 not in the gold
    }
    assert [c["qid"] for c in ps.study_questions(contexts, queries, n=1)] == ["a"]
    with pytest.raises(ValueError, match="n must be <= 1"):
        ps.study_questions(contexts, queries, n=2)


def test_trial_view_shows_one_question_through_every_trial():
    contexts = [_context(f"q{i}", above=i % 5) for i in range(6)]
    table = _table(contexts)
    # "gold at 2 of 5" (q1's retrieved rank) is not every question's trial
    assert pv.trial_choices(table) == [
        "closed book", "oracle (gold alone)", "gold at 1 of 5", "gold at 3 of 5", "gold at 5 of 5",
        "ends order · 5 passages", "no gold · 10 passages", "gold at 1 of 10", "gold at 5 of 10",
        "gold at 10 of 10", "as retrieved · 5 passages",
    ]  # fmt: skip
    assert pv.question_pattern(table, "q1") == "5: ✓✗✓ · 10: ✓✗✓"  # the U reader
    queries = {"q1": Query("q1", "?", "45 days.", "easy", "fact", "dev", ())}
    v = pv.trial_view(table, contexts, "q1", "as retrieved · 5 passages", queries)
    assert v["trial"] == "gold at 2 of 5" and v["retrieved"] == {5: "2 of 5"} and v["reference"] == "45 days."
    assert [p["gold"] for p in v["passages"]] == [False, True, False, False, False]
    assert v["answer"] == "3 days." and v["verdict"] == "✗"  # the U reader misses position 2
    assert len(v["answers"]) == 11 and v["answers"].loc["gold at 1 of 10", "verdict"] == "✓"
    ends = pv.trial_view(table, contexts, "q1", "ends order · 5 passages")
    assert [p["gold"] for p in ends["passages"]][-1] and ends["verdict"] == "✓"  # rank 2 goes last: a U end
    assert ends["answers"].loc["ends order · 5 passages", "gold at"] == "5 of 5"
    assert pv.trial_view(table, contexts, "q1", "closed book")["passages"] == []
    no_gold = pv.trial_view(table, contexts, "q1", "no gold · 10 passages")
    assert len(no_gold["passages"]) == 9 and not any(p["gold"] for p in no_gold["passages"])


def test_the_position_explorer_lists_questions_with_their_pattern():
    from labkit.ui import widgets
    from labkit.ui.widgets.explorer import html_cells

    contexts = [_context(f"q{i}", above=i % 5) for i in range(3)]
    ex = widgets.PositionExplorer(_table(contexts), contexts, trial="gold at 3 of 5")
    assert ex.question.options[1] == ("q1 · 5: ✓✗✓ · 10: ✓✗✓", "q1")
    assert ex.result == {"qid": "q0", "trial": "gold at 3 of 5", "verdict": "✗", "pattern": "5: ✓✗✓ · 10: ✓✗✓"}
    shown = ex.html_for(trial="gold at 10 of 10")
    assert html_cells(shown, "verdict") == [("trial", "✓")] and shown.count('class="lk-passage lk-gold"') == 1
    assert ("gold at 5 of 10|answer", "3 days.") in html_cells(shown, "trial")
    ex.question.value = "q2"
    assert ex.result["qid"] == "q2" and ex.result["verdict"] == "✗"


@pytest.mark.parametrize(
    "call, words",
    [
        (lambda: ps.arrange(_context(), 1, 11), "n_docs (11) needs 10 distractors"),
        (lambda: ps.arrange(_context(), 6, 5), "position must be <= 5"),
        (lambda: ps.ends_order(0), "n must be >= 1"),
        (lambda: ps.retrieved_position({k: v for k, v in _context().items() if k != "nonrelevant_above"}, 5),
         "lacks 'nonrelevant_above'"),
        (lambda: ps.study_trials([]), "contexts must not be empty"),
        (lambda: ps.study_trials([{"qid": "q"}]), "contexts[0] must be a dict from positions.build_contexts"),
        (lambda: ps.study_trials([_context()], n_docs=(5,), positions={10: [1]}), "n_docs=10, which is not in"),
        (lambda: ps.study_trials([_context()], no_gold=(7,)), "n_docs=7, which is not in"),
        (lambda: ps.study_trials([_context()], padded=(10,)), "needs 9 padding passages per context"),
        (lambda: ps.run_study([_context()], _u_reader), "trials[0] must be a Trial"),
        (lambda: ps.run_study(ps.study_trials([_context()])[:1], lambda q, p: 5), "must return the answer as a string"),
        (lambda: ps.run_study(ps.study_trials([_context()])[:1], "reader"), "reader must be a function"),
        (lambda: ps.add_check(ps.run_study(ps.study_trials([_context()])[:1], _u_reader), None, {}),
         "check must be a function"),
        (lambda: ps.accuracy_by_position(ps.run_study(ps.study_trials([_context()])[:1], _u_reader)),
         "table needs a 'correct' column"),
        (lambda: ps.ends_vs_middle(_table([_context()]), 2), "n_docs must be >= 3"),
        (lambda: ps.ends_vs_middle(_table([_context(), _context("q2", above=1)]), 5, middle=[2]),
         "a middle position tried for every question"),
        (lambda: ps.reorder_effect(_table([_context()]), [_context()], 10), "no question has both"),
        (lambda: ps.distractor_cost(_table([_context()]), 7), "no question has both an oracle trial"),
        (lambda: ps.distractor_cost(_table([_context()]), 1), "n_docs must be >= 2"),
        (lambda: pv.trial_view(_table([_context()]), [_context()], "q9"), "qid 'q9' is not a question of the study"),
        (lambda: pv.trial_view(_table([_context()]), [_context(), _context("q2")], "q2"), "no trial of 'q2'"),
        (lambda: pv.trial_view(_table([_context()]), [_context()], "q1", "gold at 2 of 10"),
         "trial must be one of ['closed book'"),
        (lambda: pv.trial_label("middle", 5, 3), "condition must be one of"),
        (lambda: pv.question_pattern(_table([_context()]), "q9"), "qid 'q9' has no position trial"),
    ],
)  # fmt: skip
def test_bad_input(call, words):
    with pytest.raises(ValueError) as info:
        call()
    assert words in str(info.value)


def test_plot_positions_draws_ours_with_intervals_and_baselines_beside_the_published():
    from labkit.data.corpus import load_reference
    from labkit.ui import plots

    liu = load_reference("lost_in_the_middle_liu2024")
    acc = ps.accuracy_by_position(_table([_context(f"q{i}", above=i % 5) for i in range(6)]))
    pos = acc.xs(("position", 10), level=("condition", "n_docs"))
    spread = {"U, 10": {p: (r.low, r.high) for p, r in pos.iterrows()}}
    base = {"closed book": 0.0, "oracle": 1.0}
    fig = plots.plot_positions(liu, {"U, 10": pos["accuracy"].to_dict()}, 20, intervals=spread, baselines=base,
                               title="ours", xlabel="position")  # fmt: skip
    right = fig.axes[1]
    assert right.get_title() == "ours" and right.get_xlabel() == "position"
    assert len(right.containers) == 1  # one error-bar curve
    assert [round(t.get_position()[1]) for t in right.texts] == [0, 100]  # the two baselines, labelled
    with pytest.raises(ValueError, match="intervals names 'other'"):
        plots.plot_positions(liu, {"U, 10": {1: 1.0}}, 20, intervals={"other": {1: (0, 1)}})
