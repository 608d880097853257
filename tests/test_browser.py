"""End to end: the explorer notebook in JupyterLab, driven in headless Chromium like a reviewer would use it.

JupyterLab runs from this Python environment on a free loopback port with a one-off token and throw-away
settings, workspaces, runtime, config and cache folders; it serves a temporary copy of
notebooks/00-explorer.ipynb, so the repository is never touched. Debian's Chromium is driven with Playwright,
kept off the network, with a fresh profile. Screenshots of each state are written to $WORKBENCH_ARTIFACTS
(or a pytest temporary folder); the folder is printed.

Needs Chromium (`bash scripts/ensure-browser.sh`), Playwright (the dev extra) and Graphviz's `dot` (`bash
scripts/ensure-graphviz.sh`: the graph tab opens as its SVG). Without them the tests skip, except under CI=true,
where they fail. Run them alone with `pytest -m browser -p no:xdist`.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import secrets
import shutil
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import psutil  # with IPython, which the notebook's kernel runs on
import pytest

from workbench import catalogue
from workbench.views.graph.partition import KIND_COLOURS
from workbench.views.graph.layout import MATCH_COLOUR
from workbench.ui.explorer import CUSTOM_PROFILE, NO_RESULT, TAB_TITLES

from helpers.browser import (CHROMIUM, CHROMIUM_ARGS, UI_SECONDS, artifact_folder, descendants, free_port, reap,
                             require_browser, say)

pytestmark = pytest.mark.browser

REPO = Path(__file__).resolve().parent.parent
NOTEBOOK = "00-explorer.ipynb"
SERVER_START_SECONDS = 120
NOTEBOOK_RUN_SECONDS = 300  # Run All: the notebook's own case imports executorch and lowers a model
CASE_SECONDS = 180  # one press of Run (the first one may import executorch)
# Lab settings for a predictable page: every cell in the DOM. No news or update prompts comes from the lab defaults
# `make run` uses (the Makefile's LAB_APP_SETTINGS folder), which the tests check.
LAB_SETTINGS = {
    "@jupyterlab/notebook-extension/tracker.jupyterlab-settings": {"windowingMode": "none"},
}
NEWS_PROMPT = "Would you like to get notified about official Jupyter news?"
# In the partition graph's matplotlib picture a node box covers some 2-3 % of the image, a legend swatch under 0.1 %.
NODE_AREA = 0.005
# JavaScript for the matplotlib picture's pixels (RGBA bytes, read through a canvas), used by the colour count.
PICTURE_PIXELS = """const pixels = img => {
    const canvas = document.createElement('canvas');
    canvas.width = img.naturalWidth; canvas.height = img.naturalHeight;
    const ctx = canvas.getContext('2d');
    ctx.drawImage(img, 0, 0);
    return ctx.getImageData(0, 0, canvas.width, canvas.height).data;
};"""
# JavaScript: what of the explorer (the element it is called on) is cut off, as ExplorerPage.clipped describes.
CLIPPED = """root => {
    const found = [];
    const shown = el => el.getClientRects().length > 0 && !el.closest('.wb-graph-scroll svg > g > g, .wb-trace-table');
    const canvas = document.createElement('canvas').getContext('2d');
    const room = el => {
        const style = getComputedStyle(el);
        return el.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
    };
    const labels = '.widget-label, .widget-label-basic, .widget-label-basic span, button, .widget-readout, '
        + '.lm-TabBar-tabLabel, .widget-html-content';
    for (const el of root.querySelectorAll(labels)) {
        if (shown(el) && el.scrollWidth > el.clientWidth + 1) {
            const what = `${el.className || el.tagName}: '${el.innerText.trim()}'`;
            found.push(`${what} needs ${el.scrollWidth} px, has ${el.clientWidth}`);
        }
    }
    for (const el of root.querySelectorAll('input[type=text], input:not([type]), select')) {
        if (!shown(el)) continue;
        const text = el.tagName === 'SELECT' ? (el.selectedOptions[0] || {text: ''}).text
            : (el.value || el.placeholder);
        canvas.font = getComputedStyle(el).font;
        const needs = canvas.measureText(text).width;
        if (needs > room(el) + 1) {
            found.push(`${el.tagName.toLowerCase()}: '${text}' needs ${Math.ceil(needs)} px, has ${room(el)}`);
        }
    }
    // the part of the page an element can show in: its ancestors that clip (overflow other than visible), intersected
    const window_ = el => {
        let left = -Infinity, right = Infinity;
        for (let up = el.parentElement; up; up = up.parentElement) {
            if (getComputedStyle(up).overflowX === 'visible') continue;
            const edges = up.getBoundingClientRect();
            left = Math.max(left, edges.left + up.clientLeft);
            right = Math.min(right, edges.left + up.clientLeft + up.clientWidth);
        }
        return {left, right};
    };
    const outside = el => {
        const place = el.getBoundingClientRect(), room = window_(el);
        return place.left < room.left - 1 || place.right > room.right + 1 ? Math.ceil(place.right - room.right) : 0;
    };
    for (const box of root.querySelectorAll('.wb-graph-scroll')) {
        if (!shown(box)) continue;
        if (outside(box)) found.push(`graph box: ${outside(box)} px beyond what shows it (it cannot be panned there)`);
        for (const line of box.querySelectorAll('svg > g > text')) {
            if (outside(line)) found.push(`graph title: '${line.textContent}' cut off by ${outside(line)} px`);
        }
    }
    return found;
}"""
TRACEBACK = re.compile(r"Traceback \(most recent call last\)|Exception in thread")
# JavaScript: each shown table of a tab panel (the element it is called on) wider than the panel, described; a
# table that would scroll in its own box counts too.
WIDE_TABLES = """panel => [...panel.querySelectorAll('table.wb-table')]
    .filter(table => table.getClientRects().length > 0)
    .map(table => [table, table.getBoundingClientRect(), panel.getBoundingClientRect()])
    .filter(([table, place, room]) => place.width > panel.clientWidth + 1 || place.right > room.right + 1)
    .map(([table, place]) => `a table ${Math.ceil(place.width)} px wide in a ${panel.clientWidth} px pane `
        + `(its box ${table.parentElement.clientWidth} px, the widget ${table.closest('.widget-html').clientWidth} px) `
        + `(columns: ${[...table.querySelectorAll('thead th')].map(th => th.innerText.trim()).join(', ')})`)"""


# -- environment ------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def artifacts(request, tmp_path_factory) -> Path:
    require_browser()
    yield artifact_folder(request, tmp_path_factory, "browser", "browser test artifacts (screenshots, JupyterLab log)",
                          ("*.png", "*.log", "*.txt"))


# -- JupyterLab -------------------------------------------------------------------------------------------
def _makefile_value(name: str) -> str:
    """A `NAME := value` of the Makefile: the lab runs here as `make run` runs it."""
    found = re.search(rf"^{name} :?= *(\S+)$", (REPO / "Makefile").read_text(), re.MULTILINE)
    assert found, f"no {name} in the Makefile"
    return found[1]


class Lab:
    """A JupyterLab server of this environment, on a temporary copy of the explorer notebook."""

    def __init__(self, base: Path, log_path: Path):
        self.base = base
        self.log_path = log_path
        self.root = base / "notebooks"
        self.root.mkdir()
        shutil.copy2(REPO / "notebooks" / NOTEBOOK, self.root / NOTEBOOK)
        self.token = secrets.token_hex(24)
        self.port = 0
        self.process: subprocess.Popen | None = None
        self._log = None
        # the notebook's kernel inherits this environment: nothing of the user's Jupyter/IPython set-up, a cold
        # workbench cache, figures drawn inline
        self.env = dict(os.environ)
        for name in ("JUPYTER_PATH", "JUPYTER_CONFIG_PATH", "JUPYTER_PREFER_ENV_PATH", "JUPYTER_TOKEN"):
            self.env.pop(name, None)
        for name, folder in {
            "JUPYTERLAB_SETTINGS_DIR": "lab-settings",
            "JUPYTERLAB_WORKSPACES_DIR": "lab-workspaces",
            "JUPYTER_RUNTIME_DIR": "jupyter-runtime",
            "JUPYTER_CONFIG_DIR": "jupyter-config",
            "JUPYTER_DATA_DIR": "jupyter-data",
            "IPYTHONDIR": "ipython",
            "WORKBENCH_CACHE_DIR": "workbench-cache",
        }.items():
            (base / folder).mkdir()
            self.env[name] = str(base / folder)
        self.env["MPLBACKEND"] = "module://matplotlib_inline.backend_inline"
        self.env["PYDEVD_DISABLE_FILE_VALIDATION"] = "1"
        for name, settings in LAB_SETTINGS.items():
            path = base / "lab-settings" / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(settings))

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def _api(self, method: str, path: str, timeout: float = 5):
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # loopback: never via a proxy
        request = urllib.request.Request(f"{self.url}{path}", method=method,
                                         headers={"Authorization": f"token {self.token}"})
        with opener.open(request, timeout=timeout) as response:
            return response.status, response.read()

    def log_tail(self, lines: int = 40) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return "(no log)"

    def start(self) -> None:
        for _attempt in range(3):  # the free port may be taken between choosing and binding it
            self.port = free_port()
            command = [
                sys.executable, "-m", "jupyterlab",
                "--no-browser",
                "--ServerApp.ip=127.0.0.1",
                f"--ServerApp.port={self.port}",
                "--ServerApp.port_retries=0",
                f"--ServerApp.root_dir={self.root}",
                f"--IdentityProvider.token={self.token}",
                "--LabApp.news_url=None",
                "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
                f"--LabApp.app_settings_dir={REPO / _makefile_value('LAB_APP_SETTINGS')}",
            ]
            if os.geteuid() == 0:
                command.append("--allow-root")
            self._log = open(self.log_path, "ab")  # noqa: SIM115 - open while the server runs
            self.process = subprocess.Popen(command, cwd=self.root, env=self.env, stdin=subprocess.DEVNULL,
                                            stdout=self._log, stderr=subprocess.STDOUT, start_new_session=True)
            deadline = time.monotonic() + SERVER_START_SECONDS
            while time.monotonic() < deadline and self.process.poll() is None:
                try:
                    if self._api("GET", "/api/status", timeout=2)[0] == 200:
                        return
                except OSError:
                    time.sleep(0.25)
            if self.process.poll() is None:
                self.stop()
                pytest.fail(f"JupyterLab did not answer within {SERVER_START_SECONDS} s; its log:\n"
                            f"{self.log_tail()}", pytrace=False)
            self._log.close()
        pytest.fail(f"JupyterLab exited at start (exit code {self.process.returncode}); its log:\n"
                    f"{self.log_tail()}", pytrace=False)

    def stop(self) -> list[str]:
        """Shut the server and its kernels down, politely first; returns what had to be killed."""
        process, killed = self.process, []
        if process is None:
            return killed
        tree = descendants(process.pid)  # kernels run in their own sessions: track them by parentage
        if process.poll() is None:
            try:
                self._api("POST", "/api/shutdown", timeout=5)
            except OSError:
                pass
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                for sig in (signal.SIGTERM, signal.SIGKILL):
                    try:
                        os.killpg(process.pid, sig)
                    except ProcessLookupError:
                        break
                    try:
                        process.wait(timeout=10)
                        break
                    except subprocess.TimeoutExpired:
                        killed.append(f"JupyterLab server pid {process.pid} (signal {sig.name})")
        try:  # anything left in the server's process group
            os.killpg(process.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        killed += reap(tree, "JupyterLab child")
        if self._log is not None:
            self._log.close()
        return killed


@pytest.fixture(scope="module")
def lab(tmp_path_factory, artifacts):
    server = Lab(tmp_path_factory.mktemp("lab"), artifacts / "jupyterlab.log")
    try:
        server.start()
        yield server
    finally:
        killed = server.stop()
        assert server.process is None or server.process.poll() is not None, "JupyterLab server still running"
        assert not killed, f"processes had to be killed after shutdown: {killed}"


# -- the browser ------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def browser(tmp_path_factory, lab):
    from playwright.sync_api import sync_playwright

    before = {p.pid for p in psutil.Process().children(recursive=True)}
    playwright = sync_playwright().start()
    context = None
    try:
        context = playwright.chromium.launch_persistent_context(
            str(tmp_path_factory.mktemp("chromium-profile")),  # a fresh user data dir
            executable_path=CHROMIUM,
            headless=True,
            args=CHROMIUM_ARGS,
            viewport={"width": 1400, "height": 1500},
            timeout=60_000,
        )
        context.set_default_timeout(UI_SECONDS * 1000)
        yield context
    finally:
        server = {lab.process.pid, *(p.pid for p in descendants(lab.process.pid))}
        ours = [p for p in psutil.Process().children(recursive=True) if p.pid not in before | server]
        try:
            if context is not None:
                context.close()
        finally:
            playwright.stop()
        killed = reap(ours, "browser process")
        assert not killed, f"processes had to be killed after closing the browser: {killed}"


class ExplorerPage:
    """The explorer widget of the notebook's first code cell, as Playwright sees it."""

    def __init__(self, page, artifacts: Path):
        from playwright.sync_api import expect

        self.page = page
        self.expect = expect
        self.artifacts = artifacts
        # the notebook's last cell shows the same explorer again: use the first view
        self.root = page.locator(".jp-OutputArea-output").filter(has=page.locator(".widget-tab")).first
        self.operator = self.root.get_by_label("operator", exact=True)
        self.dtype = self.root.get_by_label("dtype", exact=True)
        self.profile = self.root.get_by_label("profile", exact=True)
        self.custom_profile = self.root.get_by_label("custom", exact=True)
        self.policy = self.root.get_by_label("policy", exact=True)
        self.run_button = self.root.locator(".widget-button", has_text=re.compile(r"^\s*Run\s*$"))
        # controls box: operator/dtype, profile, policy/run rows, then the status line
        self.status = self.root.locator(".wb-status")
        self.arm_backend = self.root.locator(".wb-arm-backend")
        self.profile_status = self.custom_profile.locator(
            "xpath=ancestor::div[contains(@class,'widget-hbox')][1]").locator(".widget-html")
        # the graph tab: Graphviz's SVG, as every graph opens; the matplotlib picture when chosen
        self.graph = self.root.locator(".wb-graph-svg svg").first
        self.picture = self.root.locator("img.wb-graph-picture").first
        self.panel = self.root.locator(".widget-tab-contents > :not(.lm-mod-hidden)")

    @contextlib.contextmanager
    def screenshot_on_failure(self, name: str):
        """A screenshot of the whole page, failure-NAME.png, when the block fails."""
        try:
            yield self
        except BaseException:
            with contextlib.suppress(Exception):  # the page may be gone: the original error is what matters
                self.page.screenshot(path=str(self.artifacts / f"failure-{name}.png"))
            raise

    def screenshot(self, name: str) -> Path:
        path = self.artifacts / f"{name}.png"
        self.root.scroll_into_view_if_needed()
        self.root.screenshot(path=str(path), animations="disabled")
        return path

    def choose(self, op: str, dtype: str, profile: str, policy: str = "stock") -> None:
        self.operator.fill(op)
        self.operator.press("Enter")
        self.expect(self.operator).to_have_value(op)
        # the operator's dtypes offered first: chosen among the last operator's, the choice can be lost when the
        # kernel replaces them
        self.expect(self.dtype.locator("option")).to_have_text(list(catalogue.get(op).dtypes))
        self.dtype.select_option(dtype)
        if profile in self.profile.locator("option").all_inner_texts():
            self.profile.select_option(profile)
        else:  # not a preset: type it
            self.profile.select_option(CUSTOM_PROFILE)
            self.expect(self.custom_profile).to_be_visible()
            self.custom_profile.fill(profile)
        self.policy.select_option(policy)
        self.expect(self.dtype).to_have_value(dtype)
        self.expect(self.policy).to_have_value(policy)

    def choose_int8(self, op: str, profile: str) -> None:
        """`op` as qint8 under `profile`, quantized int8 and untraced: the explorer keeps the quantization and trace
        an earlier case chose."""
        self.choose(op, "qint8", profile)
        self.root.get_by_label("quantization", exact=True).select_option("int8")
        self.root.get_by_label("trace tensors", exact=True).uncheck()

    def run(self, done: str) -> str:
        """Press Run and wait until the status line reports a new result matching `done`; returns it. A result with
        an outcome: also until the graph tab holds its new SVG (whose title says the case and outcome)."""
        shown = self.root.locator(".wb-graph-svg svg")
        shown.evaluate_all("svgs => svgs.forEach(svg => svg.setAttribute('data-wb-before-run', ''))")
        self.expect(self.run_button).to_be_enabled()
        # the status may already read as `done` (the same case shown before): it must be written anew by this Run
        self.status.locator(".widget-html-content").evaluate("el => { el.textContent = '(pressing Run)'; }")
        self.run_button.click()
        self.expect(self.status).to_have_text(re.compile(done), timeout=CASE_SECONDS * 1000)
        self.expect(self.run_button).to_be_enabled(timeout=CASE_SECONDS * 1000)
        status = self.status.inner_text()
        if found := re.match(r"^(.*): outcome (\w+)", status):
            case, outcome = found.groups()  # each result draws a new SVG element, even for the same case
            fresh = self.root.locator(".wb-graph-svg svg:not([data-wb-before-run])").first
            self.expect(fresh).to_contain_text(f"{case}: {outcome}", timeout=UI_SECONDS * 1000)
        return status

    def show_picture(self) -> None:
        """Choose the matplotlib picture in the graph tab; wait until it is drawn (picture_colours) and the SVG
        hidden."""
        self.root.locator(".wb-graph-mode button", has_text=re.compile(r"^\s*picture\s*$")).click()
        self.expect(self.picture).to_be_visible()
        self.picture_colours()
        self.expect(self.graph).to_be_hidden()

    def graph_kinds(self) -> dict[str, int]:
        """How many nodes the graph's SVG draws in each node colour of the partition graph (by their fill)."""
        fills = self.graph.locator("g.node").evaluate_all(
            """nodes => nodes.map(node => {
                const shape = node.querySelector('path, polygon, ellipse');
                return shape ? (shape.getAttribute('fill') || '').toLowerCase() : '';
            })""")
        return {kind: fills.count(colour.lower()) for kind, colour in KIND_COLOURS.items()}

    def picture_colours(self) -> dict[str, float]:
        """The share of the matplotlib picture's pixels in each node colour of the partition graph, read once the
        picture is drawn: decoded, with some pixel neither transparent nor white. The wait and the count are one
        evaluation, so both see the same pixels: on a loaded machine a sized picture has read as blank through a
        canvas, and a picture that was being loaded again between a wait and a later read has too."""
        colours = {kind: [int(hex_[i:i + 2], 16) for i in (1, 3, 5)] for kind, hex_ in KIND_COLOURS.items()}
        count = "async (img, colours) => {" + PICTURE_PIXELS + """
                if (!img.complete || img.naturalWidth <= 100) return false;
                try { await img.decode(); } catch (error) { return false; }
                const data = pixels(img);
                let drawn = false;
                const counts = Object.fromEntries(Object.keys(colours).map(k => [k, 0]));
                for (let i = 0; i < data.length; i += 4) {
                    if (data[i + 3] > 0 && (data[i] < 240 || data[i + 1] < 240 || data[i + 2] < 240)) drawn = true;
                    for (const [kind, [r, g, b]] of Object.entries(colours)) {
                        if (Math.abs(data[i] - r) + Math.abs(data[i + 1] - g) + Math.abs(data[i + 2] - b) < 12) {
                            counts[kind] += 1;
                        }
                    }
                }
                if (!drawn) return false;
                const total = data.length / 4;
                return Object.fromEntries(Object.entries(counts).map(([k, n]) => [k, n / total]));
            }"""
        # Polled from here rather than with wait_for_function: that takes the promise an async predicate returns
        # as truthy and hands back whatever it resolves to, false included.
        deadline = time.monotonic() + UI_SECONDS
        while True:
            shares = self.picture.evaluate(count, colours)
            if shares or time.monotonic() > deadline:
                break
            self.page.wait_for_timeout(200)
        assert shares, f"the matplotlib picture was not drawn within {UI_SECONDS} s"
        return shares

    def tab(self, title: str):
        """Select a result tab; returns the locator of its (now visible) content."""
        self.root.get_by_role("tab", name=title, exact=True).click()
        self.expect(self.root.get_by_role("tab", name=title, exact=True)).to_have_attribute("aria-selected", "true")
        self.expect(self.panel).to_be_visible()
        return self.panel

    def table(self, title: str) -> list[dict[str, str]]:
        """The rows of the table in a result tab, as dicts by column header."""
        return self.tab(title).locator("table.wb-table").first.evaluate(
            """table => {
                const heads = [...table.querySelectorAll('thead th')].map(th => th.innerText.trim());
                return [...table.querySelectorAll('tbody tr')].map(tr => Object.fromEntries(
                    [...tr.querySelectorAll('td')].map((td, i) => [heads[i], td.innerText.trim()])));
            }"""
        )

    def wide_tables(self, title: str) -> list[str]:
        """The tables of result tab `title` wider than its pane, each described; [] when all fit."""
        return self.tab(title).evaluate(WIDE_TABLES)

    def tabs_fit(self, name: str, titles: tuple[str, ...]) -> None:
        """At each window width of TABLE_WIDTHS, a screenshot of each tab of `titles` (NAME-TITLE-WIDTH.png);
        asserts that no table is wider than its tab and nothing is cut off."""
        size = self.page.viewport_size
        try:
            for width in TABLE_WIDTHS:
                self.page.set_viewport_size({"width": width, "height": size["height"]})
                self.page.wait_for_timeout(300)  # the layout follows the window
                for title in titles:
                    wide = self.wide_tables(title)
                    self.screenshot(f"{name}-{title.lower().replace(' ', '-')}-{width}")
                    assert not wide, f"{title} at a window {width} px wide: {wide}"
                    assert not self.clipped(), f"{title} at a window {width} px wide: {self.clipped()}"
        finally:
            self.page.set_viewport_size(size)

    def clipped(self) -> list[str]:
        """The visible labels, buttons, tab titles, texts in inputs and drop-downs (a placeholder too) and graph
        title lines of the explorer whose text does not fit: each described, [] when all fit. The graph itself pans
        in its box and the trace table scrolls: their insides are not counted, the graph's title is (whole in the
        box before any panning)."""
        return self.root.evaluate(CLIPPED)

    def tracebacks(self) -> list[str]:
        """Text of every cell output (outside the widget views) and of the status lines showing a traceback."""
        texts = self.status.all_inner_texts() + self.profile_status.all_inner_texts()
        return _cell_tracebacks(self.page) + [text for text in texts if TRACEBACK.search(text)]


