"""Small real architectures in the catalogue, and the model summary (delegates, CPU islands, int64 tensors
crossing a delegate boundary) per profile and policy."""

import pytest

import workbench
from workbench import Matrix, catalogue
from workbench.batch.matrix import PRESETS, WHOLE_MODEL_FAMILIES
from workbench.core.records import NodeRecord
from workbench.batch import model_summary as ms

ARCHITECTURES = ("decoder_block", "small_cnn", "lstm_step")


def test_the_architectures_are_in_the_catalogue_and_seeded():
    import torch

    assert {e.name for e in catalogue.entries() if e.family == "architecture"} == set(ARCHITECTURES)
    for name in ARCHITECTURES:
        entry = catalogue.get(name)
        for dtype in entry.dtypes:
            first, again = entry.module(dtype), entry.module(dtype)
            assert all(torch.equal(a, b) for a, b in zip(first.state_dict().values(), again.state_dict().values()))
            inputs = entry.inputs(dtype)
            with torch.no_grad():
                assert all(torch.equal(a, b) for a, b in zip(first(*inputs), again(*inputs)))


def test_the_decoder_block_takes_int64_tokens_and_returns_a_greedy_int64_token():
    import torch

    entry = catalogue.get("decoder_block")
    tokens, start = entry.inputs("int64")
    assert tokens.dtype == start.dtype == torch.int64
    logits, token = entry.module("int64")(tokens, start)
    assert token.dtype == torch.int64 and torch.equal(token, logits.argmax(-1))
    assert "k_cache" in dict(entry.module("int64").named_buffers())


def test_whole_catalogue_sweeps_leave_the_architectures_out():
    assert PRESETS["int64-review"].ops is None and "architecture" in WHOLE_MODEL_FAMILIES
    cases = Matrix(None, "int64", "TOSA-1.0+INT").cases()
    assert cases and not {case.name for case in cases} & set(ARCHITECTURES)
    named = Matrix("decoder_block", "int64", "TOSA-1.0+INT").cases()
    assert [(case.name, case.dtype) for case in named] == [("decoder_block", "int64")]


def _node(name, target, args, ins, outs, tag=None):
    return NodeRecord(name, target, tuple(args), tuple(ins), tuple(() for _ in ins), tuple(outs),
                      tuple(() for _ in outs), tag is not None, tag, None)


# x -> a (tag0) -> b (CPU, int64) -> c (CPU) ;  a -> d (tag0) ;  b, i -> e (tag1, int64) ; f (CPU) alone;
# a -> mp (tag0, two outputs) whose int64 getitem_1 h (CPU) reads with c; a delegated dequantize whose int64
# zero point is a parameter, not data.
HAND = (
    _node("a", "aten.add.Tensor", ["x"], ["float32"], ["float32"], "tag0"),
    _node("b", "aten.argmax.default", ["a"], ["float32"], ["int64"]),
    _node("c", "aten.neg.default", ["b"], ["int64"], ["int64"]),
    _node("d", "aten.mul.Tensor", ["a"], ["float32"], ["float32"], "tag0"),
    _node("e", "aten.add.Tensor", ["b", "i"], ["int64", "int64"], ["int64"], "tag1"),
    _node("f", "aten.abs.default", ["i"], ["int64"], ["int64"]),
    _node("mp", "aten.max_pool2d_with_indices.default", ["a"], ["float32"], ["float32", "int64"], "tag0"),
    _node("h", "aten.add.Tensor", ["getitem_1", "c"], ["int64", "int64"], ["int64"]),
    _node("q", "quantized_decomposed.dequantize_per_tensor.default", ["x", "zp"], ["int8", "int64"], ["float32"],
          "tag0"),
)


def test_the_summary_of_a_hand_checked_graph():
    assert sorted(map(sorted, ms.cpu_islands(HAND))) == [["b", "c", "h"], ["f"]]
    assert sorted(ms.int64_crossings(HAND)) == [("b", "cpu", "tag1"), ("e", "tag1", "output"),
                                                  ("i", "input", "tag1"), ("mp", "tag0", "cpu")]


