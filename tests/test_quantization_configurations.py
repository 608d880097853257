"""Quantization configurations as a choice (int8, a16w8, per-tensor weights, quantized I/O): named and checked,
carried by the case into its result, its sweep row, its cache key and its reproduction, and quantizing exactly as
executorch's own INT test pipelines do: the same TOSA graph, byte for byte, for the same module."""

import subprocess
import sys

import pytest

import workbench
from workbench import Matrix, WorkbenchError
from workbench.batch import cache
from workbench.core import quantization


def test_a_configuration_is_named_and_checked_without_importing_torch():
    assert quantization.parse("a16w8+per-tensor+io") == quantization.Quantization("a16w8", per_channel=False,
                                                                                  io=True)
    assert quantization.parse(" A16W8 ").activations == "int16" and quantization.DEFAULT.name == "int8"
    assert quantization.parse("a16w8+eps=1.52587890625e-05").name == "a16w8+eps=2**-16"
    assert quantization.parse("a16w8+eps=2**-16").epsilon == 2**-16
    assert set(quantization.CHOICES) >= {"int8", "a16w8", "int8+per-tensor", "a16w8+per-tensor+io"}
    assert all(quantization.parse(name).name == name for name in quantization.CHOICES)
    for bad in ("int4", "int8+per-channel", "a16w8+io+io", "a16w8+eps=0", "a16w8+eps=x", "", None):
        with pytest.raises(WorkbenchError, match="valid: <scheme>"):
            quantization.parse(bad)
    code = "import sys, workbench.core.quantization; print('torch' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True).stdout.strip() == "False"


def test_a_configuration_belongs_to_quantized_cases_only():
    with pytest.raises(WorkbenchError, match="applies to quantized cases only, and dtype float32 is not"):
        workbench.Case.of("add", "float32", "TOSA-1.0+FP", quantization="a16w8")
    case = workbench.Case.of("add", "qint8", "TOSA-1.0+INT+int16", quantization="a16w8")
    assert case.quantization_name == "a16w8" and "[qint8 a16w8]" in str(case)
    assert workbench.Case.of("add", "qint8", "TOSA-1.0+INT").quantization_name == "int8"
    assert case.replace(quantization="int8+per-tensor").quantization_name == "int8+per-tensor"
    assert case.replace(dtype="int32").quantization is None  # the float catalogue case it becomes is not quantized
    assert case.export_key != case.replace(quantization="int8").export_key


def test_a_model_case_is_quantized_by_one_argument_that_names_its_configuration():
    import torch

    module, inputs = torch.nn.ReLU(), (torch.rand(2, 3),)
    float_case = workbench.Case.model(module, inputs, "TOSA-1.0+FP")
    assert not float_case.quantize and float_case.quantization is None and float_case.dtype == "float32"
    int8 = workbench.Case.model(module, inputs, "TOSA-1.0+INT", quantization="int8")
    assert int8.quantize and int8.quantization_name == "int8" and int8.dtype == "qint8"
    assert workbench.Case.model(module, inputs, "TOSA-1.0+INT+int16", quantization="a16w8").quantization_name == \
        "a16w8"
    for bad in (True, "a16w4"):
        with pytest.raises(WorkbenchError, match="quantization"):
            workbench.Case.model(module, inputs, "TOSA-1.0+INT", quantization=bad)
    with pytest.raises(TypeError, match="quantize"):
        workbench.Case.model(module, inputs, "TOSA-1.0+INT", quantize=True)
    named = int8.replace(name="relu block")
    assert named.name == "relu block" and named.quantization is int8.quantization
    with pytest.raises(WorkbenchError, match="a model case takes a non-empty name"):
        workbench.Case.of("add", "int32", "TOSA-1.0+INT").replace(name="other")


