"""The explorer driven headlessly: set the widgets, press Run, read the tabs."""

import dataclasses
import html
import re

import matplotlib
import pytest

matplotlib.use("Agg")

from workbench import views
from workbench.ui import Explorer
from workbench.ui.explorer import CUSTOM_PROFILE, NO_RESULT, TAB_TITLES
from workbench.ui.graph_view import PICTURE, PICTURE_MAX_NODES, ZOOMABLE
from workbench.views.graph.svg import graphviz_missing


def explorer(op, dtype, profile):
    ui = Explorer(threaded=False)
    ui.op.value = op
    ui.dtype.value = dtype
    if profile in ui.profile.options:
        ui.profile.value = profile
    else:
        ui.profile.value = CUSTOM_PROFILE
        ui.custom_profile.value = profile
    ui.run_button.click()
    return ui


def opened(ui, title):
    """The explorer after its user opened the tab `title` (tabs other than the first ones render when opened)."""
    ui.tabs.selected_index = TAB_TITLES.index(title)
    return ui


def graph_shown(ui) -> bool:
    """Asserts the graph tab shows the result: Graphviz's SVG with every node of the (small) graph, the matplotlib
    picture not drawn; without Graphviz, the picture."""
    view = ui.graph_view
    if graphviz_missing():
        assert view.mode.value == PICTURE and ui.graph_image.value[:4] == b"\x89PNG"
        return True
    svg = html.unescape(view.svg_box.value)
    assert view.mode.value == ZOOMABLE and "<svg" in svg and "wb-collapsed" not in svg
    assert [name for name in ui.graph.nodes if f"<title>{name}</title>" not in svg] == []
    assert ui.graph_image.value == b"" and ui.graph_image.layout.display == "none"
    return True


def test_tabs_are_the_documented_ones():
    ui = Explorer(threaded=False)
    assert [ui.tabs.get_title(i) for i in range(len(TAB_TITLES))] == list(TAB_TITLES)


def test_dtype_choices_follow_the_operator():
    ui = Explorer(threaded=False)
    ui.op.value = "sigmoid"
    assert "int32" not in ui.dtype.options and "float32" in ui.dtype.options
    ui.op.value = "bitwise_and"
    assert "bool" in ui.dtype.options and "float32" not in ui.dtype.options


def test_a_quantized_dtype_offers_its_configurations_and_runs_the_chosen_one():
    ui = Explorer(threaded=False)
    ui.op.value = "add"
    ui.dtype.value = "int32"
    assert ui.quantization.layout.display == "none" and ui.chosen_quantization is None
    ui.dtype.value = "qint8"
    assert ui.quantization.layout.display is None and "a16w8+per-tensor" in ui.quantization.options
    ui.quantization.value = "a16w8"
    ui.profile.value = "TOSA-1.0+INT+int16"
    ui.run_button.click()
    assert (ui.result.quantization, ui.result.outcome.value) == ("a16w8", "delegated"), ui.result
    assert "[qint8 a16w8]" in ui.status.value
    assert "quantization='a16w8'" in opened(ui, "Reproduce").reproduce_html.value


def test_cumsum_int64_ext_int64_shows_the_root_cause():
    ui = explorer("cumsum", "int64", "TOSA-1.1+INT+int64")
    assert ui.result.outcome.value == "lowering_error"
    assert ui.tabs.selected_index == TAB_TITLES.index("Error")
    assert "root cause" in ui.error_html.value and "int64" in ui.error_html.value  # the opened tab: rendered
    assert "Traceback" in ui.traceback_html.value
    assert ui.graph.kinds()["aten_cumsum_default"] == "failed"
    assert graph_shown(ui) and ui.reproduce_html.value == ""  # the first tab too, not others


def test_cumsum_int64_int_profile_shows_the_fallback_reason():
    ui = explorer("cumsum", "int64", "TOSA-1.0+INT")
    assert ui.graph.kinds()["aten_cumsum_default"] == "cpu"
    assert "Non-constant node with int64 output" in ui.reasons_html.value
    assert graph_shown(ui)
    ui.graph_view.mode.value = PICTURE  # the matplotlib picture: drawn when chosen
    assert ui.graph_image.value[:4] == b"\x89PNG" and ui.graph_image.layout.display is None
    assert ui.save_button.disabled


def test_add_int32_shows_one_delegate_and_matching_numbers(tmp_path):
    ui = explorer("add", "int32", "TOSA-1.0+INT")
    assert list(ui.graph.delegates()) == ["tag0"]
    assert "numerics: match" in opened(ui, "Numerics").numerics_html.value
    assert ui.numerics_image.value[:4] == b"\x89PNG"
    assert "ADD" in opened(ui, "TOSA").tosa_html.value
    assert "workbench.run_case('add', 'int32', 'TOSA-1.0+INT'" in opened(ui, "Reproduce").reproduce_html.value
    assert "use_arm_backend" not in ui.reproduce_html.value  # the installed backend needs no set-up line
    assert "Arm backend: installed executorch" in ui.backend_html.value
    scope = {}
    exec(views.reproduce_code(ui.result).replace("print(result)", ""), scope)  # the lines shown really reproduce it
    assert scope["result"].outcome is ui.result.outcome and scope["result"].outputs == ui.result.outputs
    (path,) = ui.save_flatbuffers(str(tmp_path))
    assert open(path, "rb").read()[4:8] == b"TOSA"


