"""The explorer: choose operator, dtype, profile and policy, press Run, read the result in tabs.

A thin layer: it runs a `Case` and arranges the headless views (views/) in widgets that hold
their content directly (HTML, PNG images), so it works the same in JupyterLab and when driven in tests.

After Run only the status and summary lines, the partition graph, the reasons and the tab Run opens are
rendered at once; every other tab is rendered when it is first opened, once per result (`render_all_tabs` renders
them all, e.g. for tests and benchmarks).
"""

from __future__ import annotations

import html
import threading

import ipywidgets as widgets

from .. import catalogue, policies, views
from ..core import dtypes, quantization
from ..core.errors import WorkbenchError
from ..core.text import case_label, numerics_sources
from ..core.outcomes import COMPILE_FAILURES
from ..pipeline.case import Case
from ..pipeline.run import run
from ..stages import transform_passes
from ..stack import arm_backend, profiles
from ..views.graph.partition import partition_graph
from .flatbuffers import save_flatbuffers as write_flatbuffers
from .graph_view import GraphView
from .html_parts import EXPLORER_STYLE, error_parts, summary_html, table_html, tosa_tab_html
from .shown_case import CUSTOM_PROFILE, choose_profile, set_controls, shown_line
from .trace_view import TraceView
from .vela_view import VelaView, status_reason
from .vgf_view import VgfView

TAB_TITLES = ("Partition graph", "Reasons", "Numerics", "TOSA", "Vela", "VGF", "Error", "Reproduce")
GRAPH_TAB, REASONS_TAB, NUMERICS_TAB, TOSA_TAB, VELA_TAB, VGF_TAB, ERROR_TAB, REPRODUCE_TAB = range(len(TAB_TITLES))
# Rendered with every result, being what is read first; the other tabs wait until opened.
EAGER_TABS = (GRAPH_TAB, REASONS_TAB)
NO_RESULT = "no result: the last Run was refused (see the line above the tabs)"


def _row(*children) -> widgets.HBox:
    """A row of controls that wraps in a narrow notebook rather than cutting its last controls off."""
    return widgets.HBox(list(children), layout=widgets.Layout(flex_flow="row wrap"))


