"""Four smaller studies that need the model: the relevance pairs labelled by construction (06), the query
rewriter (08), fact-first generation and the domain judge (02). No model is called: the model is a test double."""

import json

import pytest

from labkit.generation import fact_first, rewriter, synth
from labkit.judges import domain
from labkit.studies import domain_data, relevance_pairs


def _rows(*qids):
    return [{"qid": q, "question": f"question {q}?", "answer": f"answer of {q}"} for q in qids]


def test_a_mismatched_answer_comes_from_another_department_and_each_is_used_once():
    rows = _rows("fin-e01", "fin-e02", "hr-e01", "hr-e02", "it-e01", "it-e02")
    pairs = relevance_pairs.mismatched(rows)
    assert [p["qid"] for p in pairs] == [r["qid"] for r in rows]
    for p in pairs:
        assert p["answer_of"].split("-")[0] != p["qid"].split("-")[0]
        assert p["answer"] == f"answer of {p['answer_of']}" and p["question"] == f"question {p['qid']}?"
    assert len({p["answer_of"] for p in pairs}) == len(rows)


def test_mismatched_needs_two_departments():
    with pytest.raises(ValueError, match="another department"):
        relevance_pairs.mismatched(_rows("hr-e01", "hr-e02"))


def test_the_rewriter_returns_the_query_or_none():
    seen = []

    def model(prompt, schema=None, max_tokens=None):
        seen.append((prompt, schema, max_tokens))
        return '{"query": " Until what time is the Hanoi office open on Saturdays? "}'

    out = rewriter.rewrite(["can i go into the hanoi office on saturday"], "till what time?", model)
    assert out == "Until what time is the Hanoi office open on Saturdays?"
    prompt, schema, max_tokens = seen[0]
    assert "- can i go into the hanoi office on saturday" in prompt and prompt.endswith("LAST MESSAGE: till what time?")
    assert schema == rewriter.REWRITE_SCHEMA and max_tokens == rewriter.REWRITE_MAX_TOKENS
    for bad in ("not json", '{"query": ""}', '{"query": 3}', '{"other": "x"}'):
        assert rewriter.rewrite(["a"], "b", lambda *a, bad=bad, **k: bad) is None


def test_the_rewriter_names_a_bad_argument():
    with pytest.raises(ValueError, match="history"):
        rewriter.rewrite_prompt([], "and for probation staff?")
    with pytest.raises(ValueError, match="follow_up"):
        rewriter.rewrite_prompt(["a turn"], "")


class _Chunk:
    id, doc, start_char, end_char = "doc#0", "doc", 0, 120


DOC = "Expense claims are filed in Spendly within 30 days of the expense. Receipts above USD 25 must be attached."


@pytest.mark.parametrize(
    ("reply", "kept", "reason"),
    [
        ({"fact": "Expense claims are filed in Spendly within 30 days of the expense.", "question": "Deadline?",
          "answer": "30 days"}, True, None),
        ({"fact": "Claims go to Finance by Friday.", "question": "When?", "answer": "Friday"}, False, "not found"),
        ({"fact": "30 days", "question": "When?", "answer": "30 days"}, False, "shorter"),
        ({"fact": "Receipts above USD 25 must be attached.", "question": "", "answer": "x"}, False, "empty question"),
    ],
)  # fmt: skip
def test_fact_first_keeps_a_row_by_chapter_02s_rules(reply, kept, reason):
    seen = []

    def model(prompt, schema=None, max_tokens=None):
        seen.append((prompt, schema))
        return json.dumps(reply)

    row = fact_first.generate_fact_first(_Chunk(), DOC, model)
    assert seen[0][1] == fact_first.FACT_SCHEMA and list(fact_first.FACT_SCHEMA["properties"])[0] == "fact"
    if kept:
        assert DOC[row["start"] : row["end"]] == reply["fact"] and row["quote"] == reply["fact"]
    else:
        assert isinstance(row, synth.Dropped) and reason in row.reason


def test_fact_first_drops_a_malformed_reply():
    row = fact_first.generate_fact_first(_Chunk(), DOC, lambda *a, **k: "{not json")
    assert isinstance(row, synth.Dropped) and row.reason.startswith("malformed")


def test_the_domain_judge_reads_its_reply():
    assert domain.judge_domain("How do I book leave?", lambda *a, **k: '{"in_domain": true}') is True
    assert domain.judge_domain("What is a list?", lambda *a, **k: '{"in_domain": false}') is False
    assert domain.judge_domain("x?", lambda *a, **k: '{"in_domain": "yes"}') is None
    assert domain.judge_domain("x?", lambda *a, **k: "nonsense") is None


