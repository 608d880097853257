"""Results built by hand for the graph tests (no executorch): a stack of delegates with int64 detours on CPU
between them, as workbench.catalogue.big_graph lowers; and the mark for tests that need Graphviz's `dot`."""

from __future__ import annotations

import pytest

from workbench.core.outcomes import Numerics, Outcome
from workbench.core.records import CaseResult, DelegateRecord, NodeRecord
from workbench.views.graph import svg as graph_svg

needs_dot = pytest.mark.skipif(graph_svg.graphviz_missing() is not None,
                               reason=f"{graph_svg.graphviz_missing()} (bash scripts/ensure-graphviz.sh)")


def node(name, target, args, dtypes_in, dtype_out, tag=None, reason=None):
    return NodeRecord(name=name, target=target, args=tuple(args), input_dtypes=tuple(dtypes_in),
                      input_shapes=tuple((4,) for _ in args), output_dtypes=(dtype_out,), output_shapes=((4,),),
                      delegated=tag is not None, delegate=tag, reason=reason)


def tosa(*ops):
    return tuple({"op": op, "inputs": [], "outputs": []} for op in ops)


def stacked(stages: int, blocks: int, outcome=Outcome.PARTIAL):
    """Like workbench.catalogue.big_graph: float blocks (mul, add, relu) per stage in one delegate each, an int64
    detour (cast, add, cast back) on CPU between stages, then the add that joins it back into the next stage."""
    nodes, delegates, last, n = [], [], "x", 0
    for stage in range(stages):
        tag = f"tag{stages - 1 - stage}"  # executorch's tags need not follow the graph order
        ops = []
        if stage:
            nodes.append(node(f"aten_add_tensor_join_{stage}", "aten.add.Tensor", [last, f"to_float_{stage}"],
                              ["float32", "float32"], "float32", tag))
            last, ops = f"aten_add_tensor_join_{stage}", ["ADD"]
        for _ in range(blocks):
            nodes += [node(f"aten_mul_tensor_{n}", "aten.mul.Tensor", [last, f"p_w_{n}"], ["float32"] * 2, "float32",
                           tag),
                      node(f"aten_add_tensor_{n}", "aten.add.Tensor", [f"aten_mul_tensor_{n}", f"p_b_{n}"],
                           ["float32"] * 2, "float32", tag),
                      node(f"aten_relu_default_{n}", "aten.relu.default", [f"aten_add_tensor_{n}"], ["float32"],
                           "float32", tag)]
            last, n, ops = f"aten_relu_default_{n}", n + 1, ops + ["CONST", "CONST", "MUL", "ADD", "CLAMP"]
        delegates.append(DelegateRecord(f"delegate_{stage}", tosa(*ops), b""))
        if stage < stages - 1:
            nodes += [node(f"to_int64_{stage + 1}", "dim_order_ops._to_dim_order_copy.default", [last], ["float32"],
                           "int64", reason="Output dtype torch.int64 is not supported"),
                      node(f"int64_add_{stage + 1}", "aten.add.Tensor",
                           [f"to_int64_{stage + 1}", "_lifted_tensor_constant0"], ["int64", "int64"], "int64",
                           reason="Non-constant node with int64 output."),
                      node(f"to_float_{stage + 1}", "dim_order_ops._to_dim_order_copy.default",
                           [f"int64_add_{stage + 1}"], ["int64"], "float32", reason="Non-constant int64 input")]
    if outcome is Outcome.LOWERING_ERROR:
        delegates = []
    return CaseResult(op="model:StackedBlocks", dtype="float32", profile="TOSA-1.0+FP", policy="stock", seed=None,
                      outcome=outcome, numerics=Numerics.NOT_RUN, nodes=tuple(nodes), error=None,
                      delegates=tuple(delegates), outputs=(), timings={}, versions={})
