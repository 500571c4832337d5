"""Chapter 06's manifest: what the chapter is made of, read by the build, the tests, the bench and the navigation."""

from __future__ import annotations

from typing import Any

from labkit.chapters.manifest import Chapter, Explorer, Judge
from labkit.generation import llm
from labkit.generation.llm import DEFAULT_MODEL, SMALL_MODEL
from labkit.judges import faithfulness
from labkit.studies import faithfulness_data as fdata


def faithfulness_inputs(rows=None, judges=None) -> dict[str, Any]:
    """What the FaithfulnessExplorer is given: the reader's recorded answers (``rows``, one dict each) and the
    chapter's judges by name, built from this manifest's :class:`Judge` entries. The notebook passes its answers'
    rows and its ``judges``; with none, the recorded answers and the judges on the models ``LABKIT_LLM`` chooses
    (their recorded verdicts by default)."""
    if rows is None:
        rows = fdata.answered()
    if judges is None:
        judges = faithfulness.judges_from(CHAPTER.judges, llm.from_env)
    return {"rows": list(rows), "judges": judges}


CHAPTER = Chapter(
    number="06",
    slug="faithfulness",
    title="Faithfulness",
    summary="claims, a per-claim judge, calibration, context swapping",
    does=(
        "the source's leave example; a local 1.5B reader's answers to 120 handbook questions, split into claims; five "
        "judges (1.5B, 1.5B + quote guard, 0.5B, lexical, always-supported) against rater labels (an AI assistant's, "
        "a second rater's κ): TPR/TNR with intervals, chosen on dev, reported on test; the Rogan–Gladen correction "
        "checked against the labelled truth; 420 claims labelled by construction and what each judge cannot see; you "
        "label claims and the judge is calibrated on your labels; how many labels are enough; relevance in code and "
        "by a model; context swapping, lenient vs strict prompt; a question × judge explorer"
    ),
    status="ready",
    explorers=(Explorer("FaithfulnessExplorer", faithfulness_inputs), Explorer("Labeller")),
    label_sets=("06-claims",),
    plans=(
        "06-answers",
        "06-toy",
        "06-swap",
        "06-strict",
        "06-judge-1.5b",
        "06-judge-0.5b",
        "06-relevance",
        "06-construction-1.5b",
        "06-construction-0.5b",
        "06-atomic",
        "06-relevance-swap",
    ),
    probe=(),
    judges=(  # the candidates are compared and one is chosen on dev; a baseline is only reported
        Judge("1.5B", "model", model=DEFAULT_MODEL),
        Judge("1.5B + quote guard", "model", model=DEFAULT_MODEL, guard=True),
        Judge("0.5B", "model", model=SMALL_MODEL),
        Judge("lexical", "lexical"),
        Judge("always supported", "always supported", candidate=False),
    ),
)
