"""executorch's own Arm tests as a case source (workbench.from_arm_tests, run_arm_tests): what a test expects is
read from it, the workbench agrees with the tests' expectations, a checkout's edited tests are read from the
checkout, and a test file that does not import is reported and skipped while the rest goes on."""

import time

import pytest

import workbench
from workbench import WorkbenchError
from workbench.batch.arm_tests import suite as arm_tests
from workbench.batch.arm_tests.suite import agreement_text, from_arm_tests, run_arm_tests, select_files


# At least 20 of executorch's Arm operator test files, the comparisons among them, and misc/test_int64.py.
AGREEMENT_FILES = [
    "ops/test_cumsum.py", "ops/test_cat.py", "ops/test_where.py", "ops/test_slice.py", "ops/test_sum.py",
    "ops/test_eq.py", "ops/test_ne.py", "ops/test_lt.py", "ops/test_le.py", "ops/test_gt.py", "ops/test_ge.py",
    "ops/test_add.py", "ops/test_mul.py", "ops/test_sub.py", "ops/test_permute.py", "ops/test_view.py",
    "ops/test_clamp.py", "ops/test_relu.py", "ops/test_sigmoid.py", "ops/test_argmax.py", "ops/test_gather.py",
    "misc/test_int64.py",
]
# CI cost: the first CAP parametrizations of each test function (every function of every file is still read).
CAP = 2
ETHOS_U_NAMES = ("u55_INT", "u85_INT")
# Five op test files with u55 and u85 tests: EthosU55PipelineINT, EthosU85PipelineINT, OpNotSupportedPipeline(u55)
ETHOS_U_FILES = ["ops/test_add.py", "ops/test_relu.py", "ops/test_avg_pool2d.py", "ops/test_masked_fill.py",
                 "ops/test_where.py"]
CUMSUM_FP = "ops/test_cumsum.py::test_cumsum_tosa_FP"
NEW_PARAM = '        "1d_dim0_checkout": lambda: (torch.rand(7), 0),\n'
CUMSUM_PARAMETRIZE = '@common.parametrize("test_data", CumsumModule.test_parameters)\ndef test_cumsum_tosa_FP'
CUMSUM_XFAIL = ('@common.parametrize("test_data", CumsumModule.test_parameters, '
                'xfails={"2d_dim1": "edited in the checkout"})\ndef test_cumsum_tosa_FP')


def test_a_selection_is_paths_under_backends_arm_test_with_globs():
    folder = arm_tests.tests_folder()  # imported by module: pytest would collect a bare `tests_folder`
    assert folder.name == "test" and folder.parent.name == "arm"
    files = select_files(["ops/test_c*.py", "ops/test_cumsum.py", "misc/test_int64.py"], folder)
    assert "ops/test_cat.py" in files and files.count("ops/test_cumsum.py") == 1 and files[-1] == "misc/test_int64.py"
    with pytest.raises(WorkbenchError, match="no test file .* matches 'ops/test_nothing_here.py'"):
        select_files("ops/test_nothing_here.py", folder)


def test_a_selection_of_pytest_node_ids_chooses_those_tests_of_their_files():
    add = "ops/test_add.py::test_add_tensor_tosa_FP[5d_float]"
    mul = "ops/test_mul.py::test_mul_tensor_tosa_FP[op_mul_rank1_rand]"
    assert arm_tests.node_ids([add, mul, add]) == (["ops/test_add.py", "ops/test_mul.py"], {add, mul})
    assert arm_tests.node_ids("ops/") == (["ops/"], None)
    with pytest.raises(WorkbenchError, match="names test files or test ids, not both: 'ops/test_mul.py'"):
        arm_tests.node_ids([add, "ops/test_mul.py"])
    cases = from_arm_tests("ops/test_cumsum.py", cap=1)
    chosen = cases.only([cases[0].test_id])
    assert [c.test_id for c in chosen] == [cases[0].test_id] and chosen.census == cases.census
    assert (chosen.selection, chosen.cap, chosen.files) == (cases.selection, cases.cap, cases.files)


