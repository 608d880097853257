"""End to end: the exported HTML page of the 336-node model, opened from a file in headless Chromium with every
request that is not the file itself refused (and counted: there must be none), searched and expanded like a
reviewer would. Screenshots of each state go to $WORKBENCH_ARTIFACTS/browser-export (or a pytest temporary folder).

Needs what test_browser.py needs (Chromium, Playwright, Graphviz's `dot`); run with `pytest -m browser -p no:xdist`.
"""

from __future__ import annotations

from pathlib import Path

import psutil
import pytest
from helpers.browser import CHROMIUM, CHROMIUM_ARGS, UI_SECONDS, artifact_folder, reap, require_browser

from workbench.views.graph.layout import MATCH_COLOUR, graph_structure
from workbench.views.html_page import export_html

pytestmark = pytest.mark.browser

MAX_PAGE_BYTES = 3_000_000
SEARCHED = "aten_relu_default_42"
MAGENTA = "rgb({}, {}, {})".format(*(int(MATCH_COLOUR[i:i + 2], 16) for i in (1, 3, 5)))


@pytest.fixture(scope="module")
def shots(request, tmp_path_factory) -> Path:
    require_browser()
    return artifact_folder(request, tmp_path_factory, "browser-export", "exported page screenshots")


@pytest.fixture(scope="module")
def exported(shots, tmp_path_factory):
    """The 336-node model's result and its page."""
    import workbench
    from workbench.catalogue.big_graph import stacked_blocks

    case = workbench.Case.model(*stacked_blocks(), "TOSA-1.0+FP")
    result = workbench.run(case.replace(name="stacked_blocks"))
    assert len(result.nodes) == 336
    return result, export_html(result, tmp_path_factory.mktemp("export") / "stacked_blocks.html")


@pytest.fixture
def page(shots):
    """A fresh Chromium page that may load file:// URLs (and data: URIs) only; `page.refused` lists the rest."""
    from playwright.sync_api import sync_playwright

    before = {p.pid for p in psutil.Process().children(recursive=True)}
    playwright = sync_playwright().start()
    browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
    try:
        context = browser.new_context(viewport={"width": 1400, "height": 1100})
        context.set_default_timeout(UI_SECONDS * 1000)
        refused, errors = [], []

        def guard(route):
            url = route.request.url
            if url.startswith(("file://", "data:")):
                route.continue_()
            else:
                refused.append(url)
                route.abort()

        context.route("**/*", guard)
        tab = context.new_page()
        tab.on("pageerror", lambda error: errors.append(str(error)))
        tab.refused, tab.errors = refused, errors
        yield tab
    finally:
        browser.close()
        playwright.stop()
    killed = reap([p for p in psutil.Process().children(recursive=True) if p.pid not in before], "browser process")
    assert not killed, f"processes had to be killed after closing the browser: {killed}"


def stroke_of(page, selector: str) -> str:
    """The computed stroke of the first shape inside the SVG element `selector` picks."""
    return page.eval_on_selector(
        selector, "g => getComputedStyle(g.querySelector('path, polygon, ellipse')).stroke")


def node_selector(name: str) -> str:
    return f"#wb-graph-scroll g.node:has(> title:text-is('{name}'))"


def visible_in_box(page, selector: str) -> bool:
    return page.eval_on_selector(selector, """g => {
        const shape = g.getBoundingClientRect();
        const box = document.getElementById('wb-graph-scroll').getBoundingClientRect();
        return shape.top >= box.top && shape.bottom <= box.bottom && shape.left >= box.left && shape.right <= box.right;
    }""")


@pytest.mark.slow
def test_the_exported_page_opens_offline_searches_and_expands_a_delegate(exported, page, shots):
    from playwright.sync_api import expect

    result, path = exported
    assert path.stat().st_size < MAX_PAGE_BYTES, f"{path.stat().st_size} bytes"
    delegate = graph_structure(result).group_of[SEARCHED]
    page.goto(path.as_uri())

    # opened: collapsed, ten delegate boxes, the sections below
    expect(page.locator("#wb-graph-expand")).to_have_value("__collapsed__")
    expect(page.locator("#wb-graph-scroll g.wb-collapsed")).to_have_count(10)
    for heading in ("Reasons", "Numerics", "TOSA operators", "Error", "Reproduce"):
        expect(page.locator("h2", has_text=heading)).to_have_count(1)
    expect(page.locator("#reasons tbody tr")).to_have_count(336)
    page.screenshot(path=str(shots / "1-opened.png"))

    # searched: the collapsed delegate holding the node is outlined, and the line says where the match is
    page.fill("#wb-graph-search", SEARCHED)
    expect(page.locator("#wb-graph-matches")).to_have_text(f"1 match: {SEARCHED} (inside collapsed {delegate}: 1)")
    box = node_selector(delegate)
    assert page.eval_on_selector(box, "g => g.classList.contains('wb-collapsed') && g.classList.contains('wb-hit')")
    assert stroke_of(page, box) == MAGENTA and visible_in_box(page, box)
    assert page.locator("#wb-graph-scroll g.wb-hit").count() == 1
    page.screenshot(path=str(shots / "2-searched.png"))

    # expanded: the delegate's nodes drawn, the match itself outlined and scrolled into the box
    page.select_option("#wb-graph-expand", delegate)
    expect(page.locator("#wb-graph-matches")).to_have_text(f"1 match: {SEARCHED}")
    expect(page.locator("#wb-graph-scroll g.wb-collapsed")).to_have_count(9)
    node = node_selector(SEARCHED)
    assert stroke_of(page, node) == MAGENTA and visible_in_box(page, node)
    page.screenshot(path=str(shots / "3-expanded.png"))

    # zoomed out: the drawing shrinks in its box around what was in its middle, the match stays outlined in view
    width = page.eval_on_selector("#wb-graph-scroll svg", "s => s.getBoundingClientRect().width")
    for _ in range(5):
        page.click("#wb-graph-zoom-out")
    expect(page.locator("#wb-graph-zoom-text")).to_have_text("50%")
    zoomed = page.eval_on_selector("#wb-graph-scroll svg", "s => s.getBoundingClientRect().width")
    assert zoomed == pytest.approx(width / 2, rel=0.02)
    assert stroke_of(page, node) == MAGENTA and visible_in_box(page, node)
    page.screenshot(path=str(shots / "4-zoomed-out.png"))

    # nothing but the file was asked for, and the page's script raised nothing; the guard does refuse the rest
    assert page.refused == [] and page.errors == []
    page.evaluate("fetch('https://cdn.example.com/lib.js').catch(() => null)")
    assert page.refused == ["https://cdn.example.com/lib.js"]
