"""The installed versions of the pinned stack, read from package metadata (nothing imported), and the Vulkan driver
a VGF run uses (stack/vgf/tools.py)."""

from __future__ import annotations

import functools
import importlib.metadata

# torchao holds the observers and the prepare / convert steps every quantized case runs through
# and the ML SDK compiles and runs every VGF case
PACKAGES = ("torch", "executorch", "torchao", "tosa-tools", "ethos-u-vela", "ai-ml-sdk-model-converter",
            "ai-ml-sdk-scenario-runner", "ai-ml-sdk-vgf-library", "ai-ml-emulation-layer-for-vulkan")


@functools.lru_cache(maxsize=None)
def versions() -> dict[str, str]:
    """Installed versions of the pinned stack, recorded in every result."""
    found = {}
    for package in PACKAGES:
        try:
            found[package] = importlib.metadata.version(package)
        except importlib.metadata.PackageNotFoundError:
            found[package] = "not installed"
    from .vgf.tools import driver_version

    found["vulkan-driver"] = driver_version()
    return found