def _cell_tracebacks(page) -> list[str]:
    """The cell outputs (other than widget views) that show a Python traceback."""
    texts = page.locator(".jp-Notebook .jp-OutputArea-output").evaluate_all(
        """outputs => outputs.filter(o => !o.querySelector('.jupyter-widgets')).map(o => o.innerText)""")
    return [text for text in texts if TRACEBACK.search(text)]


def _wait_for_kernel_idle(page, timeout: float) -> None:
    from playwright.sync_api import expect

    expect(page.locator(".jp-StatusBar-TextItem", has_text=re.compile(r"\| Idle$"))).to_be_visible(
        timeout=timeout * 1000)


@pytest.fixture(scope="module")
def explorer(browser, lab, artifacts):
    """The explorer notebook opened in JupyterLab, every cell run, the explorer widget rendered."""
    from playwright.sync_api import expect

    expect.set_options(timeout=UI_SECONDS * 1000)
    page = browser.new_page()
    console_errors: list[str] = []
    page.on("console", lambda msg: console_errors.append(msg.text) if msg.type == "error" else None)
    page.on("pageerror", lambda exc: console_errors.append(str(exc)))
    try:
        page.goto(f"{lab.url}/lab/tree/{NOTEBOOK}?token={lab.token}", wait_until="domcontentloaded",
                  timeout=60_000)
        expect(page.locator(".jp-NotebookPanel .jp-Notebook .jp-CodeCell").first).to_be_visible(timeout=90_000)
        _wait_for_kernel_idle(page, 120)  # kernel started
        page.locator(".jp-NotebookPanel .jp-Notebook").first.click(position={"x": 5, "y": 5})
        page.locator(".lm-MenuBar-itemLabel", has_text=re.compile(r"^Run$")).click()
        page.locator(".lm-Menu-itemLabel", has_text=re.compile(r"^Run All Cells$")).click()
        prompts = page.locator(".jp-Notebook .jp-CodeCell .jp-InputPrompt")
        deadline = time.monotonic() + NOTEBOOK_RUN_SECONDS
        while True:  # every code cell executed: "[n]:", none pending "[*]:" or unrun "[ ]:"
            texts = [t.strip() for t in prompts.all_inner_texts()]
            if texts and all(re.fullmatch(r"\[\d+\]:", t) for t in texts):
                break
            if errors := _cell_tracebacks(page):  # Run All stops at a failing cell
                pytest.fail(f"a cell failed during Run All Cells:\n{errors[0]}", pytrace=False)
            if time.monotonic() > deadline:
                page.screenshot(path=str(artifacts / "00-run-all-timeout.png"))
                pytest.fail(f"Run All Cells did not finish within {NOTEBOOK_RUN_SECONDS} s: prompts {texts}",
                            pytrace=False)
            page.wait_for_timeout(500)
        _wait_for_kernel_idle(page, UI_SECONDS)
        ui = ExplorerPage(page, artifacts)
        expect(ui.run_button).to_be_visible()
        expect(ui.root.get_by_role("tab")).to_have_text(list(TAB_TITLES))
        page.screenshot(path=str(artifacts / "00-notebook-run.png"))
        assert not ui.tracebacks(), f"a cell output shows a traceback: {ui.tracebacks()}"
        yield ui
    except BaseException:
        with contextlib.suppress(Exception):  # the page may be gone: the original error is what matters
            page.screenshot(path=str(artifacts / "failure-page.png"))
        raise
    finally:
        (artifacts / "browser-console-errors.txt").write_text("\n".join(console_errors))
        page.close()


