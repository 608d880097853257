"""Which Arm backend produces results: the installed executorch's, or the `backends/arm` of an executorch checkout.

executorch's Arm backend is pure Python, so a branch under review runs against the installed executorch core
without building anything. `use_arm_backend(path)` (or WORKBENCH_ARM_BACKEND=path, or `--arm-backend path`)
puts a finder first on sys.meta_path that loads the package `executorch.backends.arm` from the checkout; its
submodules then follow the package's __path__, so every `executorch.backends.arm...` import in the process -
the workbench's, executorch's own, the forked sweep workers' - comes from the checkout. Nothing installed is
touched. A process holds one Arm backend: once imported, it cannot be swapped (its operators are registered
with torch), so asking for another one then is an error that says to restart.

Every result records the backend as `ArmBackend.to_dict()` (core/records.py); the cache keys on `cache_identity`, a hash of the
checkout's files, so results of two branches - or of one branch before and after an uncommitted edit - never mix.
"""

from __future__ import annotations

import functools
import hashlib
import importlib
import importlib.abc
import importlib.util
import os
import subprocess
import sys
import traceback
from pathlib import Path

from ..core.errors import WorkbenchError
from ..core.failures import root_cause
from ..core.backend_record import PATCHED
from ..core.records import INSTALLED, ArmBackend, label_of
from . import branches, call_scope, patched_backend
from .versions import versions

ENV_VAR = "WORKBENCH_ARM_BACKEND"
PACKAGE = "executorch.backends.arm"
_ANCHOR = Path("tosa") / "partitioner.py"  # a file every Arm backend folder has
_LISTED_DIFFERENCES = 12


class ArmBackendError(WorkbenchError):
    """An Arm backend that cannot be used: not a checkout, asked for too late, or not importable."""


class ArmBackendAlreadyImportedError(ArmBackendError):
    """Another Arm backend than the one asked for is already imported in this process (it cannot be swapped)."""


# --- finding and describing a checkout ------------------------------------------------------------------------

def resolve_folder(path) -> Path:
    """The Arm backend folder of `path`: an executorch checkout, or its backends/arm folder itself; for
    `BASE+PATCH[+PATCH...]` or a named branch, the patched copy built in the cache folder (stack/patched_backend)."""
    try:
        spec = patched_backend.parse(str(path))
        if spec is not None:
            base_folder = installed_folder() if spec.base == INSTALLED else resolve_folder(spec.base)
            base = installed() if spec.base == INSTALLED else describe(base_folder)
            return patched_backend.build(spec, base_folder, base.to_dict(), _content_hash(base_folder))
    except ArmBackendError:
        raise
    except WorkbenchError as exc:
        raise ArmBackendError(str(exc)) from None
    given = Path(path).expanduser()
    if not given.is_dir():
        named = ", ".join(branches.names()) or "none"
        raise ArmBackendError(f"Arm backend {str(path)!r} is neither a folder nor a named branch; give an executorch "
                              f"checkout (a folder with backends/arm/ inside) or its backends/arm folder, "
                              f"{INSTALLED!r}, a named branch ({named}; `workbench backends`), or BASE+PATCH[+PATCH...] "
                              f"(each PATCH a unified diff file)")
    given = given.resolve()
    for folder in (given / "backends" / "arm", given):
        if (folder / _ANCHOR).is_file() and (folder / "__init__.py").is_file():
            return folder
    raise ArmBackendError(f"{given} is neither an executorch checkout (no backends/arm/{_ANCHOR} inside) nor "
                          f"an Arm backend folder (no {_ANCHOR} inside); give the checkout's root or its backends/arm")


def names_backend(text: str) -> bool:
    """Whether `text` names an Arm backend (installed, a folder, a named branch, BASE+PATCH...), not a profile or
    a policy."""
    if text == INSTALLED or Path(text).expanduser().is_dir():
        return True
    try:
        return patched_backend.parse(text) is not None
    except WorkbenchError:
        return False


