"""The per-tensor trace of a node the Arm backend's passes folded away (no TOSA tensor of its own): judged against
the tensor that now stands for it, named where a wrong output starts, and a real no-op still within."""

import workbench
from workbench.core.rows import result_row


def _traced(torch, forward, inputs, profile="TOSA-1.0+INT"):
    module = type("Folded", (torch.nn.Module,), {"forward": lambda self, *args: forward(*args)})()
    return workbench.run_model(module, inputs, profile, trace=True)


def _ints(torch, *shape):
    return torch.randint(-5, 5, shape, dtype=torch.int32, generator=torch.Generator().manual_seed(0))


def _folded(result):
    return {row.fx_node: row for row in result.trace if row.note.startswith("folded:")}


def test_a_permute_folded_away_from_the_delegates_output_is_named_as_the_first_divergence(torch):
    """executorch 1.5.1 drops a bool permute after a comparison: the delegate returns the booleans untransposed.
    The permute has no tensor; GREATER's, which the delegate returns in its place, stands for it."""
    result = _traced(torch, lambda x: (x < -2).permute(1, 0), (_ints(torch, 2, 3),))
    assert result.outcome is workbench.Outcome.DELEGATED and result.numerics is workbench.Numerics.MISMATCH
    first = result.first_divergence
    assert first is not None and first.fx_node == "aten_permute_copy_default", str(result)
    assert first.note.startswith("folded: GREATER's tensor stands for aten_permute_copy_default")
    assert (first.tosa_op, first.within_tolerance, first.max_abs_error) == ("GREATER", False, 1)
    assert first.eager == _ints(torch, 2, 3).lt(-2).permute(1, 0).tolist()
    # after the comparison's own row, which is within: the comparison is right, the permute is not
    greater = next(row for row in result.trace if row.fx_node == "aten_lt_scalar")
    assert greater.within_tolerance and result.trace.index(greater) < result.trace.index(first)
    assert result_row(result)["first_divergence"] == "aten_permute_copy_default"
    assert "first divergence: aten_permute_copy_default" in str(result)
    from workbench.ui.trace_view import TraceView

    view = TraceView()
    view.show(result)
    assert "(folded: GREATER&#x27;s tensor stands for aten_permute_copy_default" in view.table_html.value


def test_a_folded_identity_permute_is_within(torch):
    result = _traced(torch, lambda x: (x < -2).permute(0, 1), (_ints(torch, 2, 3),))
    assert result.numerics is workbench.Numerics.MATCH and result.first_divergence is None, str(result)
    row = _folded(result)["aten_permute_copy_default"]
    assert row.within_tolerance and row.max_abs_error == 0 and row.tensor == "tosa_greater_default"


def test_in_a_chain_of_folded_nodes_the_first_that_the_output_no_longer_holds_is_named(torch):
    """The dropped permute, not the clone after it, is where the output goes wrong; both are out of tolerance."""
    result = _traced(torch, lambda x: (x < -2).permute(1, 0).clone(), (_ints(torch, 2, 3),))
    folded = _folded(result)
    permute, clone = folded["aten_permute_copy_default"], folded["dim_order_ops__clone_dim_order_default"]
    assert result.first_divergence is permute, str(result)
    assert clone.within_tolerance is False and result.trace.index(permute) < result.trace.index(clone)


def test_permutes_that_cancel_are_not_a_divergence(torch):
    """Both permutes are folded away and the output is right: the second one holds the tensor's values (within);
    the first one's value is in no tensor, its work undone further down, so it is not judged."""
    result = _traced(torch, lambda x: torch.tanh(x).permute(1, 0).permute(1, 0),
                     (torch.randn(2, 3, generator=torch.Generator().manual_seed(0)),), "TOSA-1.0+FP")
    assert result.numerics is workbench.Numerics.MATCH and result.first_divergence is None, str(result)
    folded = _folded(result)
    assert folded["aten_permute_copy_default_1"].within_tolerance is True
    first = folded["aten_permute_copy_default"]
    assert first.within_tolerance is None and "not judged" in first.note


def test_a_multiplication_folded_into_a_convolution_is_judged_on_the_convolutions_tensor(torch):
    """The Arm backend folds `conv(x) * 2` into the convolution's weights and bias: the convolution's tensors hold
    the product, so they are not its value (no divergence there) and stand, within, for the multiplication."""
    conv = torch.nn.Conv2d(2, 3, 3)
    inputs = (torch.randn(1, 2, 5, 5, generator=torch.Generator().manual_seed(0)),)
    result = _traced(torch, lambda x: conv(x) * 2, inputs, "TOSA-1.0+FP")
    assert result.numerics is workbench.Numerics.MATCH and result.first_divergence is None, str(result)
    assert _folded(result)["aten_mul_tensor"].within_tolerance is True
    held = [row for row in result.trace if row.fx_node == "aten_convolution_default" and row.tosa_op == "CONV2D"]
    assert held and all(row.within_tolerance is None and "holds the work of aten_mul_tensor" in row.note
                        for row in held)