# -- the tests --------------------------------------------------------------------------------------------
def test_after_run_all_the_controls_say_what_produced_the_shown_result(explorer):
    """After Run All the top explorer shows the case "Start here" describes (cumsum [int64] TOSA-1.0+INT), its
    controls set to it. The notebook's last cell shows its own model's result in an explorer of its own
    (`mine_explorer.show(mine)`), which the controls cannot express: a line above its status says so, and what Run
    runs. No news prompt covers the page."""
    with explorer.screenshot_on_failure("run-all-shown") as ui:
        ui.expect(ui.status).to_have_text(re.compile(r"^cumsum \[int64\] TOSA-1\.0\+INT: outcome fallback"))
        ui.expect(ui.root.locator(".wb-shown-elsewhere")).to_have_text("")
        ui.expect(ui.operator).to_have_value("cumsum")
        ui.screenshot("00-run-all-shows-the-start-here-case")
        last = ui.page.locator(".jp-OutputArea-output").filter(has=ui.page.locator(".widget-tab")).last
        ui.expect(last.locator(".wb-status")).to_have_text(
            re.compile(r"^model:Mine \[float32,int64\] TOSA-1\.0\+FP: outcome "))
        shown = last.locator(".wb-shown-elsewhere")
        ui.expect(shown).to_contain_text("showing model:Mine [float32,int64] TOSA-1.0+FP, policy stock")
        ui.expect(shown).to_contain_text("Run runs the controls' case")
        last.scroll_into_view_if_needed()
        last.screenshot(path=str(ui.artifacts / "00-run-all-shows-the-notebook-model.png"))
        ui.expect(ui.page.get_by_text(NEWS_PROMPT)).to_have_count(0)