def test_tabs_render_when_first_opened_once_per_result(monkeypatch):
    figures = []

    def numerics_figure(result):
        figures.append(result)
        return real_numerics_figure(result)

    real_numerics_figure = views.numerics_figure
    monkeypatch.setattr(views, "numerics_figure", numerics_figure)
    ui = explorer("add", "int32", "TOSA-1.0+INT")
    assert ui.tabs.selected_index == 0 and "aten_add_tensor" in ui.reasons_html.value  # shown with the result
    assert graph_shown(ui) and "outcome <b>delegated" in ui.status.value
    assert (ui.numerics_html.value, ui.numerics_image.value, ui.tosa_html.value, ui.error_html.value,
            ui.reproduce_html.value) == ("", b"", "", "", "") and not figures
    assert ui.numerics_image.layout.display == "none"  # empty: hidden, not a broken image
    assert opened(ui, "Numerics").numerics_image.value[:4] == b"\x89PNG" and len(figures) == 1
    assert ui.numerics_image.layout.display is None
    opened(opened(ui, "Partition graph"), "Numerics")
    assert len(figures) == 1  # once per result
    ui.render_all_tabs()
    assert "ADD" in ui.tosa_html.value and "no error" in ui.error_html.value and "run_case" in ui.reproduce_html.value
    assert len(figures) == 1
    again = dataclasses.replace(ui.result)  # a new result: its tabs are rendered anew, when opened
    ui.show(again)
    assert ui.tabs.selected_index == 0 and ui.numerics_image.value == b"" and ui.tosa_html.value == ""
    ui.render_all_tabs()
    assert len(figures) == 2 and figures[1] is again and ui.numerics_image.value[:4] == b"\x89PNG"


def test_invalid_profile_is_flagged_while_typing_and_inline_on_run():
    ui = Explorer(threaded=False)
    ui.profile.value = CUSTOM_PROFILE
    ui.custom_profile.value = "TOSA-1.0+INT+int64"
    assert "✗" in ui.profile_status.value
    ui.custom_profile.value = "TOSA-1.1+INT+int64"
    assert "valid" in ui.profile_status.value
    ui.custom_profile.value = "TOSA-3+INT"
    ui.run_button.click()
    assert "✗" in ui.status.value and "versions" in ui.status.value
    assert ui.result is None and not ui.run_button.disabled


def test_threaded_run_fills_the_tabs_and_keeps_the_widget_usable():
    ui = Explorer(threaded=True)
    ui.op.value, ui.dtype.value = "neg", "float32"
    ui.profile.value = "TOSA-1.0+FP"
    ui.run_button.click()
    ui.wait(300)
    assert ui.result.outcome.value == "delegated" and not ui.run_button.disabled


def test_isolated_run_from_the_explorer():
    ui = Explorer(threaded=False)
    ui.op.value, ui.dtype.value, ui.profile.value = "cumsum", "int64", "TOSA-1.1+INT+int64"
    ui.isolate.value = True
    ui.run_button.click()
    assert ui.result.outcome.value == "lowering_error" and "root cause" in ui.error_html.value


@pytest.mark.slow
def test_find_culprits_button_names_the_node_that_must_stay_on_cpu():
    ui = explorer("cumsum", "int64", "TOSA-1.1+INT+int64")
    assert not ui.culprits_button.disabled
    ui.culprits_button.click()
    shown = html.unescape(ui.culprits_html.value)
    assert "aten.cumsum.default [int64 -> int64]: aten_cumsum_default" in shown
    assert "outcome fallback" in shown
    ui.op.value, ui.dtype.value = "add", "int32"
    ui.run_button.click()
    assert ui.culprits_button.disabled and ui.culprits_html.value == ""


def test_a_catalogue_result_given_to_show_sets_the_controls_to_its_case():
    import workbench

    ui = Explorer(threaded=False)  # cumsum [int64] TOSA-1.0+INT, stock
    result = workbench.run_case("add", "int32", "TOSA-1.1+INT+int64", policy="ext-int64-allowlist", trace=True)
    ui.show(result)
    assert (ui.op.value, ui.dtype.value, ui.chosen_profile, ui.policy.value, ui.trace.value) == (
        "add", "int32", "TOSA-1.1+INT+int64", "ext-int64-allowlist", True)
    assert ui.shown_html.value == ""  # the controls say it all
    rerun = ui.run()
    assert rerun.to_dict() | {"timings": {}} == result.to_dict() | {"timings": {}}