def _files(folder: Path):
    """The backend's files relative to `folder`, without Python's byte-code caches."""
    for path in sorted(folder.rglob("*")):
        if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc":
            yield path.relative_to(folder).as_posix(), path


def _file_hashes(folder: Path) -> dict[str, str]:
    return {name: hashlib.sha256(path.read_bytes()).hexdigest() for name, path in _files(folder)}


def _git(folder: Path, *args: str) -> str | None:
    try:
        done = subprocess.run(["git", "-C", str(folder), *args], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout if done.returncode == 0 else None


def _content_hash(folder: Path) -> str:
    hashes = _file_hashes(folder)
    return hashlib.sha256("".join(f"{n}\0{h}\n" for n, h in sorted(hashes.items())).encode()).hexdigest()[:16]


@functools.lru_cache(maxsize=None)
def describe(folder: Path) -> ArmBackend:
    """The record of a checkout's backend folder. Read once per process: the process imports it once."""
    content = _content_hash(folder)
    made = patched_backend.build_record(folder)
    if made is not None:
        base = ArmBackend.from_dict(made["base"])
        own = len(branches.patch_chain(made["branch"])) if made["branch"] else 0
        return ArmBackend(source=PATCHED, executorch=versions()["executorch"], path=str(folder), content=content,
                          base=base.label, branch=made["branch"], patches=tuple(made["patches"]), branch_patches=own,
                          argument=made["argument"])
    head = _git(folder, "rev-parse", "HEAD")
    status = _git(folder, "status", "--porcelain", "--untracked-files=all", "--", ".") if head else None
    changes = [line for line in (status or "").splitlines() if "__pycache__" not in line and not line.endswith(".pyc")]
    return ArmBackend(source="checkout", executorch=versions()["executorch"], path=str(folder),
                      commit=head.strip() if head else None, dirty=bool(changes) if head else None, content=content)


def installed() -> ArmBackend:
    return ArmBackend(source=INSTALLED, executorch=versions()["executorch"])


def installed_folder() -> Path:
    """The installed executorch's backends/arm folder (found without importing the backend)."""
    spec = importlib.util.find_spec("executorch")
    return Path(next(iter(spec.submodule_search_locations))) / "backends" / "arm"


# --- choosing the backend for this process ----------------------------------------------------------------------

class _CheckoutFinder(importlib.abc.MetaPathFinder):
    """Finds `executorch.backends.arm` in the checkout; submodules follow the package's __path__."""

    def __init__(self, folder: Path):
        self.folder = folder

    def find_spec(self, fullname, path=None, target=None):
        if fullname != PACKAGE:
            return None
        return importlib.util.spec_from_file_location(
            PACKAGE, self.folder / "__init__.py", submodule_search_locations=[str(self.folder)])


class _MetaPathSlot:
    """The one checkout finder this process has put on sys.meta_path, if any."""

    finder: _CheckoutFinder | None = None


_SLOT = _MetaPathSlot()


def imported_folder() -> Path | None:
    module = sys.modules.get(PACKAGE)
    if module is None:
        return None
    locations = list(getattr(module, "__path__", ()))
    return Path(locations[0]).resolve() if locations else None


def _set_finder(folder: Path | None) -> None:
    if _SLOT.finder is not None:
        sys.meta_path.remove(_SLOT.finder)
        _SLOT.finder = None
    if folder is not None:
        _SLOT.finder = _CheckoutFinder(folder)
        sys.meta_path.insert(0, _SLOT.finder)


def use_arm_backend(path) -> ArmBackend:
    """Run this process's cases on the Arm backend at `path` (a checkout, its backends/arm, or "installed").

    Call it before anything runs: once an Arm backend is imported, the process keeps it. The choice is also put
    in the environment, so processes started from this one (Dask workers, the CLI) use the same backend.
    """
    folder = None if str(path) == INSTALLED else resolve_folder(path)
    wanted = installed_folder().resolve() if folder is None else folder
    imported = imported_folder()
    if imported is not None and imported != wanted:
        raise ArmBackendAlreadyImportedError(
            f"this process already imported the Arm backend from {imported}; an Arm backend cannot be swapped "
            f"once imported. Restart the kernel (or process) and call use_arm_backend({str(path)!r}) before "
            f"running anything, or start it with {ENV_VAR}={path}")
    _set_finder(folder)
    if folder is None:
        os.environ.pop(ENV_VAR, None)
    else:
        os.environ[ENV_VAR] = str(folder)
    return active()


def apply_environment() -> None:
    """Honour WORKBENCH_ARM_BACKEND before the stack is imported (called by the loader and `imported`)."""
    requested = os.environ.get(ENV_VAR)
    if requested and _SLOT.finder is None and imported_folder() is None:
        use_arm_backend(requested)


def active() -> ArmBackend:
    """The backend this process runs (or will run once it imports the stack)."""
    if _SLOT.finder is not None:
        return describe(_SLOT.finder.folder)
    requested = os.environ.get(ENV_VAR)
    if requested and requested != INSTALLED and imported_folder() is None:
        return describe(resolve_folder(requested))
    return installed()


def check_same(recorded: dict) -> None:
    """Refuse to run work meant for another backend (e.g. a Dask worker started with other settings)."""
    if recorded != active().to_dict():
        raise ArmBackendError(f"this process runs the Arm backend {active().label}, but the work was requested "
                              f"for {label_of(recorded)}; start the workers with {ENV_VAR} set as the client's")


# --- explaining a checkout that does not import ------------------------------------------------------------------

def _differences(checkout: Path) -> list[str]:
    """Files that differ between the checkout's backend and the installed one, as 'name (how)'."""
    ours, theirs = _file_hashes(checkout), _file_hashes(installed_folder())
    found = [f"{n} (changed)" for n in sorted(ours.keys() & theirs.keys()) if ours[n] != theirs[n]]
    found += [f"{n} (only in the checkout)" for n in sorted(ours.keys() - theirs.keys())]
    found += [f"{n} (only in the installed executorch)" for n in sorted(theirs.keys() - ours.keys())]
    return found


def import_failure(exc: BaseException) -> ArmBackendError | None:
    """For an exception raised while importing a checkout's backend: an error naming the root cause, where in
    the checkout it was raised, and which files differ from the installed backend. None for the installed one."""
    if _SLOT.finder is None:
        return None
    folder = _SLOT.finder.folder
    for name in [m for m in sys.modules if m == PACKAGE or m.startswith(PACKAGE + ".")]:
        del sys.modules[name]  # half-imported modules would hide the error on the next try
    cause_type, cause = root_cause(exc)
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if Path(f.filename).is_relative_to(folder)]
    where = ""
    if frames:
        where = f" (raised at {Path(frames[-1].filename).relative_to(folder).as_posix()}:{frames[-1].lineno})"
    differing = _differences(folder)
    listed = ", ".join(differing[:_LISTED_DIFFERENCES])
    more = f" and {len(differing) - _LISTED_DIFFERENCES} more" if len(differing) > _LISTED_DIFFERENCES else ""
    return ArmBackendError(
        f"the Arm backend at {folder} does not import against the installed executorch {installed().executorch}: "
        f"{cause_type}: {cause}{where}. It differs from the installed backend in {len(differing)} file(s): "
        f"{listed or 'none'}{more}. If the branch needs a newer executorch core, install that core first")


def imported(name: str):
    """The module `name` of the stack, from the Arm backend in use (installed or a checkout's): its first import is
    quiet and uncollected (call_scope.importing) and honours WORKBENCH_ARM_BACKEND; a checkout that does not import
    against the installed executorch raises an ArmBackendError naming the cause and the differing files
    (`import_failure`)."""
    module = sys.modules.get(name)
    if module is not None:
        return module
    apply_environment()
    try:
        with call_scope.importing():
            return importlib.import_module(name)
    except Exception as exc:
        failure = import_failure(exc)
        if failure is None:
            raise
        raise failure from None