# Widths of the browser window: the tests' own, and a laptop's with JupyterLab's file browser open.
WINDOW_WIDTHS = (1400, 1100)
# Widths the result tables are checked at: a laptop's and a desktop monitor's.
TABLE_WIDTHS = (1280, 1920)


def test_nothing_is_clipped_at_the_default_notebook_width(explorer):
    with explorer.screenshot_on_failure("clipped") as ui:
        size = ui.page.viewport_size
        try:
            for width in WINDOW_WIDTHS:
                ui.page.set_viewport_size({"width": width, "height": size["height"]})
                ui.page.wait_for_timeout(300)  # the layout follows the window
                ui.screenshot(f"00-notebook-width-{width}")
                assert not ui.clipped(), f"cut off at a window {width} px wide: {ui.clipped()}"
        finally:
            ui.page.set_viewport_size(size)


def test_cumsum_int64_under_tosa_int_falls_back_to_cpu(explorer):
    with explorer.screenshot_on_failure("cumsum") as ui:
        ui.choose("cumsum", "int64", "TOSA-1.0+INT")
        status = ui.run(r"^cumsum \[int64\] TOSA-1\.0\+INT: outcome \w+")
        ui.screenshot("01-cumsum-int64-fallback-graph")
        assert "outcome fallback" in status, status
        ui.expect(ui.arm_backend).to_have_text(re.compile(r"^Arm backend: installed executorch \d"))
        kinds = ui.graph_kinds()  # the graph opens as Graphviz's SVG, every node of a small graph shown
        assert kinds["cpu"] >= 1, f"no orange (CPU fallback) node in the graph: {kinds}"
        assert kinds["tosa"] == 0, f"a green (delegated) node in the graph: {kinds}"
        ui.expect(ui.graph.locator("g.node.wb-cpu")).to_contain_text("aten_cumsum_default")
        ui.expect(ui.picture).to_be_hidden()
        ui.show_picture()  # the matplotlib picture, one click away
        ui.screenshot("01-cumsum-int64-fallback-picture")
        colours = ui.picture_colours()
        assert colours["cpu"] > NODE_AREA, f"no orange (CPU fallback) node in the picture: {colours}"
        assert colours["tosa"] < NODE_AREA, f"a green (delegated) node in the picture: {colours}"
        rows = {row["node"]: row for row in ui.table("Reasons")}
        ui.screenshot("01-cumsum-int64-fallback-reasons")
        assert rows["aten_cumsum_default"]["placed"] == "CPU", rows
        assert "Non-constant node with int64 output" in rows["aten_cumsum_default"]["reason"], rows
        assert not ui.tracebacks()