def test_a_model_given_to_show_says_that_the_controls_did_not_produce_it(torch):
    import workbench

    class Mine(torch.nn.Module):
        def forward(self, x):
            return torch.relu(x)

    ui = Explorer(threaded=False)
    ui.show(workbench.run_model(Mine(), (torch.randn(2, 3),), "TOSA-1.0+FP"))
    line = html.unescape(re.sub(r"<[^>]+>", "", ui.shown_html.value))
    assert "showing model:Mine [float32] TOSA-1.0+FP, policy stock" in line and "Run runs the controls' case" in line
    assert ui.op.value == "cumsum"  # left as the user set them: Run still runs a catalogue case
    ui.run_button.click()
    assert ui.result.op == "cumsum" and ui.shown_html.value == ""


def test_tables_are_padded():
    ui = explorer("add", "int32", "TOSA-1.0+INT")
    opened(opened(ui, "TOSA"), "Numerics")
    for shown in (ui.reasons_html.value, ui.tosa_html.value, ui.numerics_html.value):
        padding = re.search(r"\.wb-table th, \.wb-table td \{padding: ([^;}]+)", shown)
        assert "wb-table" in shown and padding and any(float(v) > 0 for v in re.findall(r"[\d.]+", padding[1])), shown


def test_a_fresh_explorer_shows_no_broken_image():
    ui = Explorer(threaded=False)
    shown = [image for image in (ui.graph_image, ui.numerics_image) if image.layout.display != "none"]
    assert all(image.value for image in shown), "an empty Image is shown (a broken-image icon)"
    assert "press Run" in ui.graph_view.note.value


@pytest.mark.slow
def test_the_status_line_names_the_node_that_made_a_partial_outcome():
    """small_cnn quantized: the quantize/dequantize nodes at the delegate's float boundary stay on CPU in a wholly
    delegated model too; the argmax (TOSA's ARGMAX gives int32) is what makes it partial, and what the status line
    and the text view name."""
    ui = Explorer(threaded=False)
    ui.op.value, ui.dtype.value, ui.quantization.value = "small_cnn", "qint8", "int8"
    ui.profile.value = "TOSA-1.0+INT"
    ui.run_button.click()
    status = html.unescape(ui.status.value)
    assert "outcome <b>partial</b>" in status, status
    assert "aten_argmax_default: TOSA ARGMAX produces int32" in status and "quantize" not in status, status
    assert "why partial: aten_argmax_default kept on CPU" in str(ui.result)
    assert ui.result.reason_summary().startswith("aten_argmax_default: TOSA ARGMAX")  # the sweep row's reason too


def test_a_refused_run_leaves_nothing_of_the_previous_case_on_screen():
    ui = explorer("add", "int32", "TOSA-1.0+INT")
    ui.render_all_tabs()
    ui.profile.value = CUSTOM_PROFILE
    ui.custom_profile.value = "TOSA-9.9+INT"
    ui.run_button.click()
    assert "✗ invalid TOSA profile 'TOSA-9.9+INT'" in html.unescape(ui.status.value)
    assert ui.result is None and ui.summary_html.value == ""
    shown = [ui.reasons_html.value, ui.numerics_html.value, ui.tosa_html.value, ui.error_html.value,
             ui.reproduce_html.value, ui.vela_view.value, ui.vgf_view.value, ui.graph_view.svg_box.value]
    assert ui.graph_view.svg_box.value == "" and ui.numerics_image.value == b"" and ui.graph_image.value == b""
    assert all(re.sub(r"<[^>]+>", "", value) == NO_RESULT for value in shown[:-1]), shown
    assert NO_RESULT in ui.graph_view.note.value
    assert ui.save_button.disabled and ui.culprits_button.disabled
    ui.render_all_tabs()  # opening a tab shows nothing of the earlier case either
    assert "aten_add_tensor" not in ui.reasons_html.value + ui.tosa_html.value


def test_the_error_tab_has_no_traceback_fold_without_an_error(tmp_path, monkeypatch):
    ui = explorer("add", "int32", "TOSA-1.0+INT")
    opened(ui, "Error")
    assert "no error" in ui.error_html.value and ui.traceback_fold.layout.display == "none"
    monkeypatch.setenv("WORKBENCH_CACHE_DIR", str(tmp_path / "cache"))
    (path,) = ui.save_flatbuffers()  # the workbench's own folder, never the notebook's
    assert path == str(tmp_path / "cache" / "flatbuffers" / "add-int32-TOSA-1.0_INT-delegate_0.tosa")
    assert open(path, "rb").read()[4:8] == b"TOSA" and html.escape(path) in ui.save_status.value


@pytest.mark.slow
def test_a_lowering_error_says_why_there_is_no_tosa_and_a_large_graph_offers_no_picture():
    ui = explorer("decoder_block", "int64", "TOSA-1.1+INT+int64")
    assert ui.result.outcome.value == "lowering_error"
    assert ui.traceback_fold.layout.display is None and "Traceback" in ui.traceback_html.value
    tosa = html.unescape(opened(ui, "TOSA").tosa_html.value)
    assert "no TOSA graph: lowering failed: " in tosa and ui.result.error.root_cause in tosa, tosa
    view = ui.graph_view
    assert view.structure.size > PICTURE_MAX_NODES
    if not graphviz_missing():
        assert list(view.mode.options) == [ZOOMABLE]
        assert f"too many for the picture to be read (above {PICTURE_MAX_NODES})" in view.note.value
