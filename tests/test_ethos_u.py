"""Ethos-U targets: executorch's Ethos-U flow (EthosUQuantizer, EthosUPartitioner, Vela) run for real, Vela's
report in the result, the TOSA graph Vela compiled run on the reference model, and targets checked up front."""

import subprocess
import sys

import pytest

import workbench
from workbench.core import vela
from workbench.core.errors import ProfileError
from workbench.core.outcomes import Outcome
from workbench.core.records import result_from_dict
from workbench.core.rows import result_row
from workbench.stack import profiles


@pytest.fixture(scope="module", params=["ethos-u55-128", "ethos-u85-256"])
def npu_result(request, conv_block):
    return workbench.run_model(*conv_block, request.param, quantization="int8")


@pytest.mark.slow
def test_a_quantized_conv_block_runs_on_the_npu_and_its_tosa_graph_matches_eager(npu_result):
    assert npu_result.outcome is Outcome.DELEGATED, npu_result
    assert npu_result.numerics.value == "match", npu_result
    (delegate,) = npu_result.delegates
    report = delegate.vela
    assert report is not None, npu_result.notes
    assert report.accelerator_configuration == npu_result.profile.replace("ethos-u", "Ethos_U").replace("-", "_", 1)
    assert report.cpu_operators == 0 and report.npu_operators > 0
    assert report.total_cycles > 0 and report.sram_used_bytes > 0
    assert report.inference_seconds == pytest.approx(report.total_cycles / report.clock_hz, rel=1e-3)
    assert sum(layer.macs for layer in report.layers) == report.macs
    # the rows of the convolution's operators hold at least its arithmetic: 8 output channels x 3x3x3 weights x
    # 14x14 outputs (a row may hold a fused neighbour's MACs too)
    conv_rows = [layer for layer, node in vela.layer_nodes(delegate) if node == "aten_convolution_default"]
    assert sum(layer.macs for layer in conv_rows) >= 8 * 27 * 14 * 14
    assert "vela" in npu_result.timings


@pytest.mark.slow
def test_the_result_says_where_each_node_runs_and_what_vela_estimated(npu_result):
    text = str(npu_result)
    assert "Vela: Ethos_U" in text and " cycles = " in text
    row = result_row(npu_result)
    assert row["npu_share"] == 1.0 and row["vela_cycles"] == npu_result.delegates[0].vela.total_cycles
    assert row["vela_cpu_ops"] == 0


@pytest.mark.slow
def test_a_result_with_a_vela_report_reads_back_equal(npu_result):
    again = result_from_dict(npu_result.to_dict())
    assert again.delegates[0].vela == npu_result.delegates[0].vela


@pytest.mark.slow
def test_the_users_process_keeps_executorchs_vela_compile_and_sees_no_vela_output(npu_result, capfd):
    from executorch.backends.arm import arm_vela
    from executorch.backends.arm.ethosu import backend

    assert backend.vela_compile is arm_vela.vela_compile
    workbench.run_case("relu", "qint8", "ethos-u55-64")
    assert "Network summary" not in capfd.readouterr().out


def test_targets_of_one_family_share_one_quantized_export(conv_block):
    cases = [workbench.Case.model(*conv_block, target, quantization="int8")
             for target in ("ethos-u55-64", "ethos-u55-256", "ethos-u85-512")]
    keys = [case.export_key for case in cases]
    assert keys[0] == keys[1] != keys[2]
    assert cases[0].quantizer_profile == "TOSA-1.0+INT+int16+int4+u55"


@pytest.mark.parametrize("given, named", [
    ("ethos-u55-100", "ethos-u55-32, ethos-u55-64"),
    ("ethos-u55-128:Ethos_U85_SYS_DRAM_Mid:Shared_Sram", "Ethos_U55_Deep_Embedded, Ethos_U55_High_End_Embedded"),
    ("ethos-u85-256:Ethos_U85_SYS_DRAM_Mid:Lots_Of_Sram", "Sram_Only, Shared_Sram"),
    ("ethos-u85-256:Ethos_U85_SYS_DRAM_Mid", "ethos-u85-256:Ethos_U85_SYS_DRAM_Mid:Sram_Only"),
    ("ethos-u55-128:Ethos_U55_High_End_Embedded:Dedicated_Sram", "arena_mem_area=OffChipFlash .must be Sram or Dram"),
])
def test_a_target_vela_does_not_know_is_refused_naming_what_is_valid(given, named):
    with pytest.raises(ProfileError, match=named):
        profiles.parse(given)