def test_what_a_test_expects_is_read_from_it():
    cases = from_arm_tests(["ops/test_cumsum.py", "ops/test_where.py"])
    by_id = {c.test_id: c for c in cases}
    fp = by_id[f"{CUMSUM_FP}[1d_dim0]"]
    assert (fp.pipeline, fp.profile, fp.quantize, fp.delegates, fp.compare) == \
        ("TosaPipelineFP", "TOSA-1.0+FP", False, 1, True)
    assert fp.expected == "delegated to TOSA (1 delegate), outputs match" and fp.runnable
    integer = by_id["ops/test_cumsum.py::test_cumsum_tosa_INT[1d_dim0]"]
    assert integer.profile == "TOSA-1.0+INT" and integer.quantize
    # a VGF test is read with the specification its VgfPipeline builds (VgfCompileSpec()'s, and bf16 as it says FP)
    vgf = [c for c in cases if "vgf" in c.test]
    assert vgf and all(c.pipeline == "VgfPipeline" and c.profile == "vgf:TOSA-1.0+FP+INT+int4+int16+bf16"
                       and c.runnable and c.compare and c.delegates == 1 for c in vgf)
    assert {(c.quantize, c.quantization) for c in vgf} == {(False, ""), (True, "int8")}
    assert by_id["ops/test_cumsum.py::test_cumsum_vgf_quant[1d_dim0]"].expected == \
        "delegated to vgf:TOSA-1.0+FP+INT+int4+int16+bf16 (1 delegate(s)), outputs match on the Vulkan device"
    not_supported = [c for c in cases if c.pipeline == "OpNotSupportedPipeline"]
    assert not_supported and all(c.expected.startswith("not delegated") for c in not_supported)
    assert not cases.import_failures


def test_ethos_u_tests_are_read_with_the_target_and_quantization_their_pipeline_builds():
    cases = from_arm_tests(["ops/test_add.py", "ops/test_where.py", "ops/test_pixel_shuffling.py"])
    by_id = {c.test_id: c for c in cases}
    u55 = by_id["ops/test_add.py::test_add_tensor_u55_INT[5d_float]"]
    assert (u55.pipeline, u55.profile, u55.quantization, u55.delegates, u55.exir_ops, u55.compare) == \
        ("EthosU55PipelineINT", "ethos-u55-128", "int8", 1, ("aten_add_Tensor",), False)
    # without the FVP its mark is no xfail: the test expects every stage before the FVP run to pass
    assert u55.fvp.startswith("Did not find Corstone-300") and u55.xfail is None and u55.runnable
    assert u55.vela_flags == ("--arena-cache-size=2097152",)
    assert u55.expected == "delegated to ethos-u55-128 (1 delegate) up to the FVP run stage, not run"
    # get_u85_compile_spec's memory mode is Shared_Sram, EthosUCompileSpec's default for u85 Sram_Only
    u85 = by_id["ops/test_add.py::test_add_tensor_u85_INT[5d_float]"]
    assert u85.profile == "ethos-u85-128:Ethos_U85_SYS_DRAM_Mid:Shared_Sram" and u85.fvp.startswith("Did not find Co")
    assert by_id["ops/test_add.py::test_add_tensor_u55_INT_16a8w[5d_float]"].quantization == "a16w8+per-tensor"
    assert by_id["ops/test_where.py::test_where_self_u85_INT[float32_tensor_cond]"].quantization == "int8+io"
    not_delegated = by_id["ops/test_where.py::test_where_self_u55_INT_not_delegated[float32_tensor_cond]"]
    assert (not_delegated.pipeline, not_delegated.profile, not_delegated.delegates, not_delegated.cpu_ops) == \
        ("OpNotSupportedPipeline", "TOSA-1.0+INT+u55", 1, (("aten_where_self", 1), ("aten_full_default", 0)))
    assert not_delegated.fvp and "change_args('quantize', <" in not_delegated.quantizer_settings[0]
    # pytest applies the function's FVP mark before the parametrization's own xfail, which it shadows
    shadowed = by_id["ops/test_pixel_shuffling.py::test_pixel_shuffle_u55_INT[rand_4d_channels_last]"]
    assert shadowed.xfail is None and shadowed.xfail_with_fvp.startswith("Known U55 partitioning limitation")
    assert not any("u65" in c.test for c in cases)  # no u65 target
    assert not cases.import_failures and not cases.not_captured


def test_an_ethos_u_target_names_a_system_config_and_memory_mode_only_when_not_the_default():
    from executorch.backends.arm.ethosu import EthosUCompileSpec

    from workbench.stack.arm_tests.record import ethos_u_target

    assert ethos_u_target(EthosUCompileSpec("ethos-u85-256")) == "ethos-u85-256"
    assert ethos_u_target(EthosUCompileSpec("ethos-u55-64", memory_mode="Shared_Sram")) == "ethos-u55-64"
    assert ethos_u_target(EthosUCompileSpec("ethos-u55-256", system_config="Ethos_U55_Deep_Embedded")) == \
        "ethos-u55-256:Ethos_U55_Deep_Embedded:Shared_Sram"


