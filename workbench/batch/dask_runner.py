"""Sweeps on a Dask cluster: each case group is one task, run in a Dask worker's own process.

A task that raises, or whose worker dies, becomes `crashed` rows; the sweep goes on. Workers must run the same
Arm backend as the client (start them with WORKBENCH_ARM_BACKEND set as the client's): a task refuses otherwise.
"""

from __future__ import annotations

from .. import policies
from ..core.errors import WorkbenchError
from ..core.outcomes import Outcome
from ..core.records import result_from_dict
from ..pipeline.case import run_group
from ..pipeline.isolation import stopped_result
from ..stack import arm_backend as backends
from ..stack import loader
from ..stages import transform_passes


class _ListReporter:
    """run_group's reporter for in-process runs (Dask tasks): results collected as dicts."""

    def __init__(self):
        self.results: list[dict] = []

    def start(self, index):
        """In-process runs have no parent to tell which profile starts."""

    def stage(self, stage, nodes):
        """Nor which stage: a Dask task that dies is reported by Dask."""

    def result(self, result):
        self.results.append(result.to_dict())


def dask_group(op: str, dtype: str, seed: int, profile_names: list, policy_name: str,
               arm_backend: dict, pass_names: tuple = ()) -> list[dict]:
    """One Dask task: a case under its profiles, in the Dask worker's own process (on the client's Arm backend)."""
    backends.check_same(arm_backend)

    reporter = _ListReporter()
    run_group(reporter, op, dtype, seed, profile_names, policies.get(policy_name), pass_names)
    return reporter.results


def run_on_dask(scheduler: str, todo: dict, seed: int, policy, passes: tuple = ()):
    """The same groups on a Dask cluster; a task that fails or whose worker dies becomes crashed rows."""
    from distributed import Client, as_completed

    if policy.name not in policies.names():
        raise WorkbenchError(f"policy {policy.name!r} is not registered by name; a Dask cluster can only run "
                             "policies its workers can look up by name")
    pass_names = transform_passes.names(passes)
    if any(not (p if isinstance(p, type) else type(p)).__module__.startswith("executorch.backends.arm.")
           for p in passes):
        raise WorkbenchError("a Dask cluster runs the Arm backend's transform passes only, by name")
    backend = loader.arm_backend()
    with Client(scheduler) as client:
        futures = {}
        for (op, dtype), profile_names in todo.items():
            future = client.submit(dask_group, op, dtype, seed, profile_names, policy.name, backend, pass_names,
                                   pure=False)
            futures[future] = (op, dtype, profile_names)
        for future in as_completed(futures):
            op, dtype, profile_names = futures[future]
            try:
                for data in future.result():
                    yield result_from_dict(data)
            except Exception as exc:  # the task raised or its worker died: one row per profile, never an abort
                for profile in profile_names:
                    yield stopped_result(
                        {"op": op, "dtype": dtype, "profile": profile, "policy": policy.name, "seed": seed,
                         "transform_passes": pass_names},
                        Outcome.CRASHED, "dask", None, f"Dask task failed: {type(exc).__name__}: {exc}",
                        type(exc).__name__,
                    )