class Explorer(widgets.VBox):
    """Explorer(threaded=True): with threaded=False, Run blocks until the result is shown (used by tests)."""

    def __init__(self, op: str = "cumsum", dtype: str = "int64", profile: str = "TOSA-1.0+INT", *,
                 threaded: bool = True):
        self.threaded = threaded
        self.result = None
        self.graph = None
        self._worker: threading.Thread | None = None
        self._rendered_tabs: set[int] = set()  # of the shown result
        # Run shows results from its worker thread while a tab opened in the browser renders on the kernel's:
        # one at a time, so a tab is rendered once and never from an older result.
        self._render_lock = threading.RLock()
        controls = self._build_controls(op)
        self.tabs = self._build_tabs()
        self._tab_renderers = {GRAPH_TAB: self._render_graph, REASONS_TAB: self._render_reasons,
                               NUMERICS_TAB: self._render_numerics, TOSA_TAB: self._render_tosa,
                               VELA_TAB: self.vela_view.show, VGF_TAB: self.vgf_view.show,
                               ERROR_TAB: self._render_error, REPRODUCE_TAB: self._render_reproduce}

        self.op.observe(self._on_op, names="value")
        self.dtype.observe(self._on_dtype, names="value")
        self.profile.observe(self._on_profile, names="value")
        self.custom_profile.observe(self._on_custom_profile, names="value")
        self.run_button.on_click(lambda _: self.run())
        self.save_button.on_click(lambda _: self.save_flatbuffers())
        self.culprits_button.on_click(lambda _: self.find_culprits())
        self.tabs.observe(self._on_tab_selected, names="selected_index")

        self._on_op({"new": op})
        if dtype in self.dtype.options:
            self.dtype.value = dtype
        choose_profile(self, profile)
        super().__init__([widgets.HTML(EXPLORER_STYLE), controls, self.tabs])
        self.add_class("wb-explorer")

    def _build_controls(self, op: str) -> widgets.VBox:
        self.op = widgets.Combobox(options=catalogue.names(), value=op, ensure_option=True,
                                   placeholder="type to search operators", description="operator")
        self.dtype = widgets.Dropdown(description="dtype")
        # how a quantized dtype (qint8) is quantized; shown only for one
        self.quantization = widgets.Dropdown(options=quantization.CHOICES, value=quantization.DEFAULT.name,
                                             description="quantization", style={"description_width": "initial"},
                                             layout=widgets.Layout(display="none"))
        self.profile = widgets.Dropdown(options=list(profiles.PRESETS) + [CUSTOM_PROFILE], description="profile")
        self.custom_profile = widgets.Text(placeholder="e.g. TOSA-1.1+INT+int16", description="custom",
                                           continuous_update=True, layout=widgets.Layout(display="none"))
        self.profile_status = widgets.HTML()
        self.policy = widgets.Dropdown(options=policies.names(), description="policy")
        # executorch's own Arm tests add some of these (e.g. InsertInt32CastsAfterInt64PlaceholdersPass); typed
        # names complete from the Arm backend's passes.
        self.transform_passes = widgets.TagsInput(value=[], allowed_tags=transform_passes.names(),
                                                  allow_duplicates=False, placeholder="transform passes (optional)",
                                                  layout=widgets.Layout(width="60%"))
        self.isolate = widgets.Checkbox(value=False, description="isolate (child process: crash and hang safe)",
                                        indent=False, layout=widgets.Layout(width="auto"))
        # every delegate's tensors beside eager's (stages/trace.py), shown in the Numerics tab
        self.trace = widgets.Checkbox(value=False, description="trace tensors", indent=False,
                                      layout=widgets.Layout(width="auto"))
        self.run_button = widgets.Button(description="Run", button_style="primary", icon="play")
        self.progress = widgets.IntProgress(value=0, min=0, max=1, description="", bar_style="info",
                                            layout=widgets.Layout(display="none", width="120px"))
        # what the shown result is when the controls cannot say it (ui/shown_case.py)
        self.shown_html = widgets.HTML().add_class("wb-shown-elsewhere")
        self.status = widgets.HTML().add_class("wb-status")  # classes: stable handles for the browser tests
        # The partition in three numbers (batch/model_summary.py): what matters on a whole model.
        self.summary_html = widgets.HTML().add_class("wb-summary")
        # Which Arm backend runs: the installed executorch's, or a checkout's (workbench.use_arm_backend).
        self.backend_html = widgets.HTML(f"<small>Arm backend: {html.escape(arm_backend.active().label)}</small>")
        self.backend_html.add_class("wb-arm-backend")
        return widgets.VBox([
            _row(self.op, self.dtype, self.quantization),
            _row(self.profile, self.custom_profile, self.profile_status),
            _row(self.policy, self.isolate, self.trace, self.run_button, self.progress),
            self.transform_passes,
            self.backend_html,
            self.shown_html,
            self.status,
            self.summary_html,
        ])

    def _build_tabs(self) -> widgets.Tab:
        # Graphviz's zoomable SVG (small graphs expanded, large ones collapsed); the matplotlib picture (graph_image)
        # when chosen, or without Graphviz (ui/graph_view.py)
        self.graph_view = GraphView()
        self.graph_image = self.graph_view.picture
        self.reasons_html = widgets.HTML()
        self.numerics_html = widgets.HTML()
        self.numerics_image = widgets.Image(format="png", layout=widgets.Layout(display="none"))
        self.trace_view = TraceView()  # a traced result's tensors, below the outputs
        self.tosa_html = widgets.HTML()
        self.save_button = widgets.Button(description="Save flatbuffer", icon="download", disabled=True)
        self.save_status = widgets.HTML()
        self.vela_view = VelaView()  # an Ethos-U result's Vela report (ui/vela_view.py)
        self.vgf_view = VgfView()  # a VGF result's .vgf files and VGF run (ui/vgf_view.py)
        self.error_html = widgets.HTML()
        self.traceback_html = widgets.HTML()
        self.traceback_fold = widgets.Accordion(children=[self.traceback_html], selected_index=None)
        self.traceback_fold.set_title(0, "full traceback")
        # For a lowering_error: re-lower with nodes kept on CPU until it succeeds (batch/authoring/culprits.py).
        self.culprits_button = widgets.Button(description="Find culprits", icon="search", disabled=True,
                                              tooltip="which accepted nodes must stay on CPU for lowering to succeed")
        self.culprits_button.add_class("wb-find-culprits")
        self.culprits_html = widgets.HTML().add_class("wb-culprits")
        self.reproduce_html = widgets.HTML()
        tabs = widgets.Tab(children=[
            self.graph_view,
            self.reasons_html,
            widgets.VBox([self.numerics_html, self.numerics_image, self.trace_view]),
            widgets.VBox([self.tosa_html, widgets.HBox([self.save_button, self.save_status])]),
            self.vela_view,
            self.vgf_view,
            widgets.VBox([self.error_html, self.traceback_fold, self.culprits_button, self.culprits_html]),
            self.reproduce_html,
        ])
        for index, title in enumerate(TAB_TITLES):
            tabs.set_title(index, title)
        return tabs

    # -- controls ---------------------------------------------------------------------------------------
    def _on_op(self, change) -> None:
        name = change["new"]
        if name not in catalogue.CATALOGUE:
            return  # still typing
        supported = list(catalogue.get(name).dtypes)
        current = self.dtype.value
        self.dtype.options = supported
        self.dtype.value = current if current in supported else supported[0]

    def _on_dtype(self, change) -> None:
        quantized = change["new"] is not None and dtypes.get(change["new"]).quantized
        self.quantization.layout.display = None if quantized else "none"

    @property
    def chosen_quantization(self) -> str | None:
        """The quantization chosen for a quantized dtype; None for any other."""
        return self.quantization.value if dtypes.get(self.dtype.value).quantized else None

    def _on_profile(self, change) -> None:
        custom = change["new"] == CUSTOM_PROFILE
        self.custom_profile.layout.display = None if custom else "none"
        self.profile_status.value = ""
        if custom:
            self._on_custom_profile({"new": self.custom_profile.value})

    def _on_custom_profile(self, change) -> None:
        text = change["new"].strip()
        if not text:
            self.profile_status.value = ""
            return
        try:
            profiles.parse(text)
        except WorkbenchError as exc:
            first = str(exc).splitlines()[0]
            self.profile_status.value = f"<span style='color:#c62828'>✗ {html.escape(first)}</span>"
        else:
            self.profile_status.value = "<span style='color:#2e7d32'>✓ valid</span>"

    @property
    def chosen_profile(self) -> str:
        return self.custom_profile.value.strip() if self.profile.value == CUSTOM_PROFILE else self.profile.value

    # -- running ----------------------------------------------------------------------------------------
    def run(self):
        """Run the chosen case; in threaded mode the kernel stays free while it runs."""
        if self._worker is not None and self._worker.is_alive():
            return None
        self.run_button.disabled = True
        self.progress.layout.display = None  # shown while running only: hidden, it would hold a wrapped line
        self.progress.value = 0
        chosen = case_label(self.op.value, self.dtype.value, self.chosen_quantization or "", self.chosen_profile)
        self.status.value = f"running {html.escape(chosen)} …"
        if self.threaded:
            self._worker = threading.Thread(target=self._run_and_show, daemon=True)
            self._worker.start()
            return None
        return self._run_and_show()

    def wait(self, timeout: float | None = None) -> None:
        if self._worker is not None:
            self._worker.join(timeout)

    def _run_and_show(self):
        try:
            case = Case.of(self.op.value, self.dtype.value, self.chosen_profile, policy=self.policy.value,
                           transform_passes=list(self.transform_passes.value), quantization=self.chosen_quantization,
                           trace=self.trace.value)
            result = run(case, isolate=self.isolate.value)
        except WorkbenchError as exc:  # bad input: said inline, never as a traceback
            self._refused(html.escape('; '.join(str(exc).splitlines())))
            return None
        except Exception as exc:  # a failure of the workbench itself must not break the widget either
            self._refused(f"{html.escape(type(exc).__name__)}: {html.escape(str(exc))}")
            return None
        finally:
            self.run_button.disabled = False
            self.progress.value = 1
            self.progress.layout.display = "none"
        self._show(result)
        return result

    def _refused(self, why: str) -> None:
        """A Run that gave no result: the error on the status line, and nothing of the previous case left on
        screen (its summary, graph and tabs would read as this run's): each tab says why it is empty."""
        with self._render_lock:
            self.result = self.graph = None
            self._rendered_tabs.clear()
            self._clear_lazy_tabs()
            self.summary_html.value = self.shown_html.value = self.culprits_html.value = ""
            self.save_button.disabled = self.culprits_button.disabled = True
            self.graph_view.clear(NO_RESULT)
            for tab in (self.reasons_html, self.numerics_html, self.tosa_html, self.vela_view, self.vgf_view,
                        self.error_html, self.reproduce_html):
                tab.value = f"<i class='wb-no-result'>{NO_RESULT}</i>"
            self.status.value = f"<span style='color:#c62828'>✗ {why}</span>"

    def show(self, result) -> None:
        """Show a result made elsewhere (run_case, run_model, a file): the controls are set to its case where they
        can express it, and a line above the status says what they cannot (ui/shown_case.py). Then as after Run:
        the status and summary lines, the partition graph, the reasons and the tab it opens (Error after a lowering
        error) are rendered now, every other tab when it is first opened.

        Returns when the first tab is shown: a benchmark times Run -> first tab shown with this call."""
        self._show(result, shown_line(result, set_controls(self, result)))

    def _show(self, result, shown: str = "") -> None:
        with self._render_lock:
            self.shown_html.value = shown
            self.result = result
            self.graph = partition_graph(result)
            self._rendered_tabs.clear()
            self._clear_lazy_tabs()
            self.save_button.disabled = not result.delegates
            # A result made here holds its case (a model's too); one read back from a file, a catalogue case's names.
            searchable = result.outcome in COMPILE_FAILURES and (
                result.case is not None or result.op in catalogue.CATALOGUE)
            self.culprits_button.disabled = not searchable
            self.culprits_html.value = self.save_status.value = ""
            opened = ERROR_TAB if result.error is not None and result.error.stage != "reference" else GRAPH_TAB
            for index in (opened, *EAGER_TABS):
                self._render_tab(index)
            self.backend_html.value = f"<small>Arm backend: {html.escape(result.arm_backend_label)}</small>"
            self.summary_html.value = summary_html(result)
            why = status_reason(result)
            self.status.value = (f"<b>{html.escape(result.case_label)}</b>: "
                                 f"outcome <b>{result.outcome.value}</b>, {views.tables.verdict_html(result)}"
                                 + (f" — {why}" if why else ""))
            self.tabs.selected_index = opened

    def render_all_tabs(self) -> None:
        """Render every tab of the shown result not rendered yet (each at most once per result).

        After `show(result)`, a benchmark times the rest of Run -> all tabs rendered with this call."""
        for index in range(len(TAB_TITLES)):
            self._render_tab(index)

    def _on_tab_selected(self, change) -> None:
        if change["new"] is not None:
            self._render_tab(change["new"])

    def _render_tab(self, index: int) -> None:
        with self._render_lock:
            if self.result is None or index in self._rendered_tabs:
                return
            self._tab_renderers[index](self.result)
            self._rendered_tabs.add(index)

    def _clear_lazy_tabs(self) -> None:
        """Empty the tabs rendered when opened, so none shows the previous result meanwhile."""
        self.numerics_html.value = self.tosa_html.value = self.reproduce_html.value = self.save_status.value = ""
        self.trace_view.clear()
        self.vela_view.clear()
        self.vgf_view.clear()
        self._set_numerics_image(b"")
        self.error_html.value = self.traceback_html.value = ""
        self.traceback_fold.layout.display = "none"  # an empty fold reads as a missing traceback

    def _render_graph(self, result) -> None:
        self.graph_view.show(result, self.graph)

    def _render_reasons(self, result) -> None:
        self.reasons_html.value = table_html(views.reasons_frame(result))

    def _render_numerics(self, result) -> None:
        notes = "".join(f"<br><i>note: {html.escape(note)}</i>" for note in result.notes)
        self.numerics_html.value = (  # a VGF target's table is the reference model's: the VGF tab has its run's
            f"<b>numerics: {result.numerics.value}</b>{html.escape(numerics_sources(result))}{notes}<br>"
            + table_html(views.numerics_frame(result)))
        figure = views.numerics_figure(result)
        self._set_numerics_image(views.figure_png(figure) if figure is not None else b"")
        self.trace_view.show(result)

    def _set_numerics_image(self, png: bytes) -> None:
        self.numerics_image.value = png
        self.numerics_image.layout.display = None if png else "none"  # an empty image shows as a broken one

    def _render_tosa(self, result) -> None:
        self.tosa_html.value = tosa_tab_html(result)

    def _render_error(self, result) -> None:
        self.error_html.value, self.traceback_html.value = error_parts(result)
        self.traceback_fold.layout.display = None if self.traceback_html.value else "none"  # no empty fold

    def _render_reproduce(self, result) -> None:
        self.reproduce_html.value = f"<pre>{html.escape(views.reproduce_code(result), quote=False)}</pre>"

    def find_culprits(self):
        """The culprit search on the shown lowering_error, into the Error tab (threaded like Run)."""
        if self.result is None or self.culprits_button.disabled:
            return None
        self.culprits_button.disabled = True
        self.culprits_html.value = "<i>searching: re-lowering with nodes kept on CPU …</i>"
        if self.threaded:
            self._worker = threading.Thread(target=self._search_and_show, daemon=True)
            self._worker.start()
            return None
        return self._search_and_show()

    def _search_and_show(self):
        from ..batch.authoring.culprits import find_culprits

        try:
            search = find_culprits(self.result)
        except Exception as exc:  # said inline; the shown result stays
            self.culprits_html.value = (f"<span style='color:#c62828'>✗ {html.escape(type(exc).__name__)}: "
                                        f"{html.escape(str(exc))}</span>")
            return None
        finally:
            self.culprits_button.disabled = False
        self.culprits_html.value = f"<pre>{html.escape(search.to_text(), quote=False)}</pre>"
        return search

    def open_in_model_explorer(self, folder: str | None = None, *, height: int = 700):
        """The shown result in Google's Model Explorer, an IFrame on loopback (ui/model_explorer_view.py)."""
        from .model_explorer_view import open_in_model_explorer

        if self.result is None:
            raise ValueError("no result to open yet: press Run first")
        self.model_explorer = open_in_model_explorer(self.result, folder, height=height)
        return self.model_explorer

    def close(self) -> None:
        if getattr(self, "model_explorer", None) is not None:
            self.model_explorer.stop()
        super().close()

    def save_flatbuffers(self, folder: str | None = None) -> list[str]:
        """Each delegate's TOSA flatbuffer written to `folder` (default: ui/flatbuffers.py's); the full paths."""
        if self.result is None:
            return []
        paths = [str(path) for path in write_flatbuffers(self.result, folder)]
        self.save_status.value = "saved " + ", ".join(f"<code>{html.escape(p)}</code>" for p in paths)
        return paths
