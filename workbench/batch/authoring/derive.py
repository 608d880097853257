"""Derive the EXT-INT64 candidate list: which TOSA operators each catalogue operator lowers to on the installed
executorch, and whether every one of them has a 64-bit row in the TOSA 1.1 specification.

The lowering is observed with int32 data, which lowers on the pinned stack (read from the TOSA flatbuffer, or, when
that lowering fails, the TOSA operator the error names). An operator is a candidate when every one of those
TOSA operators has a 64-bit row; `status` tells the two other cases apart: a TOSA operator without such a row,
or no TOSA lowering observed at all (no evidence either way). The candidates' edge ops are the list;
`policies.specification.write_candidates(table)` stores the table that the `ext-int64-allowlist` policy reads.
"""

from __future__ import annotations

import re

from ... import catalogue
from ...policies.specification import CANDIDATE, CANDIDATE_COLUMNS, candidate_status, int64_tosa_ops
from ..matrix import Matrix
from ..sweeps import sweep_results

# The lowering is observed on int32 data, which lowers on the pinned stack: first without the extension; for an
# operator whose PyTorch result is int64 even on int32 data (sum, cumsum, argmax), with it.
OBSERVED_PROFILES = ("TOSA-1.1+INT", "TOSA-1.1+INT+int64")
# How executorch's lowering errors name the TOSA operator they were building.
_TOSA_OP_IN_ERROR = re.compile(r"\(TOSA op: ([A-Z0-9_]+)\)|\bfor ([A-Z][A-Z0-9_]+)$|tosa\.([A-Z][A-Z0-9_]+)\.default")


def _observed_ops(result) -> tuple[str, list[str]]:
    """(evidence, TOSA operators) of one int32 observation: read from the flatbuffer, or named by the error."""
    if result.delegates:
        # Operators producing only shape values (CONST_SHAPE) carry no tensor data, so need no 64-bit row.
        return "flatbuffer", sorted({
            op["op"] for d in result.delegates for op in d.tosa_ops
            if not op["outputs"] or any(t["dtype"] != "SHAPE" for t in op["outputs"])
        })
    if result.error is not None:
        match = _TOSA_OP_IN_ERROR.search(result.error.root_cause)
        if match:
            return "lowering error", [next(g for g in match.groups() if g)]
    return "not lowered", []


def derive_candidates(*, workers: int | None = None, cache=True, table=None):
    """The candidate table: one row per single-operator catalogue entry that takes int32 data (see the module
    docstring); models of several operators (OpEntry.composite, the architectures) say nothing about one operator."""
    import pandas as pd

    allowed = int64_tosa_ops(table)
    entries = [entry for entry in catalogue.entries("int32") if entry.single_operator]
    results = sweep_results(Matrix([e.name for e in entries], ["int32"], OBSERVED_PROFILES), workers=workers,
                            cache=cache)
    by_case = {(r.op, r.profile): r for r in results}
    derived = []
    for entry in entries:
        observations = [by_case[entry.name, p] for p in OBSERVED_PROFILES]
        chosen = next((r for r in observations if r.delegates), None) or next(
            (r for r in observations if _observed_ops(r)[1]), observations[0])
        evidence, used = _observed_ops(chosen)
        missing = [op for op in used if op not in allowed]
        status = candidate_status(used, missing)
        derived.append({
            "op": entry.name,
            "edge_ops": " ".join(entry.edge_ops),
            "observed_profile": chosen.profile,
            "outcome": chosen.outcome.value,
            "evidence": evidence,
            "tosa_ops": " ".join(used),
            "without_int64_row": " ".join(missing),
            "candidate": status == CANDIDATE,
            "status": status,
        })
    return pd.DataFrame(derived, columns=CANDIDATE_COLUMNS)