def test_a_target_names_its_configuration_only_when_it_is_not_executorchs_default():
    assert profiles.parse("ETHOS-U85-256").name == "ethos-u85-256"
    assert profiles.parse("ethos-u85-256:Ethos_U85_SYS_DRAM_Mid:Sram_Only").name == "ethos-u85-256"
    chosen = profiles.parse("ethos-u85-256:Ethos_U85_SYS_DRAM_High:Shared_Sram")
    assert chosen.name == "ethos-u85-256:Ethos_U85_SYS_DRAM_High:Shared_Sram"
    assert chosen.tosa_spec == "TOSA-1.0+INT+int16+int4+cf"


@pytest.mark.slow
def test_a_chosen_system_configuration_reaches_vela(conv_block):
    result = workbench.run_model(*conv_block, "ethos-u85-256:Ethos_U85_SYS_DRAM_High:Shared_Sram", quantization="int8")
    report = result.delegates[0].vela
    assert (report.system_configuration, report.memory_mode) == ("Ethos_U85_SYS_DRAM_High", "Shared_Sram")


@pytest.mark.slow
def test_the_cli_runs_a_target_and_refuses_an_unknown_one_in_one_line():
    run = [sys.executable, "-m", "workbench", "run", "add", "--dtype", "qint8"]
    done = subprocess.run([*run, "--profile", "ethos-u55-128"], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "Vela: Ethos_U55_128" in done.stdout and "NPU" in done.stdout
    refused = subprocess.run([*run, "--profile", "ethos-u65-256"], capture_output=True, text=True, timeout=300)
    assert refused.returncode == 2
    assert len(refused.stderr.strip().splitlines()) == 1 and "ethos-u55-32" in refused.stderr


@pytest.mark.slow
def test_masked_fill_under_u55_is_quantized_for_u55_and_stays_on_cpu_as_executorch_finds(torch):
    """executorch's test_masked_fill.py::test_masked_fill_scalar_u55_INT: the quantizer of TOSA-1.0+INT+u55 keeps
    masked_fill whole (its pass config skips DecomposeMaskedFillPass under U55), so nothing is delegated."""

    class MaskedFill(torch.nn.Module):
        def forward(self, x, mask):
            return x.masked_fill(mask, 1.5)

    x = torch.rand(1, 3, 4, 4)
    result = workbench.run_model(MaskedFill(), (x, x > 0.5), "TOSA-1.0+INT+u55", quantization="int8")
    assert result.case.quantizer_profile == "TOSA-1.0+INT+u55"
    assert result.outcome is Outcome.FALLBACK and not result.delegates
    assert "aten.where.self" in {node.target for node in result.cpu_nodes}


@pytest.mark.slow
def test_a_graph_vela_refuses_ends_in_vela_error_with_velas_reason_and_node(refused):
    assert refused.outcome is Outcome.VELA_ERROR, refused
    assert refused.error.stage == "vela"
    assert refused.error.root_cause == "Non-passthrough operation (Transpose) could not run on NPU"
    assert refused.error.failing_pass == "Vela"
    assert refused.error.failing_node.name == "aten_permute_copy_default"
    assert all(node.delegated for node in refused.nodes), "TOSA partitioning accepted every node"


@pytest.mark.slow
def test_the_culprit_search_keeps_the_refused_node_on_cpu_and_the_rest_runs_on_the_npu(refused):
    search = workbench.find_culprits(refused)
    assert [list(culprit.nodes) for culprit in search.culprits] == [["aten_permute_copy_default"]]
    assert search.result.outcome is Outcome.PARTIAL and search.result.numerics.value == "match"
    assert search.result.delegates[0].vela.npu_operators > 0
