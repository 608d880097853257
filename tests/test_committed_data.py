"""data/int64-review.csv is still what the pinned stack produces."""

from pathlib import Path

import pytest

import workbench
from workbench.batch.matrix import PRESETS, WHOLE_MODEL_FAMILIES
from workbench.stack import versions

DATA = Path(__file__).resolve().parent.parent / "data" / "int64-review.csv"


@pytest.fixture(scope="module")
def review():
    return workbench.load_results(DATA)


def test_it_is_the_whole_preset_on_the_installed_versions(review):
    preset = PRESETS["int64-review"]
    assert set(review["profile"]) == set(preset.profiles)
    assert set(review["dtype"]) <= set(preset.dtypes)
    expected = {(e.name, d, p) for e in workbench.catalogue.entries() if e.family not in WHOLE_MODEL_FAMILIES
                for d in e.dtypes if d in preset.dtypes for p in preset.profiles}
    assert set(zip(review.op, review.dtype, review.profile)) == expected
    installed = versions.versions()
    assert set(review["executorch"]) == {installed["executorch"]}
    assert set(review["torch"]) == {installed["torch"]}
    assert set(review["tosa_tools"]) == {installed["tosa-tools"]}


@pytest.mark.slow
def test_a_sample_of_rows_recomputes_identically(review):
    # Two rows of every outcome seen, deterministically chosen.
    sample = review.sort_values(["outcome", "op", "dtype", "profile"]).groupby("outcome").head(2)
    for row in sample.itertuples():
        result = workbench.run_case(row.op, row.dtype, row.profile)
        assert (result.outcome.value, result.numerics.value, result.reason_summary()) == (
            row.outcome, row.numerics, row.reason), f"{row.op} {row.dtype} {row.profile}"
