"""What a counterexample hunt did (`HuntStats`) and what it returns (`HuntResult`: its findings, hunt/findings.py,
worst first, with the stats)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from ...catalogue.program import Program
from ...core.records import result_from_dict
from .findings import ClassKey, Finding, Variants


@dataclass
class HuntStats:
    """What the hunt did: programs replayed, generated, discarded (by reason), run, and per outcome; the operators
    drawn; its time."""

    generated: int = 0
    discarded: Counter = field(default_factory=Counter)
    run: int = 0  # drawn programs run (replayed ones are counted in `replayed` only)
    cases: int = 0
    cached: int = 0
    outcomes: Counter = field(default_factory=Counter)  # "delegated/match", "lowering_error/not_run", ...
    broke: int = 0  # programs that broke the contract (worse than the baseline, with one)
    classes: int = 0
    unconfirmed: int = 0  # classes whose shrunk representative's fresh rerun did not fail the same way (dropped)
    shrunk: int = 0  # classes whose shrinking finished before their share of the budget ran out
    replayed: int = 0  # programs of an earlier hunt's classes run before any draw (hunt/examples.py)
    fixed: list = field(default_factory=list)  # labels of an earlier hunt's classes that no longer reproduce
    drawn_ops: list = field(default_factory=list)  # the edge operators of the programs that ran
    never_drawn: dict = field(default_factory=dict)  # operator -> why the vocabulary cannot draw it
    search_seconds: float = 0.0
    shrink_seconds: float = 0.0
    shrink_runs: int = 0
    first_seconds: dict = field(default_factory=dict)  # member_label -> seconds into the search it was first seen

    def to_dict(self) -> dict:
        return {"generated": self.generated, "discarded": sum(self.discarded.values()),
                "discarded_by_reason": dict(self.discarded), "run": self.run, "cases": self.cases,
                "cached": self.cached, "outcomes": dict(self.outcomes), "broke_contract": self.broke,
                "classes": self.classes, "unconfirmed": self.unconfirmed, "shrunk": self.shrunk,
                "replayed": self.replayed, "fixed": list(self.fixed), "drawn_ops": list(self.drawn_ops),
                "never_drawn": dict(self.never_drawn), "search_seconds": round(self.search_seconds, 2),
                "shrink_seconds": round(self.shrink_seconds, 2), "shrink_runs": self.shrink_runs,
                "first_seconds": {k: round(v, 2) for k, v in self.first_seconds.items()}}

    @classmethod
    def from_dict(cls, data: dict) -> "HuntStats":
        """The stats `to_dict` wrote (its times rounded to hundredths)."""
        return cls(data["generated"], Counter(data["discarded_by_reason"]), data["run"], data["cases"], data["cached"],
                   Counter(data["outcomes"]), data["broke_contract"], data["classes"], data["unconfirmed"],
                   data["shrunk"], data["replayed"], list(data["fixed"]), list(data["drawn_ops"]),
                   dict(data["never_drawn"]), data["search_seconds"], data["shrink_seconds"], data["shrink_runs"],
                   dict(data["first_seconds"]))

    def __str__(self) -> str:
        outcomes = ", ".join(f"{k} {v}" for k, v in self.outcomes.most_common())
        replayed = f"{self.replayed} replayed from earlier hunts ({len(self.fixed)} classes fixed since), " \
            if self.replayed else ""
        return (f"{replayed}{self.generated} programs generated, {sum(self.discarded.values())} discarded, "
                f"{self.run} run ({self.cached} of {self.cases} cases from the cache): {outcomes}; {self.broke} broke "
                f"the contract in {self.classes} classes ({self.unconfirmed} not confirmed by a fresh rerun, "
                f"{self.classes - self.shrunk} not shrunk fully); search {self.search_seconds:.0f} s, shrinking "
                f"{self.shrink_seconds:.0f} s ({self.shrink_runs} runs)")


@dataclass
class HuntResult:
    findings: list
    stats: HuntStats
    description: str = ""

    def to_dict(self, whole: bool = False) -> dict:
        """The hunt as its JSON shows it; whole=True: each finding with its parts in full (Finding.to_dict), which
        `from_dict` makes the same hunt of."""
        return {"description": self.description, "findings": [f.to_dict(whole) for f in self.findings],
                "stats": self.stats.to_dict()}

    @classmethod
    def from_dict(cls, data: dict) -> "HuntResult":
        """The hunt `to_dict(whole=True)` wrote (its findings' results hold no case: they were made where it ran)."""
        return cls([_finding_from_dict(f) for f in data["findings"]], HuntStats.from_dict(data["stats"]),
                   data["description"])

    def __str__(self) -> str:
        """A summary a terminal shows whole: what the hunt did, then one line per finding (each finding's module,
        inputs and rerun lines are in `str(finding)`, the JSON, the report and the tests written for it)."""
        lines = [self.description, str(self.stats)]
        lines += [f"fixed since the last hunt: {label}" for label in self.stats.fixed]
        lines += [f"[{number}] {finding.summary()}" for number, finding in enumerate(self.findings, 1)]
        if self.findings:
            lines.append(f"{len(self.findings)} finding{'s' * (len(self.findings) != 1)}, worst first: each one's "
                         f"module and rerun lines with --json, --out findings.md or --out-tests DIR (in Python: "
                         f"print(found.findings[i]))")
        else:
            lines.append("no program broke the contract")
        return "\n".join(lines) + "\n"


def _finding_from_dict(data: dict) -> Finding:
    """The finding Finding.to_dict(whole=True) wrote."""
    from ..authoring.culprits import CulpritSearch  # only a hunt read back whole needs the culprit search's record

    parts = data["whole"]
    return Finding(ClassKey.from_dict(parts["key"]), Program.from_dict(parts["program"]),
                   result_from_dict(parts["result"]), data["count"], Program.from_dict(parts["first"]),
                   data["confirmed"], parts["baseline"] and result_from_dict(parts["baseline"]),
                   parts["culprits"] and CulpritSearch.from_dict(parts["culprits"]),
                   Variants(**{name: tuple(values) for name, values in data["variants"].items()}), data["shrunk"])