@pytest.mark.slow
def test_the_workbench_agrees_with_executorchs_own_arm_tests():
    started = time.monotonic()
    cases = from_arm_tests(AGREEMENT_FILES, cap=CAP)
    # Ethos-U: below; VGF (minutes more on the Vulkan device): data/arm-tests.csv and the VGF test below
    tosa = [c.test_id for c in cases
            if not any(part in c.test for part in ETHOS_U_NAMES) and c.pipeline != "VgfPipeline"]
    table = run_arm_tests(cases.only(tosa), workers=None, progress=False)
    seconds = time.monotonic() - started
    print(agreement_text(table))
    print(f"{len(table)} cases of {len(AGREEMENT_FILES)} files in {seconds:.0f} s")
    assert not table.attrs["import_failures"]
    assert set(AGREEMENT_FILES) <= set(table["file"]), set(AGREEMENT_FILES) - set(table["file"])
    assert table["agrees"].mean() > 0.95, agreement_text(table)
    disagreeing = table[~table["agrees"]]
    assert (disagreeing["disagreement"].str.len() > 20).all(), disagreeing[["test_id", "disagreement"]]
    assert (table.loc[table["agrees"], "disagreement"] == "").all()


@pytest.mark.slow
def test_every_ethos_u_verdict_agrees_with_executorchs_u55_and_u85_tests():
    # CI cost: the first parametrization of each test function (all of them: 181 cases, 181 agree, 265 s)
    cases = from_arm_tests(ETHOS_U_FILES, cap=1)
    ethos_u = [c.test_id for c in cases if any(part in c.test for part in ETHOS_U_NAMES)]
    table = run_arm_tests(cases.only(ethos_u), workers=None, progress=False)
    print(agreement_text(table))
    assert len(table) == len(ethos_u) and set(ETHOS_U_FILES) == set(table["file"])
    assert table["agrees"].all(), agreement_text(table)
    assert {"ethos-u55-128", "ethos-u85-128:Ethos_U85_SYS_DRAM_Mid:Shared_Sram", "TOSA-1.0+INT+u55"} == \
        set(table["profile"])
    by_pipeline = table.groupby("pipeline")["outcome"].agg(set).to_dict()
    assert by_pipeline["EthosU55PipelineINT"] == by_pipeline["EthosU85PipelineINT"] == {"delegated"}
    assert by_pipeline["OpNotSupportedPipeline"] <= {"fallback", "partial"}


@pytest.fixture(scope="module")
def edited_checkout(checkouts, tmp_path_factory):
    """A checkout whose ops/test_cumsum.py has one more parametrization and one xfail, and whose ops/test_cat.py
    does not import."""
    root = checkouts.make_checkout(tmp_path_factory.mktemp("executorch"))
    cumsum = "test/ops/test_cumsum.py"
    checkouts.edit(root, cumsum, '        "1d_dim0": lambda: (torch.rand(10), 0),\n',
         '        "1d_dim0": lambda: (torch.rand(10), 0),\n' + NEW_PARAM)
    checkouts.edit(root, cumsum, CUMSUM_PARAMETRIZE, CUMSUM_XFAIL)
    checkouts.edit(root, "test/ops/test_cat.py", "import torch\n", "import torch\ndef broken(:\n")
    checkouts.git(root, "commit", "-qam", "edited Arm tests")
    return root


@pytest.fixture(scope="module")
def checkout_cases(edited_checkout):
    return from_arm_tests(["ops/test_cumsum.py", "ops/test_cat.py"], arm_backend=edited_checkout)


@pytest.mark.slow
def test_a_checkouts_edited_test_file_is_read_from_the_checkout(edited_checkout, checkout_cases):
    by_id = {c.test_id: c for c in checkout_cases}
    assert f"{CUMSUM_FP}[1d_dim0_checkout]" in by_id
    assert by_id[f"{CUMSUM_FP}[2d_dim1]"].xfail == "edited in the checkout"
    assert by_id["ops/test_cumsum.py::test_cumsum_tosa_INT[2d_dim1]"].xfail is None
    assert checkout_cases.arm_backend == str(edited_checkout)
    installed = {c.test_id for c in from_arm_tests("ops/test_cumsum.py")}  # this process: the installed tests
    assert f"{CUMSUM_FP}[1d_dim0_checkout]" not in installed and f"{CUMSUM_FP}[1d_dim0]" in installed

    table = run_arm_tests(checkout_cases.only([f"{CUMSUM_FP}[1d_dim0_checkout]", f"{CUMSUM_FP}[2d_dim1]"]),
                          progress=False)
    rows = table.set_index("test_id")
    assert len(rows) == 2 and rows["arm_backend"].str.contains("checkout").all(), rows["arm_backend"]
    assert bool(rows.loc[f"{CUMSUM_FP}[1d_dim0_checkout]", "agrees"])
    assert not rows.loc[f"{CUMSUM_FP}[2d_dim1]", "agrees"]  # the test now expects a failure the workbench does not see
    assert "xfail (edited in the checkout)" in rows.loc[f"{CUMSUM_FP}[2d_dim1]", "disagreement"]


