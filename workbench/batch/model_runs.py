"""One catalogue case under several profiles and policies, exported once (per TOSA version for qint8).

`policy_matrix` gives the CaseResults (nodes included, unlike a sweep's rows) that views/model_summary.py
turns into delegate / CPU-island / int64-crossing counts: what an allowlist changes on a whole model.
"""

from __future__ import annotations

from .. import catalogue
from .. import policies as _policies
from ..core import dtypes as _dtypes
from ..core.records import CaseResult
from ..pipeline.case import lower_and_check, prepare_case
from ..stack import profiles as _profiles

DEFAULT_PROFILES = ("TOSA-1.0+INT", "TOSA-1.0+FP", "TOSA-1.1+INT+int64", "TOSA-1.1+FP+int64")
DEFAULT_POLICIES = ("stock", "ext-int64-allowlist")


def policy_matrix(op: str, dtype: str | None = None, profiles=DEFAULT_PROFILES, policies=DEFAULT_POLICIES, *,
                  seed: int = 0) -> list[CaseResult]:
    """run_case(op, dtype, profile, policy=...) for every profile x policy, in that order, with one export
    (dtype None: the entry's first dtype). Runs in this process; a failing case is a result, never an error."""
    entry = catalogue.get(op)
    dtype = dtype or entry.dtypes[0]
    entry.check_dtype(dtype)
    specs = [_profiles.parse(p) for p in profiles]
    chosen = [_policies.get(p) for p in policies]
    prepared_for: dict = {}
    results = []
    for spec in specs:
        version_key = spec.version if _dtypes.get(dtype).quantized else None
        if version_key not in prepared_for:
            prepared_for[version_key] = prepare_case(entry, dtype, seed, spec.version)
        for policy in chosen:
            results.append(lower_and_check(prepared_for[version_key], spec, policy, reuse_export=True))
    return results
