"""What a hunt remembers between runs, as Hypothesis's example database does: each class's shrunk and first
program, kept under the cache folder per Arm backend (its cache identity), profile, policy, quantization and the
hunt's dtypes. The next hunt of the same replays them before it draws anything, so a class that still reproduces is
reported at once, whatever the seed or budget, and one that no longer does is named as fixed. A hunt without a cache
(cache=False) neither reads nor writes them.
"""

from __future__ import annotations

import hashlib
import json
from ...catalogue.program import Program
from ...stack import arm_backend as _arm_backend
from ..cache import ResultCache
from .findings import ClassKey

KIND = "hunt_examples"  # the cache folder's subfolder


class Examples:
    """The remembered classes of one hunt's space, one entry list per profile x policy pair."""

    def __init__(self, cache, space):
        self.store = ResultCache(None if cache is True else cache) if cache else None
        backend = _arm_backend.active().cache_identity
        self.keys = {(profile.name, policy.name): _key(backend, profile.name, policy.name, space)
                     for profile, policy in space.pairs}
        self.entries = {pair: self._read(key) for pair, key in self.keys.items()}

    def _read(self, key: str) -> list[dict]:
        found = self.store.get_entry(KIND, key) if self.store is not None else None
        return found if isinstance(found, list) else []

    def programs(self) -> list[Program]:
        """The remembered programs, each once: every class's shrunk program, then its first."""
        found = {}
        for entries in self.entries.values():
            for entry in entries:
                for data in entry["programs"]:
                    program = Program.from_dict(data)
                    found.setdefault(program.digest, program)
        return list(found.values())

    def fixed(self, reproduced: set) -> list[str]:
        """The labels of remembered classes that did not break the contract again; `reproduced`: the (profile,
        policy, ClassKey) triples this hunt saw."""
        return [entry["label"] for pair, entries in self.entries.items() for entry in entries
                if (*pair, ClassKey.from_dict(entry["class"])) not in reproduced]

    def remember(self, findings: list) -> None:
        """Keep this hunt's findings as the classes to replay next time (a fixed class is forgotten)."""
        if self.store is None:
            return
        for pair, key in self.keys.items():
            entries = [{"class": f.key.to_dict(), "label": f.label,
                        "programs": [f.program.to_dict()] + ([f.first.to_dict()] if f.first != f.program else [])}
                       for f in findings if (f.result.profile, f.result.policy) == pair]
            self.store.put_entry(KIND, key, entries)


def _key(backend: str, profile: str, policy: str, space) -> str:
    identity = {"arm_backend": backend, "profile": profile, "policy": policy, "quantization": space.quantization,
                "dtypes": sorted(space.dtypes)}
    return hashlib.sha256(json.dumps(identity, sort_keys=True).encode()).hexdigest()
