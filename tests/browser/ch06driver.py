"""The 06 faithfulness explorer on the page (``labkit.widgets.FaithfulnessExplorer``), and what labkit says."""

from __future__ import annotations

from functools import lru_cache

from labdriver import poll

STEM = "06_faithfulness"


@lru_cache(maxsize=1)
def ch06_inputs():
    """The rows and judges the notebook hands the explorer, rebuilt here from replayed recordings."""
    from labkit import calibration, faithfulness, llm
    from labkit import faithfulness_data as fdata

    rows = {r["qid"]: r for r in fdata.answered()}
    judges = {
        "1.5B": faithfulness.model_judge(llm.Replay(llm.DEFAULT_MODEL)),
        "1.5B + quote guard": faithfulness.model_judge(llm.Replay(llm.DEFAULT_MODEL), guard=True),
        "0.5B": faithfulness.model_judge(llm.Replay(llm.SMALL_MODEL)),
        "lexical": faithfulness.lexical_judge,
        "always supported": calibration.always_supported,
    }
    return rows, judges


class FaithfulnessExplorerPage:
    def __init__(self, page, stem: str = STEM):
        self.page, self.stem = page, stem
        self.root = page.locator(".lk-faithfulness-explorer")
        rows, judges = ch06_inputs()
        self.qid, self.judge, self.mode = next(iter(rows)), next(iter(judges)), "PASS/FAIL"

    def select(self, label: str):
        return (
            self.root.locator(".widget-dropdown")
            .filter(has=self.page.locator("label", has_text=label))
            .locator("select")
        )

    def toggle(self, option: str):
        return self.root.locator(".widget-toggle-button", has_text=option)

    def shown(self) -> tuple:
        verdicts = self.root.locator("li.lk-claim").evaluate_all("els => els.map(e => e.dataset.verdict)")
        if self.mode == "PASS/FAIL":
            head = self.root.locator(".lk-status").evaluate_all("els => els.map(e => e.dataset.status)")
        else:
            head = self.root.locator(".lk-score b").all_inner_texts()
        marks = self.root.locator("mark").count()
        return verdicts, head, marks

    def expected(self) -> tuple:
        from labkit import faithfulness

        rows, judges = ch06_inputs()
        row = rows[self.qid]
        res = faithfulness.faithfulness(row["answer"], row["context"], judges[self.judge])
        verdicts = [v.verdict or "error" for v in res.verdicts]
        head = [res.status] if self.mode == "PASS/FAIL" else ["n/a" if res.score is None else f"{res.score:.2f}"]
        quotes = {v.quote.strip() for v in res.verdicts if v.quote.strip()}
        marks = sum(faithfulness.quote_in_context(q, row["context"]) and q in row["context"] for q in quotes)
        return verdicts, head, marks

    def state(self) -> str:
        return f"question={self.qid!r} judge={self.judge!r} show={self.mode!r}"

    def check(self, widget: str) -> tuple:
        want = self.expected()
        shown = poll(self.shown, want)
        assert shown == want, (
            f"{self.stem}: FaithfulnessExplorer {widget} -> the page shows (verdicts, status/score, highlighted "
            f"quotes) {shown}, labkit says {want} (for {self.state()})"
        )
        return want
