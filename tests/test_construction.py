"""labkit.judges.construction: every claim's label follows from how it was made, checked claim by claim."""

import re

import numpy as np
import pytest

from labkit.judges import construction
from labkit.studies import faithfulness_data as fdata
from labkit.text.words import numbers

PASSAGE = """## 2. Deadlines

File every expense claim within **30 days** of the expense. Claims older than 30 days are blocked.

| Deadline | What it is for | Counted from |
|---|---|---|
| 30 days | Filing an ordinary expense claim | The date of the expense |
| 7 days | Uploading receipts to settle a travel advance | The last day of the trip |

You must not share a card with a colleague.
"""


def test_sentences_skip_headings_tables_and_cut_fragments():
    assert construction.sentences("of the expense, counted from the receipt. File within 30 days of the expense.") == [
        "File within 30 days of the expense."
    ]
    got = construction.sentences(PASSAGE)
    assert "File every expense claim within 30 days of the expense." in got  # emphasis dropped
    assert not any(s.startswith(("|", "#")) for s in got)


def test_table_facts_name_row_column_and_neighbours():
    facts = construction.table_facts(PASSAGE)
    assert ("7 days", "Counted from", "The last day of the trip", ["The date of the expense"]) in facts


def test_each_operation_does_what_its_label_says():
    elsewhere = ["Badges cost 200,000 VND to replace.", "A VPN session lasts at most 12 hours."]
    claims = construction.claims_for_context(
        [PASSAGE], np.random.default_rng(1), elsewhere, reference="Within 30 days."
    )
    by_op = {}
    for c in claims:
        by_op.setdefault(c.operation, []).append(c)
        assert c.label == construction.LABEL_OF[c.operation]
    assert {"kept", "table-kept", "number", "unit", "swap", "negation", "added"} <= set(by_op)
    context_numbers = set(numbers(PASSAGE))
    for c in by_op["number"]:
        assert set(numbers(c.claim)) - context_numbers, c.claim  # a value the context never states
    assert any("must" in c.source and "must not" not in c.claim for c in by_op["negation"])
    assert all(c.claim.startswith(c.source.rstrip(".")) for c in by_op["added"])
    assert "reference-number" not in by_op  # "Within 30 days." is too short to be a claim on its own


def test_the_chapter_set_is_balanced_deterministic_and_true_to_its_contexts():
    rows = fdata.constructed_claims()
    assert len(rows) == 420 and sum(r["label"] == "supported" for r in rows) == 200
    assert rows == fdata.constructed_claims()
    assert len({r["id"] for r in rows}) == 420
    for r in rows:
        context = r["context"]
        if r["operation"] == "kept":
            plain = " ".join(re.sub(r"[*`]", "", context).split())
            assert " ".join(re.sub(r"[*`]", "", r["claim"]).split()) in plain, r["id"]
        if r["operation"] in ("number", "reference-number"):
            assert set(numbers(r["claim"])) - set(numbers(context)), r["id"]


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: construction.claims_for_context([], np.random.default_rng(0)), "passages"),
        (lambda: construction.balanced({"q": []}, {"kept": 1}, np.random.default_rng(0)), "not enough candidates"),
        (lambda: construction.balanced({"q": []}, {"rewrite": 1}, np.random.default_rng(0)), "unknown operations"),
    ],
)
def test_bad_input_names_the_argument(call, match):
    with pytest.raises(ValueError, match=match):
        call()
