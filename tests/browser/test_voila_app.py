"""`make app NB=03_metrics_by_hand`: the chapter served by Voila as a standalone app, code hidden, widgets live."""

from __future__ import annotations

import pytest
from labdriver import Playground

pytestmark = pytest.mark.browser


def test_voila_serves_the_03_playground(start_voila, page):
    from playwright.sync_api import expect  # here, so that `make unit` collects this file without playwright

    stem = "03_metrics_by_hand"
    server = start_voila(stem)
    page.goto(server.url + "/")
    pg = Playground(page, f"{stem} (Voila)")
    # Voila executes the whole notebook before the widgets connect: the cold-kernel timeout applies
    expect(
        pg.root.locator('.lk-value[data-metric="nDCG@k"]'), f"{pg.stem}: the playground never rendered"
    ).to_be_visible()
    assert page.locator(".jp-CodeCell .jp-InputArea, .jp-InputArea-editor, .cm-editor").count() == 0, (
        f"{pg.stem}: code cells are shown"
    )
    assert "metrics_playground(" not in page.content(), f"{pg.stem}: notebook source leaked into the page"
    pg.check("as loaded")
    pg.press_slider("k", "ArrowLeft")
    pg.k = 4
    pg.check("slider 'k'")