def test_the_domain_sample_is_seeded_and_labelled_by_its_source():
    sample = domain_data.domain_sample()
    assert sample == domain_data.domain_sample()
    assert len(sample) == 3 * domain_data.N_PER_SOURCE
    for row in sample:
        assert row["in_domain"] == (row["source"] != "Python FAQ")
    assert len({r["id"] for r in sample}) == len(sample)
    with pytest.raises(ValueError, match="n="):
        domain_data.domain_sample(n=10_000)


def _ff_audit_lines():
    from labkit import data_dir
    from labkit.studies import fact_first_data as ffd

    return (data_dir() / ffd.AUDIT_FILE).read_text(encoding="utf-8").splitlines()


def test_the_second_fact_first_audit_rates_the_same_sheet_blind_with_its_own_rater():
    from labkit import data_dir
    from labkit.studies import fact_first_data as ffd

    lines = (data_dir() / ffd.SECOND_FILE).read_text(encoding="utf-8").splitlines()
    ids = [json.loads(line)["id"] for line in lines]
    assert sorted(ids) == sorted(r["id"] for r in ffd.audit_sheet()) and len(ids) == len(set(ids))
    second, first = ffd.second_audit(), ffd.audit()
    assert {r["rater"] for r in second} == {"fact-first-second"}
    assert [r["id"] for r in second] == [r["id"] for r in first]  # the same rows, joined to the same prompts
    assert [(r["prompt"], r["i"]) for r in second] == [(r["prompt"], r["i"]) for r in first]
    assert all(set(json.loads(line)) == {"id", "evidence", "why", "rater"} for line in lines)  # nothing copied


def test_the_fact_first_audit_covers_every_kept_row_exactly_once_with_its_rater():
    from labkit.studies import fact_first_data as ffd

    ids = [json.loads(line)["id"] for line in _ff_audit_lines()]
    sheet = [r["id"] for r in ffd.audit_sheet()]
    assert len(ids) == len(set(ids)) == len(sheet) == len(ffd.rows()[0])
    assert set(ids) == set(sheet)
    audited = ffd.audit()
    assert {r["rater"] for r in audited} == {"fact-first-audit"}
    assert {r["prompt"] for r in audited} == set(ffd.PROMPTS)
    assert all("prompt" not in r for r in ffd.audit_sheet()), "the sheet must not say which prompt wrote a row"


def test_the_fact_first_audit_rejects_a_repeated_or_missing_row(tmp_path):
    from labkit.studies import fact_first_data as ffd

    lines = _ff_audit_lines()
    repeated = tmp_path / "repeated.jsonl"
    repeated.write_text("\n".join([*lines, lines[0]]) + "\n", encoding="utf-8")
    with pytest.raises(ValueError, match="unknown or repeated"):
        ffd.audit(repeated)
    missing = tmp_path / "missing.jsonl"
    missing.write_text("\n".join(lines[1:]) + "\n", encoding="utf-8")
    with pytest.raises(ValueError, match="lacks 1 audited rows"):
        ffd.audit(missing)


def test_the_question_first_rows_are_chapter_02s_easy_rows():
    from labkit.studies import fact_first_data as ffd
    from labkit.studies import synth_data as sd

    question = {q.qid: q.question for q in sd.load_sets()}
    for r in ffd.rows()[0]:
        if r["prompt"] == ffd.PROMPTS[0]:
            assert question[f"syn-easy-{r['i'] + 1:03d}"] == r["question"]


def test_chapter_02s_fact_first_figures_are_computed_from_the_audit():
    from pathlib import Path

    from labkit.studies import fact_first_data as ffd

    nb = json.loads(next(Path("notebooks").glob("02_*.ipynb")).read_text(encoding="utf-8"))
    printed = "".join(
        "".join(o.get("text", "")) for c in nb["cells"] if c["cell_type"] == "code" for o in c.get("outputs", [])
    )
    audited = ffd.audit()
    dropped = ffd.rows()[1]
    for name in ffd.PROMPTS:
        part = [r for r in audited if r["prompt"] == name]
        n_yes = sum(r["evidence"] == "yes" for r in part)
        n_drop = sum(p == name for p, _ in dropped)
        line = f"{name}: kept {len(part)}, dropped {n_drop}; span answers (yes) {n_yes} of {len(part)} kept"
        assert line in printed, f"chapter 02 does not print {line!r}: rebuild it after changing the audit"
    assert f"audited rows: {len(audited)}, rater(s): ['fact-first-audit']" in printed