def test_add_int32_under_tosa_int_is_one_delegate_with_matching_numbers(explorer):
    with explorer.screenshot_on_failure("add") as ui:
        ui.choose("add", "int32", "TOSA-1.0+INT")
        status = ui.run(r"^add \[int32\] TOSA-1\.0\+INT: outcome \w+")
        ui.screenshot("02-add-int32-delegated-graph")
        assert "outcome delegated" in status and "numerics match" in status, status
        kinds = ui.graph_kinds()
        assert kinds["tosa"] >= 1, f"no green (delegated) node in the graph: {kinds}"
        assert kinds["cpu"] == 0, f"an orange (CPU) node in the graph: {kinds}"
        ui.expect(ui.graph.locator("g.cluster.wb-tosa.wb-expanded")).to_have_count(1)  # small: expanded
        ui.expect(ui.picture).to_be_hidden()  # a new result opens as the SVG again, the picture chosen before or not
        tosa = ui.table("TOSA")
        ui.screenshot("02-add-int32-delegated-tosa")
        assert {row["delegate"] for row in tosa} == {"delegate_0"}, tosa
        assert "ADD" in {row["op"] for row in tosa}, tosa
        assert {row["node"] for row in tosa if row["op"] == "ADD"} == {"aten_add_tensor"}, tosa  # its provenance
        numerics = ui.tab("Numerics")
        ui.expect(numerics).to_contain_text("numerics: match")
        ui.expect(numerics.locator("img.widget-image")).to_be_visible()
        ui.screenshot("02-add-int32-delegated-numerics")
        assert all(row["match"] == "True" for row in ui.table("Numerics")), ui.table("Numerics")
        assert {row["placed"] for row in ui.table("Reasons")} == {"TOSA"}
        ui.tab("Partition graph")
        assert not ui.tracebacks()


