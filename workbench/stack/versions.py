"""The installed versions of the pinned stack, read from package metadata (nothing imported)."""

from __future__ import annotations

import functools
import importlib.metadata

# torchao holds the observers and the prepare / convert steps every quantized case runs through
PACKAGES = ("torch", "executorch", "torchao", "tosa-tools", "ethos-u-vela")


@functools.lru_cache(maxsize=None)
def versions() -> dict[str, str]:
    """Installed versions of the pinned stack, recorded in every result."""
    found = {}
    for package in PACKAGES:
        try:
            found[package] = importlib.metadata.version(package)
        except importlib.metadata.PackageNotFoundError:
            found[package] = "not installed"
    return found
