"""The one place that imports the pinned stack (torch, executorch's Arm backend, the TOSA reference model).

Importing executorch's Arm backend costs several seconds, so nothing imports it at `import workbench`;
the first call that needs it pays once per process. `executorch.exir` is imported first because that
order is measurably faster for the Arm backend import.
"""

from __future__ import annotations

import functools
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
    exir()
    from executorch.backends.arm.tosa import specification as _spec

    return _spec


@functools.lru_cache(maxsize=None)
def exir():
    torch()
    import executorch.exir as _exir

    return _exir


@functools.lru_cache(maxsize=None)
def arm():
    """The Arm backend pieces the pipeline uses, imported once."""
    exir()
    from types import SimpleNamespace

    from executorch.backends.arm.tosa.compile_spec import TosaCompileSpec
    from executorch.backends.arm.tosa.partitioner import TOSAPartitioner
    from executorch.exir.backend.utils import WhyNoPartitionReporter

    from . import decomposition_cache
    decomposition_cache.install()  # model-independent lowering work once per process, before any fork

    return SimpleNamespace(
        TosaCompileSpec=TosaCompileSpec,
        TOSAPartitioner=TOSAPartitioner,
        WhyNoPartitionReporter=WhyNoPartitionReporter,
        to_edge_transform_and_lower=exir().to_edge_transform_and_lower,
    )


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


def arm_backend_label() -> str:
    """Which Arm backend produces results: the installed executorch's."""
    return f"installed executorch {versions()['executorch']}"