def test_a_quantized_case_in_a16w8_traced_shows_its_tensors_and_their_values(explorer):
    with explorer.screenshot_on_failure("a16w8-trace") as ui:
        ui.choose("sigmoid", "qint8", "TOSA-1.0+INT+int16")
        quantization = ui.root.get_by_label("quantization", exact=True)
        ui.expect(quantization).to_be_visible()  # offered for a quantized dtype only
        quantization.select_option("a16w8")
        ui.root.get_by_label("trace tensors", exact=True).check()
        status = ui.run(r"^sigmoid \[qint8 a16w8\] TOSA-1\.0\+INT\+int16: outcome \w+")
        assert "outcome delegated" in status, status
        numerics = ui.tab("Numerics")
        ui.expect(numerics.locator(".wb-trace")).to_contain_text("every tensor of each delegate")
        rows = numerics.locator(".wb-trace table.wb-table tbody tr")
        assert rows.count() >= 3, rows.count()
        tensor = numerics.get_by_label("tensor", exact=True)
        tensor.select_option(index=rows.count() - 1)
        ui.expect(numerics.locator(".wb-trace-values")).to_contain_text("reference:")
        ui.screenshot("03-a16w8-trace-numerics")
        ui.expect(quantization).to_have_value("a16w8")
        ui.root.get_by_label("trace tensors", exact=True).uncheck()
        assert not ui.tracebacks(), ui.tracebacks()


def test_an_invalid_profile_is_an_inline_error_not_a_traceback(explorer):
    """Run with an invalid custom profile after a result was shown: the error, and nothing of that result left on
    screen (summary, graph, tables)."""
    with explorer.screenshot_on_failure("invalid-profile") as ui:
        ui.expect(ui.status).to_have_text(re.compile(r": outcome \w+"))  # an earlier test's result is shown
        ui.choose("add", "int32", "TOSA-9.9+INT")
        ui.expect(ui.profile).to_have_value(CUSTOM_PROFILE)
        ui.expect(ui.profile_status).to_have_text(re.compile(r"^✗ .*TOSA-9\.9\+INT"))
        ui.screenshot("03-invalid-profile-while-typing")
        status = ui.run(r"^✗ ")
        ui.screenshot("03-invalid-profile-on-run")
        assert "invalid TOSA profile 'TOSA-9.9+INT'" in status, status
        assert "Traceback" not in status
        ui.expect(ui.root.locator(".wb-summary")).to_have_text("")
        ui.expect(ui.root.locator(".wb-graph-svg svg")).to_have_count(0)
        ui.expect(ui.root.locator(".wb-graph-note")).to_contain_text(NO_RESULT)
        for title in ("Reasons", "Numerics", "TOSA", "Vela", "VGF", "Error", "Reproduce"):
            panel = ui.tab(title)
            ui.expect(panel.locator("table, pre, img.widget-image:visible")).to_have_count(0)
            shown = panel.inner_text().strip()  # (the TOSA tab's Save button stays, disabled)
            assert shown.splitlines()[0] == NO_RESULT, f"{title} still shows: {shown[:200]}"
        ui.screenshot("03-invalid-profile-after-a-result-tabs-cleared")
        ui.tab("Partition graph")
        assert not ui.tracebacks(), ui.tracebacks()


def _run_new_cell(page, code: str, timeout: float) -> None:
    """Add a code cell at the end of the notebook, type `code` into it and run it; wait until the kernel is idle."""
    cells = page.locator(".jp-Notebook .jp-Cell")
    count = cells.count()
    cells.last.locator(".jp-InputPrompt").click()  # select the last cell (command mode)
    page.keyboard.press("Escape")
    page.keyboard.press("b")  # a new cell below, selected
    from playwright.sync_api import expect

    expect(cells).to_have_count(count + 1)
    cells.last.locator(".cm-content").click()
    page.keyboard.insert_text(code)  # as text: no auto-closed brackets
    page.keyboard.press("Shift+Enter")
    expect(cells.nth(count).locator(".jp-InputPrompt")).to_have_text(re.compile(r"\[\d+\]:"), timeout=timeout * 1000)


BIG_GRAPH_SECONDS = 900  # lowering the 336-node model (about 2 minutes on a busy 2-core machine)


