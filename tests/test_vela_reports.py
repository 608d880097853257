"""Vela's report files read into a VelaReport, checked against what the same Vela run printed; and a graph that
executorch delegates to Ethos-U55 but Vela refuses.

A quantized conv/relu/avgpool model goes through executorch's Ethos-U flow (EthosUCompileSpec with
--verbose-performance, EthosUQuantizer, EthosUPartitioner) with the real Vela; the reader's figures are compared
with Vela's stdout summary, parsed here on its own, and with the report's own totals.
"""

from __future__ import annotations

import contextlib
import io
import json
import re
import shutil

import pytest

from workbench.core.errors import StackError
from workbench.core.vela import VelaReport
from workbench.stack.ethos_u.vela_reports import read_reports

TARGETS = ("ethos-u55-128", "ethos-u85-256")


def _lower_for_ethos_u(model, inputs, target: str, folder, quantize: bool = True):
    """executorch's Ethos-U flow for `target` with Vela's files dumped under `folder` (a path without spaces:
    arm_vela.py splits Vela's arguments on them); the lowered program and what Vela printed."""
    import torch
    from executorch.backends.arm.ethosu import EthosUCompileSpec, EthosUPartitioner
    from executorch.backends.arm.quantizer import EthosUQuantizer, get_symmetric_quantization_config
    from executorch.exir import to_edge_transform_and_lower
    from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e

    spec = EthosUCompileSpec(target, extra_flags=["--verbose-performance"]).dump_intermediate_artifacts_to(
        str(folder))
    if quantize:
        quantizer = EthosUQuantizer(spec)
        quantizer.set_global(get_symmetric_quantization_config())
        model = prepare_pt2e(torch.export.export(model, inputs).module(check_guards=False), quantizer)
        model(*inputs)
        model = convert_pt2e(model)
    program = torch.export.export(model, inputs)
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        lowered = to_edge_transform_and_lower(program, partitioner=[EthosUPartitioner(spec)])
    return lowered, printed.getvalue()


def _delegates(lowered) -> list:
    return [n for n in lowered.exported_program().graph.nodes if n.name.startswith("lowered_module")]


def _compile_with_vela(target: str, folder) -> str:
    """Lower the conv/relu/avgpool model for `target`; what Vela printed."""
    import torch

    model = torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3), torch.nn.ReLU(), torch.nn.AvgPool2d(2)).eval()
    lowered, printed = _lower_for_ethos_u(model, (torch.randn(1, 3, 16, 16),), target, folder)
    assert len(_delegates(lowered)) == 1, "the model should lower to one delegate, so one Vela run"
    return printed


@pytest.fixture(scope="module", params=TARGETS)
def compiled(request, tmp_path_factory):
    folder = tmp_path_factory.mktemp(request.param)
    stdout = _compile_with_vela(request.param, folder)
    return folder / "output", stdout


def _printed(stdout: str, label: str) -> str:
    """The value Vela's print_performance_metrics_common printed after `label` (ethosu/vela/stats_writer.py)."""
    found = re.findall(rf"^{re.escape(label)}\s+(.+?)\s*$", stdout, re.MULTILINE)
    assert len(found) == 1, f"{label!r} printed {len(found)} times in:\n{stdout}"
    return found[0]


@pytest.mark.slow
def test_the_report_agrees_with_what_vela_printed(compiled):
    output, stdout = compiled
    report = read_reports(output)
    assert report.accelerator_configuration == _printed(stdout, "Accelerator configuration")
    assert report.system_configuration == _printed(stdout, "System configuration")
    assert report.memory_mode == _printed(stdout, "Memory mode")
    assert f"{report.clock_hz // 1_000_000} MHz" == _printed(stdout, "Accelerator clock")
    assert re.fullmatch(rf"{report.npu_operators} \(.*\)", _printed(stdout, "NPU operators ="))
    assert re.fullmatch(rf"{report.cpu_operators} \(.*\)", _printed(stdout, "CPU operators ="))
    assert f"{report.macs} MACs/batch" == _printed(stdout, "Neural network macs")
    assert f"{report.sram_used_bytes / 1024:.2f} KiB" == _printed(stdout, "Total SRAM used")
    if report.off_chip_flash_used_bytes:
        assert f"{report.off_chip_flash_used_bytes / 1024:.2f} KiB" == _printed(stdout, "Total Off-chip Flash used")
    # The per-layer table Vela printed (print_regor_perlayer_performance) has a row per layer, names last.
    table = stdout.split("Performance for NPU Grap", 1)[1].split("Network summary", 1)[0]
    rows = [line.split() for line in table.strip().splitlines()[3:] if line.strip()]
    assert [row[-1] for row in rows] == [layer.name for layer in report.layers]
    assert [int(row[5]) for row in rows] == [layer.cycles for layer in report.layers]


