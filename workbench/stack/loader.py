"""The one place that imports the pinned stack (torch, executorch's Arm backend, the TOSA reference model).

Importing executorch's Arm backend costs several seconds, so nothing imports it at `import workbench`; the first
call that needs it pays once per process. `executorch.exir` is imported first because that order is measurably
faster for the Arm backend import. Imports are quiet and uncollected (call_scope.importing: the stack's deprecation
chatter silenced and the garbage collector paused for the import only). Once the Arm backend is imported, every
private name the workbench relies on is checked (hooks.check_all), so a missing one is reported before any case
runs, and workbench calls install the speed levers from then on (call_scope.stack_imported).
"""

from __future__ import annotations

import functools

from . import arm_backend as backends
# internals and tosa.debug register the hooks probed when the stack loads
from . import call_scope, hooks, internals  # noqa: F401
from .tosa import debug  # noqa: F401
from .versions import versions

__all__ = ["torch", "exir", "arm", "import_arm", "reference_model", "versions", "arm_backend", "specification"]


@functools.lru_cache(maxsize=None)
def torch():
    with call_scope.importing():
        import torch as _torch

    return _torch


@functools.lru_cache(maxsize=None)
def exir():
    torch()
    backends.apply_environment()  # before anything from executorch is imported
    with call_scope.importing():
        import executorch.exir as _exir

    return _exir


@functools.lru_cache(maxsize=None)
def specification():
    """executorch's TOSA specification module (the authority on valid profile strings)."""
    return import_arm("executorch.backends.arm.tosa.specification")


@functools.lru_cache(maxsize=None)
def arm():
    """The Arm backend pieces the pipeline uses, imported once."""
    from types import SimpleNamespace

    exir()
    from executorch.exir.backend.utils import WhyNoPartitionReporter

    compile_spec = import_arm("executorch.backends.arm.tosa.compile_spec")
    partitioner = import_arm("executorch.backends.arm.tosa.partitioner")
    # loud, once per process, for every private name that is missing or changed: internals' own and the Arm
    # backend's debug record (tosa.debug's hook), which every lowering reads
    hooks.check_all()
    call_scope.stack_imported()  # before any fork: workers inherit the call's levers

    return SimpleNamespace(
        TosaCompileSpec=compile_spec.TosaCompileSpec,
        TOSAPartitioner=partitioner.TOSAPartitioner,
        WhyNoPartitionReporter=WhyNoPartitionReporter,
        to_edge_transform_and_lower=exir().to_edge_transform_and_lower,
    )


def import_arm(module: str):
    """A module of the Arm backend in use, after executorch.exir (arm_backend.imported: quiet, installed or a
    checkout's; a checkout that does not import against the installed executorch raises an ArmBackendError)."""
    exir()
    return backends.imported(module)


@functools.lru_cache(maxsize=None)
def reference_model():
    # Its gdb backtrace on a fatal error is turned off for the duration of each call (call_scope.py).
    import tosa_reference_model

    return tosa_reference_model


def arm_backend() -> dict:
    """The record of the Arm backend that produces results (see core.records.ArmBackend)."""
    return backends.active().to_dict()
