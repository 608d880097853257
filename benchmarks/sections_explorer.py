"""Section 4 of the benchmark table: the explorer's latency from Run to its first tab and to all tabs, and the
explorer driven headlessly (also for section 6's profile of one Run)."""

from __future__ import annotations

import contextlib
import statistics
import time

import workbench
from bench_common import TARGETS, Row, Settings, Table, failed, say, seconds, switched, timed, verdict

EXPLORER_CASE = ("add", "float32", "TOSA-1.0+FP")
# Every tab's widget, and those Run fills before it returns (the rest may be rendered lazily, on render_all_tabs).
TABS = ("graph_image", "reasons_html", "numerics_html", "tosa_html", "error_html", "reproduce_html")
FIRST_TAB = ("summary_html", "reasons_html")

_explorer = None


def warm_explorer():
    """An explorer on the benchmark case, driven headlessly, after one warm-up Run (all tabs rendered)."""
    global _explorer
    if _explorer is None:
        from workbench.ui import Explorer

        explorer = Explorer(threaded=False)
        op, dtype, profile = EXPLORER_CASE
        explorer.op.value, explorer.dtype.value, explorer.profile.value = op, dtype, profile
        press_run(explorer)
        render_all = all_tabs_renderer(explorer)
        if render_all is not None:
            render_all()
        _explorer = explorer
    return _explorer


def all_tabs_renderer(explorer):
    """The explorer's `render_all_tabs`, or None where it renders every tab in show() (no lazy tabs)."""
    return getattr(explorer, "render_all_tabs", None)


def graph_filled(explorer) -> bool:
    view = explorer.graph_view
    return bool(view.picture.value or view.svg_box.value)


def empty_tabs(explorer) -> list[str]:
    empty = [tab for tab in TABS if not getattr(explorer, tab).value]
    if "graph_image" in empty and graph_filled(explorer):  # a large graph is drawn as SVG, not the picture
        empty.remove("graph_image")
    return empty


def press_run(explorer) -> float:
    """Seconds from clicking Run to the first tab shown (with threaded=False the click returns when it is)."""
    for tab in TABS:  # emptied first, so a tab left over from the last Run cannot pass for a filled one
        getattr(explorer, tab).value = b"" if tab == "graph_image" else ""
    explorer.graph_view.svg_box.value = explorer.summary_html.value = ""
    seconds_taken = timed(explorer.run_button.click)
    empty = [name for name in FIRST_TAB if not getattr(explorer, name).value]
    empty += [] if graph_filled(explorer) else ["graph"]
    if empty:
        raise RuntimeError(f"left empty after Run: {', '.join(empty)} ({explorer.status.value})")
    return seconds_taken


def render_rest(explorer) -> float:
    """Seconds of render_all_tabs after a Run; every tab must be filled after it."""
    render_all = all_tabs_renderer(explorer)
    start = time.perf_counter()
    render_all()
    taken = time.perf_counter() - start
    empty = empty_tabs(explorer)
    if empty:
        raise RuntimeError(f"tabs left empty after render_all_tabs: {', '.join(empty)}")
    return taken


@contextlib.contextmanager
def run_case_clock(spent: list):
    """Times each case the explorer runs (its `run` of a Case), so a click splits into running the case and the
    explorer's own work."""
    from workbench.ui import explorer as explorer_module

    original = explorer_module.run

    def clocked(*args, **kwargs):
        start = time.perf_counter()
        try:
            return original(*args, **kwargs)
        finally:
            spent.append(time.perf_counter() - start)

    explorer_module.run = clocked
    try:
        yield
    finally:
        explorer_module.run = original


def measure_clicks(explorer, reps: int) -> dict:
    """Per repetition: the click (Run to first tab), the run_case inside it, render_all_tabs after it (when the
    explorer has it) and run_case alone, interleaved."""
    op, dtype, profile = EXPLORER_CASE
    lazy = all_tabs_renderer(explorer) is not None
    times = {"click": [], "inside": [], "rest": [], "alone": []}
    with switched(True):
        for _ in range(reps):
            with run_case_clock(times["inside"]):
                times["click"].append(press_run(explorer))
            if lazy:
                times["rest"].append(render_rest(explorer))
            elif empty_tabs(explorer):
                raise RuntimeError(f"tabs left empty after Run: {', '.join(empty_tabs(explorer))}")
            times["alone"].append(timed(lambda: workbench.run_case(op, dtype, profile)))
    return times


def explorer_latency(table: Table, config: Settings) -> None:
    label = "{} [{}] {}".format(*EXPLORER_CASE)
    say(f"  4. explorer: {label}")
    try:
        explorer = warm_explorer()
        times = measure_clicks(explorer, config.reps)
    except Exception as exc:
        table.add(4, Row(f"{label}: Run pressed to the first tab", failed(exc)))
        return
    # The overhead is taken within each click (click less its own run_case), which load affects far less than
    # the difference of two separately measured medians.
    first = [click - run for click, run in zip(times["click"], times["inside"])]
    limit = TARGETS["explorer_overhead_s"]
    table.add(4, Row(f"{label}: Run pressed to the first tab (run_case + show), warm",
                     seconds(statistics.median(times["click"]))))
    if times["rest"]:
        to_all = [click + rest for click, rest in zip(times["click"], times["rest"])]
        table.add(4, Row(f"{label}: Run pressed to all tabs (+ render_all_tabs)", seconds(statistics.median(to_all))))
    else:
        table.add(4, Row(f"{label}: Run pressed to all tabs (+ render_all_tabs)", "not available",
                         "", "no Explorer.render_all_tabs: show() fills every tab, so the row above is all tabs"))
    table.add(4, Row(f"{label}: run_case alone", seconds(statistics.median(times["alone"]))))
    overhead = statistics.median(first)
    table.add(4, Row("explorer overhead to the first tab (each click less its run_case)", seconds(overhead),
                     f"<= {limit} s", verdict(overhead <= limit)))
    if times["rest"]:
        overall = statistics.median(f + rest for f, rest in zip(first, times["rest"]))
        table.add(4, Row("explorer overhead to all tabs (the above plus render_all_tabs)", seconds(overall), "",
                         f"render_all_tabs alone {seconds(statistics.median(times['rest']))}"))
    else:
        table.add(4, Row("explorer overhead to all tabs (the above plus render_all_tabs)", "not available"))
