"""End to end: a partial model's partition in Google's Model Explorer, in headless Chromium.

The server is started as the explorer's `open_in_model_explorer` starts it (ModelExplorerServer: a child process
on a free loopback port serving `to_model_explorer`'s files), with every HTTP proxy pointing at a closed port so
its own check for a newer release cannot reach PyPI; Chromium resolves no host name but 127.0.0.1. So the page
proves that neither needs the network (it asks only for Google's fonts, which fail). Screenshots of each state go to
$WORKBENCH_ARTIFACTS/browser/model-explorer (or a pytest temporary folder). Needs the `model-explorer` extra.
"""

from __future__ import annotations

import importlib.util
import os
import re
from pathlib import Path
from urllib.parse import urlparse

import pytest

from helpers.browser import CHROMIUM, CHROMIUM_ARGS, artifact_folder, in_ci, require_browser
from helpers.models import partial_model
from workbench.ui.model_explorer_view import INSTALL_HINT, ModelExplorerServer
from workbench.views.model_explorer import to_model_explorer
from workbench.views.graph.partition import KIND_COLOURS

pytestmark = pytest.mark.browser

# Every host name fails to resolve except the loopback address the server is on.
OFFLINE_ARGS = [*CHROMIUM_ARGS, "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1"]
CLOSED_PROXY = "http://127.0.0.1:9"  # the discard port: nothing listens
UI_SECONDS = 60
CPU_REASON = "Non-constant node with int64 output."


def _rgb(hex_colour: str) -> str:
    r, g, b = (int(hex_colour[i:i + 2], 16) for i in (1, 3, 5))
    return f"rgb({r}, {g}, {b})"


@pytest.fixture(scope="module")
def artifacts(request, tmp_path_factory) -> Path:
    """A folder of its own beside test_browser.py's screenshots (whose fixture clears its folder's pictures)."""
    require_browser()
    if importlib.util.find_spec("model_explorer") is None:  # the dev extra installs it
        (pytest.fail if in_ci() else pytest.skip)(INSTALL_HINT)
    return artifact_folder(request, tmp_path_factory, "browser/model-explorer", "Model Explorer screenshots")


@pytest.fixture(scope="module")
def partial_result():
    import workbench

    module, inputs = partial_model()
    return workbench.run_model(module, inputs, "TOSA-1.0+FP")


def _colour_pixels(png: bytes, hex_colour: str) -> int:
    """How many pixels of a screenshot are (nearly) this colour."""
    import io

    import numpy as np
    from PIL import Image

    pixels = np.asarray(Image.open(io.BytesIO(png)).convert("RGB")).astype(int)
    target = np.array([int(hex_colour[i:i + 2], 16) for i in (1, 3, 5)])
    return int((np.abs(pixels - target).sum(axis=2) < 12).sum())


def test_model_explorer_shows_placement_colours_and_a_cpu_nodes_reason(partial_result, artifacts, tmp_path):
    from playwright.sync_api import expect, sync_playwright

    assert partial_result.outcome.value == "partial"
    offline = {**os.environ, **{name: CLOSED_PROXY for name in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy",
                                                                 "https_proxy", "ALL_PROXY", "all_proxy")},
               "NO_PROXY": "127.0.0.1", "no_proxy": "127.0.0.1"}
    server = ModelExplorerServer(to_model_explorer(partial_result, tmp_path / "files"), env=offline).start()
    requests, failed = [], []
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, args=OFFLINE_ARGS, headless=True)
            try:
                page = browser.new_page(viewport={"width": 1400, "height": 900})
                page.set_default_timeout(UI_SECONDS * 1000)
                expect.set_options(timeout=UI_SECONDS * 1000)
                page.on("request", lambda request: requests.append(request.url))
                page.on("requestfailed", lambda request: failed.append(request.url))
                page.goto(server.url)

                # Loaded: the delegate and the module collapsed; the node data table lists every node.
                expect(page.get_by_text("aten.cumsum", exact=True).first).to_be_visible()
                page.screenshot(path=str(artifacts / "1-collapsed.png"))
                cpu_cell = page.get_by_text("CPU", exact=True).first
                delegated_cell = page.get_by_text("delegated", exact=True).first
                assert cpu_cell.evaluate("e => getComputedStyle(e).backgroundColor") == _rgb(KIND_COLOURS["cpu"])
                assert delegated_cell.evaluate("e => getComputedStyle(e).backgroundColor") == \
                    _rgb(KIND_COLOURS["tosa"])

                # Every layer expanded: delegated and CPU nodes drawn in their colours on the graph.
                page.locator("mat-icon", has_text="unfold_more_double").click()
                page.mouse.move(700, 880)  # off the button: no tooltip over the graph
                page.wait_for_timeout(1500)
                graph = page.screenshot(path=str(artifacts / "2-expanded.png"), clip={
                    "x": 0, "y": 100, "width": 1000, "height": 700})
                assert _colour_pixels(graph, KIND_COLOURS["tosa"]) > 2000
                assert _colour_pixels(graph, KIND_COLOURS["cpu"]) > 2000

                # The CPU cumsum found and selected: its FX name, placement and the partitioner's reason.
                search = page.get_by_placeholder("Search nodes/layers by regex")
                search.fill("cumsum")
                search.press("Enter")
                # A search result is a tree item whose data-id is the node id; Alt+click locates and selects it.
                page.locator('mat-tree-node[data-id="aten_cumsum_default"]').click(modifiers=["Alt"])
                expect(page.get_by_text(CPU_REASON, exact=True).locator("visible=true")).to_have_count(1)
                info = page.locator("body").inner_text()
                assert re.search(r"id\s+aten_cumsum_default", info), info
                assert re.search(r"placement\s+CPU", info), info
                page.screenshot(path=str(artifacts / "3-cpu-node-selected.png"))
            finally:
                browser.close()
    finally:
        server.stop()
    assert not server.running
    off_loopback = {urlparse(url).hostname for url in requests if urlparse(url).hostname != "127.0.0.1"}
    assert off_loopback <= {"fonts.gstatic.com"}, off_loopback
    assert all(url in failed for url in requests if urlparse(url).hostname != "127.0.0.1")
    assert any(re.search(r"/worker-\w+\.js$", url) for url in requests)  # the graph was laid out by the app
