"""The review family's catalogue entries: where(cond, int64, bool), the aten.pad entry point, a shape-derived
int64 tensor crossing a delegate boundary, and the `dynamic` sweep preset with and without +shape."""

import pytest

import workbench
from workbench import catalogue, profiles
from workbench.batch.matrix import PRESETS

NEW = ("where_int64_bool", "pad_aten", "pad_reflect", "arange_dynamic_size")
SHAPE_PROFILES = ("TOSA-1.1+INT+shape", "TOSA-1.1+FP+shape", "TOSA-1.1+INT+int64+shape", "TOSA-1.1+FP+int64+shape")


def test_the_new_review_entries_are_in_the_catalogue():
    assert all(catalogue.get(name).family == "review" for name in NEW)


def test_where_int64_bool_promotes_the_bool_value_to_int64(torch):
    entry = catalogue.get("where_int64_bool")
    cond, x, flags = entry.inputs("int64")
    assert (cond.dtype, x.dtype, flags.dtype) == (torch.bool, torch.int64, torch.bool)
    out = entry.module("int64")(cond, x, flags)
    assert out.dtype == torch.int64
    assert torch.equal(out, torch.where(cond, x, flags.to(torch.int64)))


def test_pad_aten_pads_two_dimensions_with_a_value_beyond_int32():
    entry = catalogue.get("pad_aten")
    (x,) = entry.inputs("int64")
    out = entry.module("int64")(x)
    assert out.shape == (2, 4, 7)
    assert int(out[0, 3, 0]) == 2**40


def test_arange_dynamic_size_is_dynamic_and_runs_across_its_range(torch):
    entry = catalogue.get("arange_dynamic_size")
    assert entry.dynamic_shapes() is not None
    model = entry.module("int64")
    for rows in (3, 16):
        x = torch.zeros(rows, 4, dtype=torch.int64)
        assert torch.equal(model(x)[:, 0], torch.arange(rows))


def test_the_dynamic_preset_runs_every_dynamic_entry_with_and_without_shape():
    preset = PRESETS["dynamic"]
    assert set(preset.ops) == {e.name for e in catalogue.entries() if e.dynamic_dims}
    assert all(d in catalogue.get(op).dtypes for op in preset.ops for d in preset.dtypes)
    with_shape = [p for p in preset.profiles if p.endswith("+shape")]
    assert with_shape and all(p.removesuffix("+shape") in preset.profiles for p in with_shape)
    for name in preset.profiles:
        assert profiles.parse(name).declares("shape") == name.endswith("+shape"), name


def test_the_profile_presets_offer_the_shape_extension():
    assert set(SHAPE_PROFILES) <= set(profiles.PRESETS)
    assert all(profiles.parse(name).declares("shape") for name in SHAPE_PROFILES)


# What the partitioner sees, per profile: the union over these runs is each entry's edge_ops.
SEEN = {
    "where_int64_bool": [("int64", "TOSA-1.1+INT+int64")],
    "pad_aten": [("int64", "TOSA-1.0+INT"), ("float32", "TOSA-1.0+FP")],
    "pad_reflect": [("float32", "TOSA-1.0+INT"), ("float32", "TOSA-1.0+FP")],
    "arange_dynamic_size": [("int64", "TOSA-1.0+INT")],
}


@pytest.mark.parametrize("op", NEW)
def test_edge_ops_are_what_the_partitioner_sees(op):
    seen = set()
    for dtype, profile in SEEN[op]:
        seen |= {node.target for node in workbench.run_case(op, dtype, profile).nodes}
    assert set(catalogue.get(op).edge_ops) == seen


# (op, dtype, profile) -> (outcome, numerics), on the pinned stack (slow: isolated runs, one a ~60 s abort).
OUTCOMES = {
    ("where_int64_bool", "int64", "TOSA-1.0+INT"): ("fallback", "not_run"),
    ("where_int64_bool", "int64", "TOSA-1.1+INT+int64"): ("fallback", "not_run"),
    ("where_int64_bool", "int64", "TOSA-1.0+FP"): ("fallback", "not_run"),
    ("pad_aten", "int64", "TOSA-1.0+INT"): ("fallback", "not_run"),
    ("pad_aten", "int64", "TOSA-1.1+INT+int64"): ("lowering_error", "not_run"),
    ("pad_aten", "int64", "TOSA-1.0+FP"): ("fallback", "not_run"),
    ("pad_aten", "int32", "TOSA-1.0+FP"): ("lowering_error", "not_run"),
    ("pad_reflect", "float32", "TOSA-1.1+INT+int64"): ("partial", "match"),
    ("arange_dynamic_size", "int64", "TOSA-1.0+INT"): ("fallback", "not_run"),
    ("arange_dynamic_size", "int64", "TOSA-1.1+INT+int64"): ("lowering_error", "not_run"),
    ("arange_dynamic_size", "int64", "TOSA-1.1+INT+shape"): ("fallback", "not_run"),
    ("arange_dynamic_size", "int64", "TOSA-1.1+INT+int64+shape"): ("lowering_error", "not_run"),
    ("arange_dynamic_size", "int64", "TOSA-1.1+FP+int64+shape"): ("lowering_error", "not_run"),
    ("arange_dynamic_size", "float32", "TOSA-1.0+FP"): ("partial", "reference_error"),
}


@pytest.mark.slow
@pytest.mark.parametrize("op,dtype,profile", list(OUTCOMES))
def test_outcomes_on_the_pinned_stack(op, dtype, profile):
    # isolated: the reference model aborts (and reports) on the dynamic delegate input of arange_dynamic_size
    result = workbench.run(workbench.Case.of(op, dtype, profile), isolate=True, timeout=300)
    assert (result.outcome.value, result.numerics.value) == OUTCOMES[op, dtype, profile], result.reason_summary()


def _placement(result):
    return {node.target: node.delegated for node in result.nodes}


@pytest.mark.parametrize("profile,delegated", [
    ("TOSA-1.1+INT+int64", {"aten.add.Tensor"}),
    ("TOSA-1.1+INT+int64+shape", {"aten.unsqueeze_copy.default", "aten.add.Tensor"}),
])
def test_a_shape_derived_int64_tensor_crosses_into_the_delegate(profile, delegated):
    result = workbench.run_case("arange_dynamic_size", "int64", profile)
    placement = _placement(result)
    assert {target for target, inside in placement.items() if inside} == delegated
    assert not placement["aten.sym_size.int"] and not placement["aten.arange.start_step"]
    assert result.outcome.value == "lowering_error" and "int64" in result.error.one_line()


def test_the_arm_where_check_rejects_int64_and_bool_values(torch):
    result = workbench.run_case("where_int64_bool", "int64", "TOSA-1.1+INT+int64")
    (node,) = result.nodes
    assert node.input_dtypes == ("bool", "int64", "bool") and node.output_dtypes == ("int64",)
    assert not node.delegated and "torch.int64 and/or tensor y dtype torch.bool" in node.reason