@pytest.mark.slow
def test_the_summary_of_a_real_model_with_a_known_cpu_island():
    import torch

    class _Chain(torch.nn.Module):
        """A float add and mul the FP profile delegates, an argmax it leaves on CPU (int32 TOSA ARGMAX), and an
        int64 add of that argmax and an int64 input."""

        def forward(self, x, i):
            a = x + 1
            return a * 2, a.argmax(-1) + i

    inputs = (torch.randn(2, 5), torch.tensor([3, 4]))
    plain = ms.model_summary(workbench.run_model(_Chain(), inputs, "TOSA-1.0+FP"))
    # TOSA-1.0+FP: the int64 add stays on CPU beside the argmax: one delegate, one island, no int64 crossing
    # (the constants 1 and 2 are lifted int64 tensors cast to float32 inside the delegate: program state, no edge).
    assert (plain["delegates"], plain["cpu_islands"], plain["int64_crossings"]) == (1, 1, 0), plain["crossings"]
    wide = ms.model_summary(workbench.run_model(_Chain(), inputs, "TOSA-1.1+FP+int64"))
    # +int64: the int64 add is accepted (the partitioner puts it with the mul, the first add in another delegate);
    # the argmax alone is the island, and three int64 tensors cross: the argmax and the input i into the int64
    # add's delegate, its result out.
    assert (wide["delegates"], wide["cpu_islands"], wide["int64_crossings"]) == (2, 1, 3), wide["crossings"]
    assert wide["crossings"] == ("aten_argmax_default: cpu -> tag0; i: input -> tag0; "
                                 "aten_add_tensor_1: tag0 -> output")


PROFILES = ("TOSA-1.0+INT", "TOSA-1.0+FP", "TOSA-1.1+INT+int64")
# (op, dtype) -> per profile: (outcome, numerics, delegates, cpu_islands, int64_crossings) under stock, on the
# pinned stack (executorch 1.5.1).
OBSERVED = {
    ("decoder_block", "int64"): [("fallback", "not_run", 0, 1, 0), ("partial", "match", 2, 3, 0),
                                 ("lowering_error", "not_run", 1, 1, 2)],
    ("lstm_step", "int64"): [("fallback", "not_run", 0, 1, 0), ("partial", "match", 1, 2, 0),
                             ("fallback", "not_run", 0, 1, 0)],
    ("small_cnn", "float32"): [("fallback", "not_run", 0, 1, 0), ("partial", "match", 1, 1, 0),
                               ("fallback", "not_run", 0, 1, 0)],
    ("small_cnn", "qint8"): [("partial", "match", 1, 1, 0), ("lowering_error", "not_run", 5, 2, 0),
                             ("partial", "match", 1, 1, 0)],
}


@pytest.mark.slow
@pytest.mark.parametrize("op", ARCHITECTURES)
def test_each_architecture_runs_under_the_profiles_as_documented(op):
    entry = catalogue.get(op)
    seen = set()
    for dtype in entry.dtypes:
        results = workbench.sweep_results(Matrix(op, dtype, PROFILES), workers=1)
        table = ms.summary_table(results)
        assert list(table.profile) == list(PROFILES)
        got = [(r.outcome, r.numerics, r.delegates, r.cpu_islands, r.int64_crossings) for r in table.itertuples()]
        assert got == OBSERVED[op, dtype], list(table.crossings)
        seen |= {n.target for r in results for n in r.nodes if not n.target.startswith("quantized_decomposed.")}
    assert set(entry.edge_ops) == seen


@pytest.mark.slow
def test_the_policy_sweep_has_a_row_per_profile_and_policy_and_the_decoder_finding():
    profiles = ("TOSA-1.0+INT", "TOSA-1.1+INT+int64")
    policies = ("stock", "ext-int64-allowlist")
    table = workbench.architecture_summary("decoder_block", "int64", profiles=profiles, policies=policies)
    assert list(zip(table.profile, table.policy)) == [(p, q) for p in profiles for q in policies]
    wide = table[table.profile == "TOSA-1.1+INT+int64"].set_index("policy")
    # The allowlist changes nothing here: every int64 node stock delegates (the positions' arange, add,
    # unsqueeze and the mask's le) is on the derived list; lowering then fails on the int64 ADD.
    assert wide.loc["stock", "delegates"] == wide.loc["ext-int64-allowlist", "delegates"] == 1
    assert set(wide.outcome) == {"lowering_error"}
    assert wide.loc["stock", "error"].endswith("Unsupported dtype torch.int64 for ADD")


@pytest.mark.slow
def test_the_cli_prints_the_summary(capsys):
    from workbench.cli import main

    assert main(["summary", "lstm_step", "--profiles", "TOSA-1.0+FP", "--policy", "stock"]) == 0
    out = capsys.readouterr().out
    assert "TOSA-1.0+FP" in out and "cpu_islands" in out and "no int64 crossing" in out
    assert main(["summary", "lstm_stp"]) == 2
