"""What the browser tests share: Debian's Chromium and the flags that keep it off the network, whether they may
skip (not under CI), their artifact folders, and reaping the processes a browser leaves."""

from __future__ import annotations

import os
import socket
from pathlib import Path

import psutil  # with IPython, which the notebook's kernel runs on
import pytest

from workbench.views.graph.svg import graphviz_missing

CHROMIUM = os.environ.get("WORKBENCH_CHROMIUM", "/usr/bin/chromium")
# Flags that keep Chromium off the network (and quiet) whatever the machine has configured.
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-default-apps",
    "--metrics-recording-only",
    "--no-default-browser-check",
    "--disable-extensions",
    "--disable-domain-reliability",
    "--disable-client-side-phishing-detection",
    "--no-proxy-server",
]
UI_SECONDS = 30  # anything the browser does by itself


def in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() in {"1", "true", "yes"}


def missing_for_browser() -> str | None:
    """What the browser tests lack on this machine, or None."""
    if not (os.path.isfile(CHROMIUM) and os.access(CHROMIUM, os.X_OK)):
        return f"no Chromium at {CHROMIUM} (run scripts/ensure-browser.sh, or set WORKBENCH_CHROMIUM)"
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "the playwright package is not installed (pip install -e '.[dev]')"
    return graphviz_missing()


def require_browser() -> None:
    missing = missing_for_browser()
    if missing is None:
        return
    if in_ci():
        pytest.fail(f"browser tests must run under CI, but {missing}", pytrace=False)
    pytest.skip(missing)


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def descendants(pid: int) -> list:
    try:
        return psutil.Process(pid).children(recursive=True)
    except psutil.NoSuchProcess:
        return []


def reap(processes: list, what: str) -> list[str]:
    """Give `processes` a moment to exit, kill what is left; returns a description of what had to be killed."""
    _, alive = psutil.wait_procs(processes, timeout=10)
    killed = []
    for process in alive:
        try:
            killed.append(f"{what} pid {process.pid} ({' '.join(process.cmdline()[:3])})")
            process.kill()
        except psutil.NoSuchProcess:  # it exited on its own meanwhile: nothing to kill
            pass
    psutil.wait_procs(alive, timeout=10)
    return killed


def artifact_folder(request, tmp_path_factory, name: str, what: str, patterns=("*.png",)) -> Path:
    """$WORKBENCH_ARTIFACTS/<name> (or a pytest temporary folder), emptied of an earlier run's `patterns` files
    and named on the terminal as holding `what`."""
    folder = os.environ.get("WORKBENCH_ARTIFACTS")
    path = Path(folder).resolve() / name if folder else tmp_path_factory.mktemp(name.replace("/", "-"))
    path.mkdir(parents=True, exist_ok=True)
    for old in [file for pattern in patterns for file in path.glob(pattern)]:
        old.unlink()
    say(request.config, f"{what}: {path}")
    return path


def say(config, message: str) -> None:
    """Show a line on the terminal even while output is captured (and in the captured output too)."""
    print(message)
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    capture = config.pluginmanager.get_plugin("capturemanager")
    if reporter is None or capture is None:  # e.g. in an xdist worker: the captured print is what is shown
        return
    with capture.global_and_fixture_disabled():
        reporter.write_line(message)