@pytest.mark.slow
def test_the_layers_add_up_to_the_network(compiled):
    report = read_reports(compiled[0])
    assert report.layers and report.cpu_operators == 0 and report.cpu_placed == ()
    assert all(layer.placement == "NPU" for layer in report.layers)
    assert sum(layer.cycles for layer in report.layers) == report.total_cycles
    assert sum(layer.macs for layer in report.layers) == report.macs > 0
    assert report.inference_seconds == pytest.approx(report.total_cycles / report.clock_hz)
    assert max(layer.staging_usage_bytes for layer in report.layers) == report.sram_used_bytes
    assert sum(layer.network_cycles_percent for layer in report.layers) == pytest.approx(100.0)
    assert VelaReport.from_dict(json.loads(json.dumps(report.to_dict()))) == report


@pytest.mark.slow
def test_a_missing_file_or_column_is_named(compiled, tmp_path):
    output = tmp_path / "output"
    shutil.copytree(compiled[0], output)
    per_layer = output / "out_per-layer.csv"
    per_layer.write_text(per_layer.read_text().replace("MAC Count", "MACs", 1))
    with pytest.raises(StackError, match=r"out_per-layer\.csv: Vela's report has no column 'MAC Count'"):
        read_reports(output)
    per_layer.unlink()
    with pytest.raises(StackError, match=r"out_per-layer\.csv: Vela's per-layer report is missing"):
        read_reports(output)
    (summary,) = output.glob("out_summary_*.csv")
    summary.unlink()
    with pytest.raises(StackError, match=r"expected one Vela summary file \*_summary_\*\.csv .* found none"):
        read_reports(output)


def _permute(dims):
    """A module that permutes its input (built in the test: collecting the suite imports no torch)."""
    import torch

    class Permute(torch.nn.Module):
        def forward(self, x):
            return x.permute(*dims)

    return Permute()


@pytest.mark.slow
def test_vela_refuses_an_int32_transpose_that_executorch_delegates_to_u55(tmp_path):
    """Vela's Ethos-U55 TOSA TRANSPOSE constraints allow an int32 NWHC transpose (H and W swapped) only with
    C <= 2^14 (ethosu/vela/vela.py::generate_supported_ops); executorch's EthosU55DtypeSupport checks only the
    dtype of a permute_copy. So the permute is partitioned and lowered to TOSA, and Vela refuses its TRANSPOSE;
    with one channel fewer it compiles."""
    import torch

    one_too_many = (torch.randint(-9, 9, (2, 3, 2**14 + 1), dtype=torch.int32),)
    with pytest.raises(RuntimeError, match=r"^Non-passthrough operation \(Transpose\) could not run on NPU$"):
        _lower_for_ethos_u(_permute((1, 0, 2)), one_too_many, "ethos-u55-128", tmp_path / "refused",
                           quantize=False)
    assert (tmp_path / "refused" / "out.tosa").stat().st_size > 0, "the TOSA lowering finished before Vela ran"
    assert not (tmp_path / "refused" / "output" / "out_vela.npz").exists()
    at_the_limit = (torch.randint(-9, 9, (2, 3, 2**14), dtype=torch.int32),)
    lowered, _ = _lower_for_ethos_u(_permute((1, 0, 2)), at_the_limit, "ethos-u55-128", tmp_path / "ok",
                                    quantize=False)
    assert len(_delegates(lowered)) == 1
    assert read_reports(tmp_path / "ok" / "output").npu_operators >= 1
