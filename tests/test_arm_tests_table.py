"""data/arm-tests.csv and data/arm-tests-unread.csv (scripts/arm_tests_table.py, `make arm-tests`) still describe the
installed Arm test tree: every test function is in one of them, every disagreement is judged, docs cite their
figures, and a sample of rows recomputes to the same verdict."""

import re
from pathlib import Path

import pandas as pd
import pytest

from workbench.batch.arm_tests import suite as arm_tests
from workbench.batch.arm_tests.suite import from_arm_tests, run_arm_tests, select_files
from workbench.stack import versions
from workbench.stack.arm_tests.census import census_file

ROOT = Path(__file__).resolve().parent.parent
TABLE, UNREAD = ROOT / "data" / "arm-tests.csv", ROOT / "data" / "arm-tests-unread.csv"
DOCS = ROOT / "docs" / "executorch-tests.md"


@pytest.fixture(scope="module")
def table():
    return pd.read_csv(TABLE, keep_default_na=False)


@pytest.fixture(scope="module")
def unread():
    return pd.read_csv(UNREAD, keep_default_na=False)


def _function(test_id: str) -> str:
    return test_id.split("[")[0]


def test_every_test_function_of_the_tree_is_read_or_counted_with_its_reason(table, unread):
    folder = arm_tests.tests_folder()
    functions = {f"{f.file}::{f.name}" for name in select_files("all", folder)
                 for f in census_file(folder / name, name)}
    listed = set(map(_function, table["test_id"])) | set(map(_function, unread["test_id"]))
    assert functions == listed, (sorted(functions - listed)[:5], sorted(listed - functions)[:5])
    assert (unread["reason"] != "").all()


def test_the_rows_are_of_the_installed_stack(table):
    installed = versions.versions()
    assert set(table["executorch"]) == {installed["executorch"]} and set(table["torch"]) == {installed["torch"]}


def test_every_disagreement_is_judged_with_evidence(table):
    disagreeing = table[~table["agrees"]]
    assert (disagreeing["judgement"] != "").all() and (disagreeing["evidence"] != "").all(), \
        list(disagreeing[disagreeing["judgement"] == ""]["test_id"])
    assert (table[table["agrees"]]["judgement"] == "").all()


def test_the_documents_figures_are_the_tables(table, unread):
    text = DOCS.read_text(encoding="utf-8")
    agreeing = int(table["agrees"].sum())
    assert f"**{agreeing} of {len(table)} cases agree" in text
    functions = len(set(map(_function, table["test_id"])))
    assert f"{functions} test functions read" in text
    assert f"{len(unread)} rows of `data/arm-tests-unread.csv`" in text
    for reason, count in unread["reason"].value_counts().items():
        assert re.search(rf"\| {re.escape(reason)} \| {count} \|", text), reason


@pytest.mark.slow
def test_a_sample_of_rows_recomputes_to_the_same_verdict(table):
    # per pipeline, the first agreeing and the first disagreeing row (ids sorted): every kind of verdict
    sample = pd.concat([rows.groupby("agrees").head(1) for _, rows in table.sort_values("test_id").groupby("pipeline")])
    sample = sample[~sample["file"].str.startswith("models/")]  # the whole-model files take minutes each
    cases = from_arm_tests(sorted(set(sample["file"])), cap=2)
    again = run_arm_tests(cases.only(sample["test_id"]), workers=2, progress=False).set_index("test_id")
    for row in sample.itertuples():
        now = again.loc[row.test_id]
        assert (now["outcome"], now["numerics"], bool(now["agrees"])) == (row.outcome, row.numerics, row.agrees), \
            row.test_id