@pytest.mark.slow
def test_a_test_file_that_does_not_import_is_reported_and_skipped(checkout_cases):
    (error,) = checkout_cases.import_failures.values()
    assert list(checkout_cases.import_failures) == ["ops/test_cat.py"]
    assert error.startswith("SyntaxError") and "test_cat.py:" in error, error
    assert {c.file for c in checkout_cases} == {"ops/test_cumsum.py"}  # the rest went on
    assert len(checkout_cases) == 6 * 8  # tosa_FP, tosa_INT, u55_INT, u85_INT, vgf_no_quant, vgf_quant


def test_the_cli_prints_the_agreement_and_writes_the_rows(tmp_path, capsys):
    from workbench.cli import main

    out = tmp_path / "arm.csv"
    assert main(["sweep", "--arm-tests", "ops/test_cumsum.py", "--arm-tests-cap", "1", "--workers", "1",
                 "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "6/6 cases agree with executorch's tests (100.0%)" in printed and "ops/test_cumsum.py: 6/6" in printed
    saved = workbench.load_results(out)
    assert set(saved["test_id"]) == {f"ops/test_cumsum.py::test_cumsum_{kind}[1d_dim0]" for kind in
                                     ("tosa_FP", "tosa_INT", "u55_INT", "u85_INT", "vgf_no_quant", "vgf_quant")}
    assert set(saved["profile"]) == {"TOSA-1.0+FP", "TOSA-1.0+INT", "ethos-u55-128",
                                     "ethos-u85-128:Ethos_U85_SYS_DRAM_Mid:Shared_Sram",
                                     "vgf:TOSA-1.0+FP+INT+int4+int16+bf16"}
    assert saved["agrees"].all()


def _result(outcome, numerics, delegates=1, cpu=(), outputs=(), error=None, vgf_outputs=(), notes=()):
    from types import SimpleNamespace

    return SimpleNamespace(outcome=outcome, numerics=numerics, delegates=(object(),) * delegates, error=error,
                           cpu_nodes=[SimpleNamespace(target=t, reason=r) for t, r in cpu], outputs=outputs,
                           vgf_outputs=vgf_outputs, notes=notes)


def test_every_disagreement_says_why():
    from workbench import Numerics, Outcome
    from workbench.batch.arm_tests.verdicts import agrees
    from workbench.core.records import OutputComparison
    from workbench.stack.arm_tests.record import ArmTestCase

    fp = ArmTestCase(file="ops/test_x.py", test="test_x_tosa_FP", param="a", pipeline="TosaPipelineFP",
                     profile="TOSA-1.0+FP", delegates=1, exir_ops=("aten_x_default",), compare=True)
    assert agrees(fp, _result(Outcome.DELEGATED, Numerics.MATCH)) == (True, "")
    close = OutputComparison(index=0, dtype="float32", shape=(2,), eager=[1.0, 2.0], reference=[1.0005, 2.0],
                             match=False, max_abs_error=5e-4, mismatches=1, numel=2, atol=1e-5, rtol=1e-4,
                             beyond_int32=0, yardstick="float32: atol 1e-05, rtol 0.0001")
    ok, why = agrees(fp, _result(Outcome.DELEGATED, Numerics.MISMATCH, outputs=(close,)))
    assert not ok and "within the test's atol=0.001, rtol=0.001, beyond the workbench's" in why
    assert "judged by float32: atol 1e-05, rtol 0.0001" in why
    ok, why = agrees(fp, _result(Outcome.PARTIAL, Numerics.MATCH, cpu=[("aten.x.default", "int64 not supported")]))
    assert not ok and "aten_x_default left on CPU" in why and "aten.x.default: int64 not supported" in why
    xfail = ArmTestCase(file="ops/test_x.py", test="test_x_tosa_FP", param="a", pipeline="TosaPipelineFP",
                        profile="TOSA-1.0+FP", delegates=1, compare=True, xfail="MLETORCH-1 wrong output")
    assert agrees(xfail, _result(Outcome.LOWERING_ERROR, Numerics.NOT_RUN, delegates=0)) == (True, "")
    ok, why = agrees(xfail, _result(Outcome.DELEGATED, Numerics.MATCH))
    assert not ok and "xfail (MLETORCH-1 wrong output)" in why
    u55 = ArmTestCase(file="ops/test_x.py", test="test_x_u55_INT", param="a", pipeline="EthosU55PipelineINT",
                      profile="ethos-u55-128", delegates=1, fvp="Did not find Corstone-300 FVP",
                      xfail_with_fvp="Known U55 limitation", vela_flags=("--arena-cache-size=2097152",))
    assert agrees(u55, _result(Outcome.DELEGATED, Numerics.NOT_RUN)) == (True, "")  # no comparison: the FVP's
    ok, why = agrees(u55, _result(Outcome.VELA_ERROR, Numerics.NOT_RUN, delegates=0))
    assert not ok and "vela_error" in why and "xfail (Known U55 limitation), which its FVP mark shadows" in why
    assert "also gives Vela --arena-cache-size=2097152" in why


def test_a_vgf_test_is_judged_on_the_outputs_of_its_vulkan_run():
    """VgfPipeline compares the Vulkan runtime's outputs (run_on_vulkan_runtime), so a VGF case's verdict is the
    VGF run's (stages/vgf_run.py), not the reference model's, which the result's numerics also weigh."""
    from workbench import Numerics, Outcome
    from workbench.batch.arm_tests.verdicts import agrees
    from workbench.core.records import OutputComparison
    from workbench.stack.arm_tests.record import ArmTestCase

    vgf = ArmTestCase(file="ops/test_x.py", test="test_x_vgf_no_quant", param="a", pipeline="VgfPipeline",
                      profile="vgf:TOSA-1.0+FP", delegates=1, compare=True, qtol=1)
    common = dict(index=0, dtype="float32", shape=(2,), eager=[1.0, 2.0], mismatches=0, numel=2, atol=1e-5,
                  rtol=1e-4, beyond_int32=0, yardstick="float32: atol 1e-05, rtol 0.0001")
    same = OutputComparison(reference=[1.0, 2.0], match=True, max_abs_error=0.0, **common)
    off = OutputComparison(**{**common, "mismatches": 1}, reference=[1.0005, 2.0], match=False, max_abs_error=5e-4)
    # the reference model diverged, the Vulkan run did not: the test's comparison holds
    assert agrees(vgf, _result(Outcome.DELEGATED, Numerics.MISMATCH, outputs=(off,), vgf_outputs=(same,))) == \
        (True, "")
    note = "the VGF run diverged from eager; the TOSA reference model's verdict is match"
    ok, why = agrees(vgf, _result(Outcome.DELEGATED, Numerics.MISMATCH, outputs=(same,), vgf_outputs=(off,),
                                  notes=(note,)))
    assert not ok and "numerics mismatch on the Vulkan device" in why and "within the test's atol=0.001" in why
    assert note in why
    ok, why = agrees(vgf, _result(Outcome.DELEGATED, Numerics.VGF_ERROR, outputs=(same,)))
    assert not ok and "numerics vgf_error on the Vulkan device" in why
    without_run = ArmTestCase(file="ops/test_x.py", test="test_x_vgf_no_quant", param="a", pipeline="VgfPipeline",
                              profile="vgf:TOSA-1.0+FP", delegates=1, compare=False)
    assert agrees(without_run, _result(Outcome.DELEGATED, Numerics.VGF_ERROR)) == (True, "")


@pytest.mark.slow
def test_a_vgf_test_runs_executorchs_vgf_flow_and_its_delegate_on_the_vulkan_device():
    ids = ["ops/test_add.py::test_add_tensor_vgf_no_quant[5d_float]",
           "ops/test_add.py::test_add_tensor_vgf_quant[5d_float]"]
    table = run_arm_tests(ids, workers=1, progress=False, cache=False).set_index("test_id")
    assert list(table.index) == ids and table["agrees"].all(), table[["outcome", "disagreement"]]
    assert set(table["pipeline"]) == {"VgfPipeline"}
    assert set(table["profile"]) == {"vgf:TOSA-1.0+FP+INT+int4+int16+bf16"}
    assert list(table["quantization"]) == ["", "int8"] and set(table["outcome"]) == {"delegated"}
    # each delegate's .vgf ran on the Vulkan device and matched eager
    assert set(table["vgf_numerics"]) == {"match"} and (table["vgf_run_s"] > 0).all() and (table["vgf_kib"] > 0).all()
