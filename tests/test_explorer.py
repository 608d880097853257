"""The explorer driven headlessly: set the widgets, press Run, read the tabs."""

import html

import matplotlib
import pytest

matplotlib.use("Agg")

from workbench import views
from workbench.ui import Explorer
from workbench.ui.explorer import CUSTOM_PROFILE, TAB_TITLES


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


def test_tabs_are_the_documented_ones():
    ui = Explorer(threaded=False)
    assert [ui.tabs.get_title(i) for i in range(len(TAB_TITLES))] == list(TAB_TITLES)


def test_dtype_choices_follow_the_operator():
    ui = Explorer(threaded=False)
    ui.op.value = "sigmoid"
    assert "int32" not in ui.dtype.options and "float32" in ui.dtype.options
    ui.op.value = "bitwise_and"
    assert "bool" in ui.dtype.options and "float32" not in ui.dtype.options


def test_cumsum_int64_ext_int64_shows_the_root_cause():
    ui = explorer("cumsum", "int64", "TOSA-1.1+INT+int64")
    assert ui.result.outcome.value == "lowering_error"
    assert ui.tabs.selected_index == TAB_TITLES.index("Error")
    assert "root cause" in ui.error_html.value and "int64" in ui.error_html.value
    assert "Traceback" in ui.traceback_html.value
    assert ui.graph.kinds()["aten_cumsum_default"] == "failed"


def test_cumsum_int64_int_profile_shows_the_fallback_reason():
    ui = explorer("cumsum", "int64", "TOSA-1.0+INT")
    assert ui.graph.kinds()["aten_cumsum_default"] == "cpu"
    assert "Non-constant node with int64 output" in ui.reasons_html.value
    assert ui.graph_image.value[:4] == b"\x89PNG"
    assert ui.save_button.disabled


def test_add_int32_shows_one_delegate_and_matching_numbers(tmp_path):
    ui = explorer("add", "int32", "TOSA-1.0+INT")
    assert list(ui.graph.delegates()) == ["tag0"]
    assert "numerics: match" in ui.numerics_html.value
    assert ui.numerics_image.value[:4] == b"\x89PNG"
    assert "ADD" in ui.tosa_html.value
    assert "workbench.run_case('add', 'int32', 'TOSA-1.0+INT'" in ui.reproduce_html.value
    assert "use_arm_backend" not in ui.reproduce_html.value  # the installed backend needs no set-up line
    assert "Arm backend: installed executorch" in ui.backend_html.value
    scope = {}
    exec(views.reproduce_code(ui.result).replace("print(result)", ""), scope)  # the lines shown really reproduce it
    assert scope["result"].outcome is ui.result.outcome and scope["result"].outputs == ui.result.outputs
    (path,) = ui.save_flatbuffers(str(tmp_path))
    assert open(path, "rb").read()[4:8] == b"TOSA"


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
