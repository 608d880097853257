"""The on-disk result cache: one JSON file per case, written atomically, never pickle.

Location: $WORKBENCH_CACHE_DIR, else ~/.cache/tosa-workbench. A case's key covers its definition (operator
name, dtype, seed, its quantization, whether it is traced, and a hash of the source of every module in the layers
that compute results: RESULT_LAYERS), profile, the policy's content (Policy.fingerprint), the installed torch / executorch / tosa-tools versions and
the Arm backend in use, so changing any of them misses exactly what it should. A policy whose content cannot be
read is never cached (the sweep says so in its results). A file that cannot be read back is reported with a
warning and recomputed.

Work of another kind keys its results with `digest` over its own fields, `tree_fingerprint` of the files it is
read from and the same `environment()`, and keeps other JSON values under a folder of its own (`put_entry`).
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import tempfile
import warnings
from pathlib import Path

from ..core.cache_location import default_dir
from ..core.records import CaseResult, result_from_dict
from ..stack import arm_backend
from ..stack.versions import versions

FORMAT = 1  # bump when the stored layout changes


# The layers whose code decides what a result holds: every layer below this one (tests/helpers/layers.py checks that it
# is exactly those). Views, reports, the UI and the CLI only present results.
RESULT_LAYERS = ("core", "stack", "stages", "catalogue", "policies", "pipeline")
PACKAGE_ROOT = Path(__file__).resolve().parents[1]


def definition_fingerprint(root: Path = PACKAGE_ROOT) -> str:
    """A hash of every module of RESULT_LAYERS under the package folder `root` (read as text: no import)."""
    return _fingerprint_of(tuple(sorted((p.relative_to(root).as_posix(), p.stat().st_mtime_ns, p.stat().st_size)
                                        for layer in RESULT_LAYERS for p in (root / layer).rglob("*.py"))), root)


@functools.lru_cache(maxsize=None)
def _fingerprint_of(files: tuple, root: Path) -> str:
    # Keyed on each file's name, modification time and size, so an edit is seen at once and an unchanged tree is
    # hashed once per process.
    digest = hashlib.sha256()
    for name, _, _ in files:
        digest.update(name.encode())
        digest.update((root / name).read_bytes())
    return digest.hexdigest()[:16]


def tree_fingerprint(root: Path) -> str:
    """A hash of every .py file under the folder `root` (read as text: no import), e.g. an Arm backend's tests."""
    root = Path(root)
    return _fingerprint_of(tuple(sorted((p.relative_to(root).as_posix(), p.stat().st_mtime_ns, p.stat().st_size)
                                        for p in root.rglob("*.py"))), root)


def digest(payload: dict) -> str:
    """The key of a JSON-able `payload`: its sha256, fields in sorted order."""
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()


def environment() -> dict:
    return {"format": FORMAT, "versions": versions(), "arm_backend": arm_backend.active().cache_identity,
            "definition": definition_fingerprint()}


def key_of(case, fingerprints: tuple[str, str], context: dict | None = None) -> str:
    """The key of a catalogue case (or a generated program's): its operator (or program), dtype, seed, profile,
    quantization and whether it traces its tensors (its result then holds them), with `fingerprints`, the
    (policy, transform passes) fingerprints CaseKeys takes once. `context`: environment() taken once by a caller
    that keys many cases (it reads the package's files)."""
    policy, passes = fingerprints
    return digest({"op": case.name, "dtype": case.dtype, "seed": case.seed, "profile": case.profile.name,
                    "policy": policy, **({"transform_passes": passes} if passes else {}),
                    **({"quantization": case.quantization_name} if case.quantization_name else {}),
                    **({"trace": True} if case.trace else {}), **(context or environment())})


class CaseKeys:
    """The keys of catalogue cases and of generated programs' cases (a program by its source's digest, which holds
    its inputs' values: catalogue/program.py), each policy's and pass list's fingerprint taken once (by identity: two policy
    objects of one name may hold different checks). A case whose policy or passes have no readable source has
    no key (None): nothing computed with code that cannot be read is cached."""

    def __init__(self):
        self.context = environment()
        self._prints: dict[tuple, tuple | None] = {}

    def fingerprints(self, case) -> tuple[str, str] | None:
        """(policy, passes) fingerprints of `case`, or None when either cannot be read."""
        from ..stages import transform_passes

        identity = (id(case.policy), tuple(id(p) for p in case.transform_passes))
        if identity not in self._prints:
            policy, passes = case.policy.fingerprint(), transform_passes.fingerprint(case.transform_passes)
            self._prints[identity] = None if policy is None or passes is None else (policy, passes)
        return self._prints[identity]

    def key(self, case) -> str | None:
        """None for a case that is not cached: a model's (its module has no text to key on), one calibrated on
        inputs of its own, or one whose policy or passes have no readable source."""
        if (case.entry is None and case.program is None) or case.calibration is not None:
            return None
        prints = self.fingerprints(case)
        if prints is None:
            return None
        return key_of(case, prints, self.context)


def request_key(request: dict) -> str:
    return digest({"request": request, **environment()})


class ResultCache:
    def __init__(self, directory: str | os.PathLike | None = None):
        self.directory = Path(directory) if directory is not None else default_dir()

    def _path(self, kind: str, key: str) -> Path:
        return self.directory / kind / key[:2] / f"{key}.json"

    def _read(self, kind: str, key: str):
        path = self._path(kind, key)
        try:
            text = path.read_text()
        except FileNotFoundError:
            return None
        except OSError as exc:
            warnings.warn(f"cache entry {path} unreadable ({exc}); recomputing", stacklevel=3)
            return None
        try:
            return json.loads(text)
        except ValueError:
            warnings.warn(f"cache entry {path} is damaged (not JSON); recomputing", stacklevel=3)
            path.unlink(missing_ok=True)
            return None

    def _write(self, kind: str, key: str, payload) -> None:
        path = self._path(kind, key)
        path.parent.mkdir(parents=True, exist_ok=True)
        # A unique temp file in the same folder, then an atomic rename: readers see the old file or the whole
        # new one, and two writers of the same key each install a complete file.
        fd, temp = tempfile.mkstemp(dir=path.parent, prefix=f".{key[:8]}-", suffix=".tmp")
        try:
            with os.fdopen(fd, "w") as handle:
                handle.write(json.dumps(payload))  # json.dump would encode in Python, json.dumps in C: same text
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(temp, path)
        except BaseException:
            Path(temp).unlink(missing_ok=True)
            raise

    def get(self, key: str) -> CaseResult | None:
        data = self._read("cases", key)
        if data is None:
            return None
        try:
            return result_from_dict(data)
        except (KeyError, TypeError, ValueError) as exc:
            warnings.warn(f"cache entry {self._path('cases', key)} is damaged ({exc}); recomputing", stacklevel=2)
            self._path("cases", key).unlink(missing_ok=True)
            return None

    def put(self, key: str, result: CaseResult, sent: dict | None = None) -> None:
        """Store `result`; `sent`: its `to_dict()` when the caller has it already (WorkerPool.sent)."""
        self._write("cases", key, result.to_dict() if sent is None else sent)

    def get_entry(self, kind: str, key: str):
        """The JSON value stored under `kind` (a folder of the cache) and `key`, or None."""
        return self._read(kind, key)

    def put_entry(self, kind: str, key: str, payload) -> None:
        self._write(kind, key, payload)

    def get_request(self, key: str) -> list | None:
        data = self._read("requests", key)
        return data if isinstance(data, list) else None

    def put_request(self, key: str, cases: list) -> None:
        self._write("requests", key, cases)