def test_the_cli_refuses_an_unknown_configuration_in_one_line_before_any_work(tmp_path):
    done = subprocess.run([sys.executable, "-m", "workbench", "sweep", "--ops", "add", "--dtypes", "qint8",
                           "--quantization", "a16w4", "--out", str(tmp_path / "x.csv")],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and "unknown quantization 'a16w4'" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr


def test_the_configuration_is_in_the_cache_key():
    context = cache.environment()
    keys = {cache.key_of(workbench.Case.of("add", "qint8", "TOSA-1.0+INT+int16", quantization=name), ("stock", ""),
                         context) for name in ("int8", "a16w8", "a16w8+per-tensor", "a16w8+io")}
    assert len(keys) == 4


@pytest.mark.slow
def test_a_sweep_row_and_a_rerun_carry_the_configuration(tmp_path):
    matrix = Matrix(["add"], ["qint8", "float32"], ["TOSA-1.0+INT+int16"], quantization="a16w8")
    rows = workbench.sweep(matrix, cache=str(tmp_path), workers=1, progress=False)
    by_dtype = dict(zip(rows.dtype, rows.quantization))
    assert by_dtype == {"qint8": "a16w8", "float32": ""}
    again = workbench.sweep(matrix.replace(quantization="int8"), cache=str(tmp_path), workers=1, progress=False)
    qint8 = again[again.dtype == "qint8"]
    assert not qint8.cached.iloc[0] and qint8.quantization.iloc[0] == "int8"  # another configuration, not a hit
    result = workbench.run_case("add", "qint8", "TOSA-1.0+INT+int16", quantization="a16w8+per-tensor")
    read_back = workbench.core.records.result_from_dict(result.to_dict())
    assert read_back.quantization == "a16w8+per-tensor"
    assert workbench.Case.from_result(read_back).quantization_name == "a16w8+per-tensor"


@pytest.fixture(scope="module")
def conv_relu_avgpool():
    import torch

    class ConvReluAvgPool(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = torch.nn.Conv2d(3, 8, 3, padding=1)

        def forward(self, x):
            return torch.nn.functional.avg_pool2d(torch.relu(self.conv(x)), 2)

    torch.manual_seed(1)
    return ConvReluAvgPool().eval(), (torch.randn(1, 3, 16, 16),)


def executorch_int_pipeline(module, inputs, *, per_channel: bool, extensions: list[str]) -> list[bytes]:
    """Run executorch's own TosaPipelineINT (which asserts the reference model's outputs within one quantization
    step of the quantized model's) and return its delegates' TOSA flatbuffers."""
    from executorch.backends.arm.test.tester.test_pipeline import TosaPipelineINT
    from executorch.backends.test.harness.stages import StageType

    pipeline = TosaPipelineINT(module, inputs, [], exir_op=[], per_channel_quantization=per_channel,
                               tosa_extensions=extensions)
    pipeline.run()
    program = pipeline.tester.stages[StageType.TO_EDGE_TRANSFORM_AND_LOWER].artifact.exported_program()
    return [bytes(getattr(program.graph_module, node.target).processed_bytes) for node in program.graph.nodes
            if node.op == "get_attr" and node.target.startswith("lowered_module")]


@pytest.mark.slow
@pytest.mark.parametrize("name,profile,per_channel,extensions", [
    ("a16w8+eps=2**-16", "TOSA-1.0+INT+int16", True, ["int16"]),  # TosaPipelineINT's epsilon for int16
    ("int8+per-tensor", "TOSA-1.0+INT", False, []),
])
def test_the_same_tosa_graph_as_executorchs_pipeline(name, profile, per_channel, extensions, conv_relu_avgpool):
    module, inputs = conv_relu_avgpool
    theirs = executorch_int_pipeline(module, inputs, per_channel=per_channel, extensions=extensions)
    ours = workbench.run_model(module, inputs, profile, quantization=name)
    assert (ours.outcome, ours.numerics, ours.quantization) == (workbench.Outcome.DELEGATED,
                                                                workbench.Numerics.MATCH, name), ours
    assert [bytes(d.flatbuffer) for d in ours.delegates] == theirs  # same quantization, same graph: same numbers
    (output,) = ours.outputs
    assert output.max_steps <= 1


@pytest.mark.slow
def test_bmm_under_u55_is_delegated_as_int8_and_not_as_a16w8_as_executorchs_test_says():
    """executorch's test_bmm.py::test_bmm_a16w8_u55_INT: "U55 does not support bmm with INT16 inputs", checked with
    an OpNotSupportedPipeline (no delegate, bmm left on CPU). Its int8 bmm is delegated."""
    import torch
    from executorch.backends.arm.quantizer import get_symmetric_a16w8_quantization_config
    from executorch.backends.arm.test.tester.test_pipeline import OpNotSupportedPipeline

    class Bmm(torch.nn.Module):
        def forward(self, x, y):
            return torch.bmm(x, y)

    inputs = (torch.rand(5, 3, 5, generator=torch.Generator().manual_seed(0)),
              torch.rand(5, 5, 2, generator=torch.Generator().manual_seed(1)))
    pipeline = OpNotSupportedPipeline(Bmm(), inputs,
                                      non_delegated_ops={"executorch_exir_dialects_edge__ops_aten_bmm_default": 1},
                                      n_expected_delegates=0, u55_subset=True, quantize=True, tosa_extensions=["int16"])
    pipeline.quantizer.set_global(get_symmetric_a16w8_quantization_config())
    pipeline.run()  # executorch's own verdict: not delegated

    def bmm_delegated(name):
        result = workbench.run_model(Bmm(), inputs, "TOSA-1.0+INT+int16+u55", quantization=name)
        (bmm,) = [n for n in result.nodes if n.target == "aten.bmm.default"]
        return bmm.delegated, bmm.reason

    assert bmm_delegated("int8")[0]
    delegated, reason = bmm_delegated("a16w8")
    assert not delegated and reason, reason


def test_executorchs_tests_are_reproduced_in_their_own_configuration():
    from workbench.batch.arm_tests.suite import from_arm_tests

    by_test = {}
    for case in from_arm_tests(["ops/test_add.py"]):
        by_test.setdefault(case.test, case)
    # TosaPipelineINT(per_channel_quantization=False, tosa_extensions=["int16"]) (a16w8, epsilon 2**-16), then
    # set_global(get_symmetric_a16w8_quantization_config(is_per_channel=False)) (its own eps, 2**-12)
    sixteen = by_test["test_add_tensor_tosa_INT_16a8w"]
    assert (sixteen.profile, sixteen.quantization, sixteen.quantizer_settings) == \
        ("TOSA-1.0+INT+int16", "a16w8+per-tensor", ())
    assert by_test["test_add_tensor_tosa_INT"].quantization == "int8"
    assert by_test["test_add_tensor_tosa_FP"].quantization == ""


@pytest.mark.slow
def test_a_real_multi_step_difference_is_a_mismatch_in_steps_as_executorch_says_and_the_trace_finds_it():
    """a16w8 log near zero: the int16 TABLE executorch builds (513 entries, backends/arm/_passes/insert_table_ops.py),
    between whose entries TOSA interpolates, is thousands of steps off where log is steep; executorch's own
    TosaPipelineINT rejects the same module ("Output 0 does not match reference output")."""
    import torch
    from executorch.backends.arm.quantizer import get_symmetric_a16w8_quantization_config
    from executorch.backends.arm.test.tester.test_pipeline import TosaPipelineINT

    class LogNearZero(torch.nn.Module):
        def forward(self, x):
            return torch.log(x.abs() + 0.01)

    inputs = (torch.linspace(-6, 3, 256).reshape(4, 64),)
    pipeline = TosaPipelineINT(LogNearZero(), inputs, [], exir_op=[], tosa_extensions=["int16"])
    pipeline.quantizer.set_global(get_symmetric_a16w8_quantization_config())
    with pytest.raises(AssertionError, match="does not match reference output"):
        pipeline.run()

    result = workbench.run_model(LogNearZero(), inputs, "TOSA-1.0+INT+int16", quantization="a16w8", trace=True)
    (output,) = result.outputs
    assert result.numerics is workbench.Numerics.MISMATCH and output.max_steps > 100, output.steps_text()
    first = result.first_divergence  # the TABLE's INT32 values, in the steps of the RESCALE that follows it
    assert (first.tosa_op, first.fx_node) == ("TABLE", "aten_log_default")  # named after the node it replaced
    assert first.max_steps * first.scale == pytest.approx(output.max_steps * output.scale, rel=0.05)
    judged = [row for row in result.trace[:result.trace.index(first)] if row.within_tolerance is not None]
    assert judged and all(row.within_tolerance for row in judged)
    rescale = result.trace[result.trace.index(first) + 1:]
    assert next(row for row in rescale if row.tosa_op == "RESCALE").max_steps == output.max_steps


def test_a_pipelines_arguments_and_quantizer_calls_fold_into_one_configuration_or_are_listed():
    from executorch.backends.arm.quantizer import (get_symmetric_a16w8_quantization_config,
                                                   get_symmetric_quantization_config)

    from workbench.stack.arm_tests.record import fold

    def folded(arguments: dict, *calls):
        base = {"file": "ops/test_x.py", "test": "test_x_tosa_INT", "param": ""}
        case = fold("TosaPipelineINT", {"tosa_extensions": ["int16"], "epsilon": 2**-16, **arguments},
                    [(name, (config,), {}) for name, config in calls], base, None)
        return case.quantization, len(case.quantizer_settings), [method for method, _, _ in case.quantizer_calls]

    assert folded({}) == ("a16w8+eps=2**-16", 0, [])  # TosaPipelineINT's own config
    assert folded({"per_channel_quantization": False},
                  ("quantizer.set_global", get_symmetric_a16w8_quantization_config(is_per_channel=False))) == \
        ("a16w8+per-tensor", 0, [])  # the test's own config replaces it
    # I/O quantized with the pipeline's config, then another global config: no one name says both, so the call is
    # made again on the workbench's quantizer
    assert folded({"symmetric_io_quantization": True},
                  ("quantizer.set_global", get_symmetric_a16w8_quantization_config())) == \
        ("a16w8+io+eps=2**-16", 0, ["set_global"])
    assert folded({"tosa_extensions": []}, ("quantizer.set_io", get_symmetric_quantization_config())) == \
        ("int8+io", 0, [])


def test_a_tests_own_quantizer_calls_are_kept_in_order_to_be_made_on_the_workbenchs_quantizer():
    import torch

    from workbench.stack.arm_tests.record import fold

    base = {"file": "misc/test_x.py", "test": "test_x_tosa_INT", "param": ""}
    sigmoid_float = ("quantizer.set_module_type", (torch.nn.Sigmoid, None), {})
    io_float = ("quantizer.set_io", (None,), {})
    case = fold("TosaPipelineINT", {}, [sigmoid_float, io_float], base, None)
    assert (case.quantization, case.quantizer_settings) == ("int8", ())
    assert case.quantizer_calls == (("set_module_type", (torch.nn.Sigmoid, None), {}), ("set_io", (None,), {}))
    # a quantize stage the test replaces keeps its own quantizer: said, not reproduced
    replaced = fold("TosaPipelineINT", {}, [sigmoid_float, ("change_args", ("quantize", object()), {})], base, None)
    assert len(replaced.quantizer_settings) == 1 and len(replaced.quantizer_calls) == 1
    popped = fold("TosaPipelineINT", {}, [sigmoid_float, ("pop_stage", ("quantize",), {})], base, None)
    assert (popped.quantize, popped.quantizer_settings, popped.quantizer_calls) == (False, (), ())


def test_a_tests_own_quantizer_calls_and_a_while_loops_body_are_quantized_as_executorchs_pipelines_do():
    """set_module_type(Sigmoid, None) and set_io(None) keep sigmoid, a convolution and the I/O float
    (misc/test_quant_custom_meta.py: executorch's pytest passes with them on CPU); a while loop's body is quantized
    with the model (TOSAQuantizer._quantize_with_submodules), so the loop is delegated under INT
    (ops/test_while.py, whose check_not stage is added with add_stage_after(..., ArmTester.check_not, ...))."""
    ids = ["misc/test_quant_custom_meta.py::test_qdq_squeezed_fp_op_tosa_INT_FP[False]",
           "misc/test_quant_custom_meta.py::test_quantized_to_float_transition_tosa_INT_FP[False]",
           "ops/test_while.py::test_while_loop_tosa_INT[two_in_two_out]"]
    table = workbench.run_arm_tests(ids, workers=1, progress=False, cache=False).set_index("test_id")
    assert list(table.index) == ids and table["agrees"].all(), table[["outcome", "disagreement"]]
    assert list(table["outcome"]) == ["partial", "partial", "delegated"]
    cases = {c.test_id: c for c in workbench.from_arm_tests(["ops/test_while.py"])}
    assert cases[ids[2]].exir_ops == ("while_loop",)
