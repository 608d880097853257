"""The one place that imports the pinned stack (torch, executorch's Arm backend, the TOSA reference model).

Importing executorch's Arm backend costs several seconds, so nothing imports it at `import workbench`;
the first call that needs it pays once per process. `executorch.exir` is imported first because that
order is measurably faster for the Arm backend import. Once the Arm backend is imported, every private name
the workbench relies on is checked (internals.check_all), so a missing one is reported before any case runs.
"""

from __future__ import annotations

import functools
import importlib
import logging
import os
import warnings

from . import arm_backend as backends
from . import internals, levers
from .versions import versions

__all__ = ["torch", "exir", "arm", "import_arm", "reference_model", "versions", "arm_backend", "specification"]


def _quiet_third_party_noise() -> None:
    # The stack prints deprecation chatter and optional-kernel load failures that say nothing about a case.
    warnings.filterwarnings("ignore", category=FutureWarning)
    warnings.filterwarnings("ignore", category=DeprecationWarning)
    warnings.filterwarnings("ignore", message=".*Enum subclass.*")
    for name in ("torchao", "torch._export", "torch.export", "executorch", "torch.utils._pytree"):
        logging.getLogger(name).setLevel(logging.ERROR)
    os.environ.setdefault("TORCH_CPP_LOG_LEVEL", "ERROR")


@functools.lru_cache(maxsize=None)
def torch():
    _quiet_third_party_noise()
    import torch as _torch

    return _torch


@functools.lru_cache(maxsize=None)
def exir():
    torch()
    backends.apply_environment()  # before anything from executorch is imported
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

    from executorch.exir.backend.utils import WhyNoPartitionReporter

    compile_spec = import_arm("executorch.backends.arm.tosa.compile_spec")
    partitioner = import_arm("executorch.backends.arm.tosa.partitioner")
    internals.check_all()  # loud, once per process, for every private name that is missing or changed
    # Model-independent lowering work once per process: after the imports (it freezes them out of the garbage
    # collector), before any fork (workers inherit it).
    levers.install()

    return SimpleNamespace(
        TosaCompileSpec=compile_spec.TosaCompileSpec,
        TOSAPartitioner=partitioner.TOSAPartitioner,
        WhyNoPartitionReporter=WhyNoPartitionReporter,
        to_edge_transform_and_lower=exir().to_edge_transform_and_lower,
    )


def import_arm(module: str):
    """A module of the Arm backend in use (installed or a checkout's, see arm_backend); a checkout that does not
    import against the installed executorch raises an ArmBackendError naming the cause and the differing files."""
    exir()
    try:
        return importlib.import_module(module)
    except Exception as exc:
        failure = backends.import_failure(exc)
        if failure is None:
            raise
        raise failure from None


@functools.lru_cache(maxsize=None)
def reference_model():
    # On a fatal error (a graph it cannot load, say) the reference model attaches gdb to this process to print a
    # backtrace to stderr: some 12 s with torch loaded, for text the workbench never reads (the error comes back
    # as the run's status, unchanged). TOSA_MODEL_NO_BACKTRACE (read by the reference model when it fails) turns
    # that off; a value already in the environment is left as it is.
    os.environ.setdefault("TOSA_MODEL_NO_BACKTRACE", "1")
    import tosa_reference_model

    return tosa_reference_model


def arm_backend() -> dict:
    """The record of the Arm backend that produces results (see core.records.ArmBackend)."""
    return backends.active().to_dict()