def test_a_300_node_graph_is_collapsed_searchable_and_expandable(explorer):
    """The 336-node stacked_blocks model shown in the explorer: delegates collapsed to boxes, CPU islands open, a
    search for a node name finds it in its collapsed delegate, expanding that delegate shows the node outlined."""
    with explorer.screenshot_on_failure("big-graph") as ui:
        _run_new_cell(ui.page, "from workbench.catalogue.big_graph import stacked_blocks\n"
                               "case = workbench.Case.model(*stacked_blocks(), 'TOSA-1.0+FP')\n"
                               "big = workbench.run(case.replace(name='stacked_blocks'))\n"
                               "explorer.show(big)", BIG_GRAPH_SECONDS)
        ui.expect(ui.status).to_have_text(re.compile(r"^stacked_blocks \[float32\] TOSA-1\.0\+FP: outcome partial"))
        ui.tab("Partition graph")
        graph = ui.root.locator(".wb-graph")
        svg = graph.locator(".wb-graph-svg svg")
        ui.expect(svg).to_be_visible()
        ui.expect(svg.locator("g.node.wb-collapsed.wb-tosa")).to_have_count(10)
        ui.expect(svg.locator("g.cluster.wb-cpu")).to_have_count(9)  # the CPU islands stay open
        ui.expect(svg.locator("g.edge.wb-boundary").first).to_be_attached()
        ui.expect(graph.locator("img.wb-graph-picture")).to_be_hidden()
        scroll = graph.locator(".wb-graph-scroll")
        assert scroll.evaluate("box => box.scrollHeight > box.clientHeight"), "the big graph should scroll (pan)"
        ui.screenshot("04-big-graph-collapsed")

        search = graph.locator(".wb-graph-search input")
        search.fill("aten_relu_default_42")
        search.press("Enter")
        ui.expect(graph.locator(".wb-graph-matches")).to_have_text(
            re.compile(r"^1 match: aten_relu_default_42 \(inside collapsed delegate_\d+: 1\)"))
        box = svg.locator("g.node.wb-collapsed.wb-match")
        ui.expect(box).to_have_count(1)
        ui.expect(box).to_contain_text("1 match: aten_relu_default_42")
        delegate = box.locator("title").text_content()
        box.scroll_into_view_if_needed()
        ui.screenshot("04-big-graph-search-collapsed")

        expand = graph.locator(".wb-graph-expand select")
        expand.select_option(label=expand.locator("option", has_text=f"expand {delegate} (").inner_text())
        match = svg.locator("g.node.wb-match")
        ui.expect(match.locator("title")).to_have_text("aten_relu_default_42")
        ui.expect(svg.locator("g.cluster.wb-expanded.wb-tosa")).to_have_count(1)
        assert match.locator("path, polygon").first.get_attribute("stroke") == MATCH_COLOUR
        match.scroll_into_view_if_needed()
        ui.screenshot("04-big-graph-search-expanded")
        assert not ui.tracebacks(), ui.tracebacks()


# The catalogue's architectures, each under a profile where it shows something, with the outcome it has there.
ARCHITECTURES = [("decoder_block", "int64", "TOSA-1.1+INT+int64", "lowering_error"),
                 ("small_cnn", "float32", "TOSA-1.0+FP", "partial"),
                 ("lstm_step", "int64", "TOSA-1.0+FP", "partial")]


@pytest.mark.parametrize("op,dtype,profile,outcome", ARCHITECTURES, ids=[a[0] for a in ARCHITECTURES])
def test_an_architecture_runs_with_its_summary_and_graph(explorer, op, dtype, profile, outcome):
    with explorer.screenshot_on_failure(op) as ui:
        ui.choose(op, dtype, profile)
        status = ui.run(rf"^{op} \[{dtype}\] {re.escape(profile)}: outcome \w+")
        assert f"outcome {outcome}" in status, status
        ui.expect(ui.root.locator(".wb-summary")).to_have_text(re.compile(
            r"^\d+ of \d+ compute nodes delegated: \d+ delegate\(s\), \d+ CPU island\(s\), \d+ int64 tensor"))
        ui.tab("Partition graph")
        # every graph opens as the zoomable SVG: up to 60 nodes expanded, above that collapsed (ui/graph_view.py)
        ui.expect(ui.graph).to_be_visible(timeout=UI_SECONDS * 1000)
        ui.expect(ui.root.locator(".wb-graph-mode button.mod-active")).to_have_text(re.compile(r"zoomable graph"))
        ui.expect(ui.picture).to_be_hidden()
        ui.screenshot(f"05-architecture-{op}")
        assert not ui.clipped(), ui.clipped()  # a wide graph's title too
        assert not ui.tracebacks(), ui.tracebacks()


COLUMN_GAP_PX = 8  # padding of a table cell, left and right together: two spaces' width and more


def test_result_tables_are_padded(explorer):
    with explorer.screenshot_on_failure("tables") as ui:
        ui.choose("add", "int32", "TOSA-1.0+INT")
        ui.run(r"^add \[int32\] TOSA-1\.0\+INT: outcome \w+")
        for title in ("Reasons", "TOSA", "Numerics"):
            cells = ui.tab(title).locator("table.wb-table").first.locator("th, td")
            ui.expect(cells.first).to_be_visible()
            padding = cells.evaluate_all(
                "cells => cells.map(c => getComputedStyle(c))"
                ".map(s => parseFloat(s.paddingLeft) + parseFloat(s.paddingRight))")
            ui.screenshot(f"06-table-{title.lower()}")
            # Chromium's own 1 px a side leaves the columns' texts touching
            assert min(padding) >= COLUMN_GAP_PX, f"{title}: cells padded less than {COLUMN_GAP_PX} px: {padding}"


def test_a_fresh_explorer_shows_no_broken_image(explorer):
    """A new Explorer() opens its graph tab on the picture mode before anything is drawn: no empty image."""
    with explorer.screenshot_on_failure("fresh-explorer") as ui:
        _run_new_cell(ui.page, "Explorer()", UI_SECONDS)
        fresh = ui.page.locator(".jp-OutputArea-output").filter(has=ui.page.locator(".widget-tab")).last
        ui.expect(fresh.locator(".wb-graph-mode")).to_be_visible()
        fresh.scroll_into_view_if_needed()
        fresh.screenshot(path=str(ui.artifacts / "07-fresh-explorer.png"))
        broken = fresh.locator("img").evaluate_all(
            "images => images.filter(i => i.getClientRects().length > 0 && !(i.complete && i.naturalWidth > 0))"
            ".map(i => i.className)")
        assert not broken, f"an image shown without a picture (a broken-image icon): {broken}"
        ui.expect(fresh.locator(".wb-graph-note")).to_contain_text("no result yet")


