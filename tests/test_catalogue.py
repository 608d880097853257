import pytest

from workbench import UnknownDtypeError, UnknownOperatorError, UnsupportedDtypeError, catalogue, dtypes

REQUIRED_OPS = [
    "add", "sub", "mul", "neg", "abs", "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not", "left_shift",
    "right_shift", "maximum", "minimum", "clamp", "eq", "ne", "lt", "le", "gt", "ge", "where", "cat", "stack",
    "slice_copy", "select", "permute", "view", "reshape", "unsqueeze", "squeeze", "expand", "repeat", "flip",
    "clone", "cumsum", "sum_dim", "amax", "amin", "argmax", "full", "full_like", "zeros_like", "ones_like",
    "arange", "constant_pad_nd", "index_select", "gather", "embedding", "to_int32", "mm", "bmm", "relu", "sigmoid",
]
REVIEW_VARIANTS = ["cat_int64_int32", "cat_int64_bool", "where_int64_values", "where_int64_buffer",
                   "slice_step2_int64", "slice_dynamic", "view_dynamic"]
CASES = [(e.name, d) for e in catalogue.entries() for d in e.dtypes]


def test_catalogue_has_the_required_operators_and_review_variants():
    assert len(catalogue.CATALOGUE) >= 44
    missing = [name for name in REQUIRED_OPS + REVIEW_VARIANTS if name not in catalogue.CATALOGUE]
    assert not missing


def test_every_dtype_is_covered_somewhere():
    covered = {d for e in catalogue.entries() for d in e.dtypes}
    assert covered == set(dtypes.DTYPES)


@pytest.mark.parametrize("op,dtype", CASES)
def test_inputs_are_seeded_and_the_eager_model_runs(torch, op, dtype):
    entry = catalogue.get(op)
    first, again, other = entry.inputs(dtype, 0), entry.inputs(dtype, 0), entry.inputs(dtype, 1)
    assert all(torch.equal(a, b) for a, b in zip(first, again))
    assert any(not torch.equal(a, b) for a, b in zip(first, other)) or all(t.numel() <= 1 for t in first)
    with torch.no_grad():
        entry.module(dtype)(*first)


def _int64_data_positions(entry):
    return [i for i, o in enumerate(entry.operands) if o.role == "data" and (o.dtype or "int64") == "int64"]


WITH_INT64_DATA = [e.name for e in catalogue.entries("int64") if _int64_data_positions(e)]


def test_most_int64_entries_carry_int64_data():
    assert len(WITH_INT64_DATA) >= 40


@pytest.mark.parametrize("op", WITH_INT64_DATA)
def test_int64_data_operands_reach_beyond_int32(torch, op):
    entry = catalogue.get(op)
    tensors = entry.inputs("int64", 0)
    assert any(tensors[i].dtype == torch.int64 and tensors[i].abs().max() > 2**31
               for i in _int64_data_positions(entry))


def test_review_variants_build_what_reviewers_described(torch):
    buffer_model = catalogue.get("where_int64_buffer").module("int64")
    assert buffer_model.other.dtype == torch.int64 and int(buffer_model.other.max()) == 2**40
    (x,) = catalogue.get("slice_step2_int64").inputs("int64")
    assert x.shape == (5,)
    _, partner = catalogue.get("cat_int64_int32").inputs("int64")
    assert partner.dtype == torch.int32
    _, flags = catalogue.get("cat_int64_bool").inputs("int64")
    assert flags.dtype == torch.bool
    assert catalogue.get("slice_dynamic").dynamic_shapes() is not None
    assert catalogue.get("view_dynamic").dynamic_shapes() is not None


def test_qint8_models_take_float_inputs(torch):
    (x, y) = catalogue.get("add").inputs("qint8")
    assert x.dtype == torch.float32


def test_unknown_operator_names_the_nearest():
    with pytest.raises(UnknownOperatorError, match="cumsum"):
        catalogue.get("cumsm")


def test_unsupported_dtype_lists_the_supported_ones():
    with pytest.raises(UnsupportedDtypeError, match="supports: .*float32"):
        catalogue.get("sigmoid").inputs("int32")


def test_unknown_dtype_lists_valid_dtypes():
    with pytest.raises(UnknownDtypeError, match="int64"):
        catalogue.get("add").inputs("int65")


def test_entries_filter_by_dtype():
    assert all("qint8" in e.dtypes for e in catalogue.entries("qint8"))
    assert catalogue.get("sigmoid") not in catalogue.entries("int32")


def test_an_edge_operator_given_for_an_entry_names_the_entries_that_use_it():
    with pytest.raises(UnknownOperatorError, match=r"^'aten.add.Tensor' is an edge operator, not a catalogue entry; "
                                                   r"the entries that use it: add, "):
        catalogue.get("aten.add.Tensor")
