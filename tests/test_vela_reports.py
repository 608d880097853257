"""Vela's report files read into a VelaReport, checked against what the same Vela run printed.

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
from workbench.stack.vela_reports import read_reports

TARGETS = ("ethos-u55-128", "ethos-u85-256")


def _compile_with_vela(target: str, folder) -> str:
    """Lower the model for `target` with Vela's report files dumped under `folder`; Vela's stdout."""
    import torch
    from executorch.backends.arm.ethosu import EthosUCompileSpec, EthosUPartitioner
    from executorch.backends.arm.quantizer import EthosUQuantizer, get_symmetric_quantization_config
    from executorch.exir import to_edge_transform_and_lower
    from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e

    model = torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3), torch.nn.ReLU(), torch.nn.AvgPool2d(2)).eval()
    inputs = (torch.randn(1, 3, 16, 16),)
    spec = EthosUCompileSpec(target, extra_flags=["--verbose-performance"]).dump_intermediate_artifacts_to(
        str(folder))
    quantizer = EthosUQuantizer(spec)
    quantizer.set_global(get_symmetric_quantization_config())
    prepared = prepare_pt2e(torch.export.export(model, inputs).module(check_guards=False), quantizer)
    prepared(*inputs)
    program = torch.export.export(convert_pt2e(prepared), inputs)
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        lowered = to_edge_transform_and_lower(program, partitioner=[EthosUPartitioner(spec)])
    delegates = [n for n in lowered.exported_program().graph.nodes if "lowered_module" in n.name]
    assert len(delegates) == 1, "the model should lower to one delegate, so one Vela run"
    return printed.getvalue()


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
