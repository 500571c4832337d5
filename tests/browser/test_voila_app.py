"""`make app NB=03_metrics_by_hand`: the chapter served by Voila as a standalone app, code hidden, widgets live."""

from __future__ import annotations

import pytest
from labdriver import explorer_page

from labkit.chapters import chapter

pytestmark = pytest.mark.browser

VOILA_RENDER_TIMEOUT_MS = 180_000  # executing 03 takes ~10 s alone; allow for a loaded CI machine


def test_voila_serves_the_03_playground(start_voila, page):
    from playwright.sync_api import expect  # here, so that `make unit` collects this file without playwright

    stem = "03_metrics_by_hand"
    server = start_voila(stem)
    # Voila streams the page while it executes the notebook, so the "load" event only fires once every cell
    # has run; wait for the first bytes instead and give the rendering itself a generous, explicit timeout.
    page.goto(server.url + "/", wait_until="commit", timeout=VOILA_RENDER_TIMEOUT_MS)
    pg = explorer_page(page, chapter("03"), "metrics_playground", stem=f"{stem} (Voila)")
    try:
        expect(pg.root.locator('.lk-value[data-metric="nDCG@k"]')).to_be_visible(timeout=VOILA_RENDER_TIMEOUT_MS)
    except AssertionError as err:
        status = page.locator("h2").all_inner_texts()  # Voila's spinner says "Executing N of M"
        raise AssertionError(
            f"{pg.stem}: the playground never rendered (page says {status}).\n"
            f"Voila log, last lines:\n{server.log_tail(30)}"
        ) from err
    assert page.locator(".jp-CodeCell .jp-InputArea, .jp-InputArea-editor, .cm-editor").count() == 0, (
        f"{pg.stem}: code cells are shown"
    )
    assert "metrics_playground(" not in page.content(), f"{pg.stem}: notebook source leaked into the page"
    text = page.locator("body").inner_text()
    assert "correct." not in text and "not answered yet" not in text, (
        f"{pg.stem}: an exercise check is on the served page, without its answer"
    )
    assert "xercise" not in text and "None with your answer" not in text, (
        f"{pg.stem}: an exercise is on the served page: {text[text.find('xercise') - 80 :][:200]!r}"
    )
    assert "refused, as it should be. ValueError:" in text  # a "what can go wrong" demo, labelled as one
    pg.check("as loaded")
    pg.press_slider("k", "ArrowLeft")
    pg.state["k"] = 4
    pg.check("slider 'k'")
