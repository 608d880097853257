"""Where Arm's ML SDK programs, its ML emulation layers for Vulkan and the CPU Vulkan driver are, and what is missing.

The ML SDK's PyPI packages carry static programs inside them (pyproject.toml pins them): `model_converter/binaries/
bin/model-converter`, `scenario_runner/binaries/bin/scenario-runner`, `vgf_lib/binaries/bin/vgf_dump`, and
`emulation_layer/deploy/lib/libVkLayer_{Graph,Tensor}.so` with their layer manifests. They are found through the
packages themselves, so nothing depends on the venv's bin folder being on PATH; `MODEL_CONVERTER_PATH` (executorch's
own variable, backends/arm/vgf/model_converter.py) names another converter.

The run needs both emulation layers stacked Graph over Tensor. Debian's Vulkan loader stacks explicit layers in the
order it finds their manifests, whatever VK_INSTANCE_LAYERS says, and the packaged manifests share one folder
with a relative `library_path`: `layer_folders()` writes each manifest into a folder of its own under the
workbench's cache folder, with the library's absolute path, and the runner's environment lists the Graph layer's
folder first. The device is Mesa's lavapipe (Debian's `mesa-vulkan-drivers`, a CPU device), chosen by its ICD
manifest so that a machine's GPU driver does not change a result. Only the child process's environment is set.
"""

from __future__ import annotations

import functools
import importlib.util
import json
import os
import subprocess
from pathlib import Path

from ...core.cache_location import default_dir

LAYERS = ("VK_LAYER_ML_Graph_Emulation", "VK_LAYER_ML_Tensor_Emulation")  # above, below
_LAYER_FILES = {"VK_LAYER_ML_Graph_Emulation": "VkLayer_Graph", "VK_LAYER_ML_Tensor_Emulation": "VkLayer_Tensor"}
# Where Vulkan loaders look for driver (ICD) manifests, and lavapipe's manifest's name in them.
_ICD_FOLDERS = ("/usr/share/vulkan/icd.d", "/usr/local/share/vulkan/icd.d", "/etc/vulkan/icd.d")
_LAVAPIPE = "lvp_icd"
PIP_FIX = ("pip install the ML SDK packages pinned in pyproject.toml (`make setup` does): ai-ml-sdk-model-converter, "
           "ai-ml-sdk-scenario-runner, ai-ml-sdk-vgf-library, ai-ml-emulation-layer-for-vulkan")
DRIVER_FIX = "bash scripts/ensure-vulkan.sh (Debian's mesa-vulkan-drivers: lavapipe, a CPU Vulkan device)"


def _package_file(package: str, *parts: str) -> Path | None:
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(next(iter(spec.submodule_search_locations)), *parts)
    return path if path.is_file() else None


def model_converter() -> Path | None:
    configured = os.environ.get("MODEL_CONVERTER_PATH")
    if configured and os.access(configured, os.X_OK):
        return Path(configured)
    return _package_file("model_converter", "binaries", "bin", "model-converter")


def scenario_runner() -> Path | None:
    return _package_file("scenario_runner", "binaries", "bin", "scenario-runner")


def vgf_dump() -> Path | None:
    return _package_file("vgf_lib", "binaries", "bin", "vgf_dump")


def layer_manifest(layer: str) -> Path | None:
    return _package_file("emulation_layer", "deploy", "share", "vulkan", "explicit_layer.d",
                         f"{_LAYER_FILES[layer]}.json")


def lavapipe_icd() -> Path | None:
    """Mesa's lavapipe driver manifest, `VK_ICD_FILENAMES`'s value for the runner (None: not installed)."""
    for folder in _ICD_FOLDERS:
        found = sorted(Path(folder).glob(f"{_LAVAPIPE}*.json")) if Path(folder).is_dir() else []
        if found:
            return found[0]
    return None


def driver_version() -> str:
    """The CPU Vulkan driver a VGF run uses: Debian's mesa-vulkan-drivers version where dpkg knows it, else
    lavapipe's manifest's API version and its library's size; "not installed" without it."""
    icd = lavapipe_icd()
    if icd is None:
        return "not installed"
    try:
        packaged = subprocess.run(["dpkg-query", "-W", "-f=${Version}", "mesa-vulkan-drivers"], capture_output=True,
                                  text=True, timeout=30)
        if packaged.returncode == 0 and packaged.stdout.strip():
            return f"mesa-vulkan-drivers {packaged.stdout.strip()}"
    except (OSError, subprocess.SubprocessError):
        pass  # not Debian: the manifest says what it can
    try:
        manifest = json.loads(icd.read_text())["ICD"]
        library = Path(manifest["library_path"])
        return f"lavapipe API {manifest.get('api_version', '?')}, {library.stat().st_size} bytes"
    except (OSError, ValueError, KeyError) as exc:
        return f"lavapipe ({type(exc).__name__} reading {icd.name})"


def readiness() -> str:
    """"" when every tool a VGF case needs is here; else one line naming what is missing and the fix."""
    missing = [name for name, found in (("model-converter", model_converter()), ("scenario-runner", scenario_runner()),
                                        ("vgf_dump", vgf_dump())) if found is None]
    missing += [f"the {layer} layer" for layer in LAYERS if layer_manifest(layer) is None]
    if missing:
        return f"missing {', '.join(missing)}: {PIP_FIX}"
    if lavapipe_icd() is None:
        return f"no CPU Vulkan device (Mesa's lavapipe driver manifest {_LAVAPIPE}*.json): {DRIVER_FIX}"
    return ""


def layer_folders() -> list[Path]:
    """The two layer manifests, each in its own folder under the workbench's cache folder with the library's
    absolute path, Graph's folder first (written when missing or different)."""
    folders = []
    for layer in LAYERS:
        packaged = layer_manifest(layer)
        manifest = json.loads(packaged.read_text())
        library = packaged.parents[3] / "lib" / Path(manifest["layer"]["library_path"]).name
        manifest["layer"]["library_path"] = str(library)
        folder = default_dir() / "vulkan-layers" / _LAYER_FILES[layer]
        text = json.dumps(manifest, indent=2)
        target = folder / packaged.name
        if not target.is_file() or target.read_text() != text:
            folder.mkdir(parents=True, exist_ok=True)
            staged = target.with_suffix(f".{os.getpid()}.tmp")
            staged.write_text(text)
            staged.replace(target)
        folders.append(folder)
    return folders


def runner_environment() -> dict[str, str]:
    """The scenario runner's environment: the emulation layers stacked Graph over Tensor, on lavapipe."""
    env = dict(os.environ)
    env["VK_ADD_LAYER_PATH"] = os.pathsep.join(str(folder) for folder in layer_folders())
    env["VK_INSTANCE_LAYERS"] = ":".join(LAYERS)
    icd = lavapipe_icd()
    if icd is not None:
        env["VK_ICD_FILENAMES"] = env["VK_DRIVER_FILES"] = str(icd)
    return env


@functools.lru_cache(maxsize=None)
def version(program: str) -> str:
    """A tool's version as it prints it (`model-converter --version` prints JSON with a "version")."""
    path = {"model-converter": model_converter, "scenario-runner": scenario_runner, "vgf_dump": vgf_dump}[program]()
    if path is None:
        return "missing"
    try:
        printed = subprocess.run([str(path), "--version"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError) as exc:
        return f"unknown ({type(exc).__name__})"
    try:
        return str(json.loads(printed)["version"])
    except (ValueError, KeyError, TypeError):
        return printed.strip().splitlines()[0] if printed.strip() else "unknown"