def test_an_ethos_u_target_shows_velas_report_in_its_tab(explorer):
    """ethos-u55-128 chosen in the profile drop-down: Vela's summary and per-layer tables in the Vela tab, padded
    and whole; each delegated node's Vela cycles in the graph; the Reasons say NPU."""
    with explorer.screenshot_on_failure("vela") as ui:
        ui.choose_int8("mm", "ethos-u55-128")
        status = ui.run(r"^mm \[qint8 int8\] ethos-u55-128: outcome \w+")
        assert "outcome delegated" in status, status
        ui.expect(ui.graph.locator("g.node.wb-tosa", has_text=re.compile(r"Vela: \d+ cycles")).first).to_be_visible()
        ui.screenshot("08-ethos-u55-graph")
        assert "NPU" in {row["placed"] for row in ui.table("Reasons")}
        panel = ui.tab("Vela")
        summary, layers = panel.locator(".wb-vela-summary table.wb-table"), panel.locator(".wb-vela-layers table")
        ui.expect(summary).to_contain_text("Ethos_U55_128")
        ui.expect(layers.locator("tbody tr").first).to_contain_text("NPU")
        ui.screenshot("08-ethos-u55-vela")
        padding = panel.locator("table.wb-table th, table.wb-table td").evaluate_all(
            "cells => cells.map(c => getComputedStyle(c))"
            ".map(s => parseFloat(s.paddingLeft) + parseFloat(s.paddingRight))")
        assert min(padding) >= COLUMN_GAP_PX, f"Vela tables padded less than {COLUMN_GAP_PX} px: {padding}"
        assert not ui.clipped(), ui.clipped()
        assert not ui.tracebacks(), ui.tracebacks()


def test_a_vgf_target_shows_its_vgf_tab(explorer):
    """vgf:TOSA-1.0+INT chosen in the profile drop-down for small_cnn qint8: the status names each implementation's
    verdict; the VGF tab holds each delegate's .vgf, its segments and the VGF run beside the reference model, padded,
    whole and within the tab at both window widths; the Reasons say VGF."""
    with explorer.screenshot_on_failure("vgf") as ui:
        ui.choose_int8("small_cnn", "vgf:TOSA-1.0+INT")
        status = ui.run(r"^small_cnn \[qint8 int8\] vgf:TOSA-1\.0\+INT: outcome \w+")
        assert "outcome partial" in status and "TOSA reference model: match; VGF run: match" in status, status
        ui.expect(ui.graph.locator("g.cluster.wb-tosa")).to_contain_text(re.compile(r"VGF: [\d.]+ KiB, 1 segment"))
        ui.screenshot("09-vgf-small-cnn-graph")
        assert "VGF" in {row["placed"] for row in ui.table("Reasons")}
        panel = ui.tab("VGF")
        ui.expect(panel.locator(".wb-vgf-files table.wb-table")).to_contain_text("delegate_0")
        ui.expect(panel.locator(".wb-vgf-segments table.wb-table")).to_contain_text("GRAPH")
        ui.expect(panel.locator(".wb-vgf-outputs table.wb-table")).to_contain_text("identical")
        padding = panel.locator("table.wb-table th, table.wb-table td").evaluate_all(
            "cells => cells.map(c => getComputedStyle(c))"
            ".map(s => parseFloat(s.paddingLeft) + parseFloat(s.paddingRight))")
        assert min(padding) >= COLUMN_GAP_PX, f"VGF tables padded less than {COLUMN_GAP_PX} px: {padding}"
        size = ui.page.viewport_size
        try:
            for width in WINDOW_WIDTHS:
                ui.page.set_viewport_size({"width": width, "height": size["height"]})
                ui.page.wait_for_timeout(300)  # the layout follows the window
                wide = ui.wide_tables("VGF")
                ui.screenshot(f"09-vgf-small-cnn-vgf-{width}")
                assert not wide, f"VGF at a window {width} px wide: {wide}"
                assert not ui.clipped(), f"cut off at a window {width} px wide: {ui.clipped()}"
        finally:
            ui.page.set_viewport_size(size)
        assert not ui.tracebacks(), ui.tracebacks()


def test_a_quantized_cnn_on_ethos_u_names_what_made_it_partial_and_its_tables_fit(explorer):
    """small_cnn qint8 under ethos-u55-128: the status line names the argmax (TOSA's ARGMAX gives int32), not a
    quantize/dequantize at the delegate's float boundary; each table tab fits its pane at two window widths."""
    with explorer.screenshot_on_failure("small-cnn-u55") as ui:
        ui.choose_int8("small_cnn", "ethos-u55-128")
        status = ui.run(r"^small_cnn \[qint8 int8\] ethos-u55-128: outcome \w+")
        assert "outcome partial" in status and "aten_argmax_default: TOSA ARGMAX produces int32" in status, status
        assert "quantize" not in status.split(" — ", 1)[1], status
        cpu = {row["node"] for row in ui.table("Reasons") if row["placed"] == "CPU"}
        assert "aten_argmax_default" in cpu, cpu
        ui.tabs_fit("10-small-cnn-u55", ("Partition graph", "Reasons", "Numerics", "TOSA", "Vela"))
        assert not ui.tracebacks(), ui.tracebacks()


def test_decoder_blocks_tabs_fit_and_say_why_there_is_nothing_to_show(explorer):
    """decoder_block int64 under TOSA-1.1+INT+int64 (a lowering error, 69 nodes): no picture offered (too many
    nodes to read), the TOSA tab says lowering failed and why, and each tab fits at two window widths."""
    with explorer.screenshot_on_failure("decoder-block") as ui:
        ui.choose("decoder_block", "int64", "TOSA-1.1+INT+int64")
        status = ui.run(r"^decoder_block \[int64\] TOSA-1\.1\+INT\+int64: outcome \w+")
        assert "outcome lowering_error" in status, status
        ui.expect(ui.tab("TOSA")).to_contain_text(re.compile(r"^no TOSA graph: lowering failed: \w+"))
        ui.expect(ui.tab("Error").locator(".widget-accordion")).to_be_visible()  # an error: its traceback
        graph = ui.tab("Partition graph")
        ui.expect(graph.locator(".wb-graph-mode button")).to_have_text([re.compile(r"zoomable graph")])
        ui.expect(graph.locator(".wb-graph-no-picture")).to_contain_text("too many for the picture to be read")
        ui.tabs_fit("11-decoder-block", ("Partition graph", "Reasons", "TOSA", "Error"))
        ui.choose("add", "int32", "TOSA-1.0+INT")
        ui.run(r"^add \[int32\] TOSA-1\.0\+INT: outcome \w+")
        ui.expect(ui.tab("Error").locator(".widget-accordion")).to_be_hidden()  # no error: no empty traceback
        ui.tab("Partition graph")
        assert not ui.tracebacks(), ui.tracebacks()
