"""The one place that imports the pinned stack (torch, executorch's Arm backend, the TOSA reference model).

Importing executorch's Arm backend costs several seconds, so nothing imports it at `import workbench`;
the first call that needs it pays once per process. `executorch.exir` is imported first because that
order is measurably faster for the Arm backend import.
"""

from __future__ import annotations

import functools
import importlib
import importlib.metadata
import logging
import os
import warnings


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
def specification():
    """executorch's TOSA specification module (the authority on valid profile strings)."""
    return import_arm("executorch.backends.arm.tosa.specification")


@functools.lru_cache(maxsize=None)
def exir():
    torch()
    from . import arm_backend

    arm_backend.apply_environment()  # before anything from executorch is imported
    import executorch.exir as _exir

    return _exir


@functools.lru_cache(maxsize=None)
def arm():
    """The Arm backend pieces the pipeline uses, imported once."""
    from types import SimpleNamespace

    from executorch.exir.backend.utils import WhyNoPartitionReporter

    from . import decomposition_cache

    compile_spec = import_arm("executorch.backends.arm.tosa.compile_spec")
    partitioner = import_arm("executorch.backends.arm.tosa.partitioner")
    # Model-independent lowering work once per process: after the imports (it freezes them out of the garbage
    # collector), before any fork (workers inherit it).
    decomposition_cache.install()

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
        from . import arm_backend

        failure = arm_backend.import_failure(exc)
        if failure is None:
            raise
        raise failure from None


@functools.lru_cache(maxsize=None)
def reference_model():
    import tosa_reference_model

    return tosa_reference_model


@functools.lru_cache(maxsize=None)
def versions() -> dict[str, str]:
    """Installed versions of the pinned stack, recorded in every result."""
    found = {}
    for package in ("torch", "executorch", "tosa-tools"):
        try:
            found[package] = importlib.metadata.version(package)
        except importlib.metadata.PackageNotFoundError:
            found[package] = "not installed"
    return found


def arm_backend() -> dict:
    """The record of the Arm backend that produces results (see arm_backend.ArmBackend)."""
    from . import arm_backend as _arm_backend

    return _arm_backend.active().to_dict()
