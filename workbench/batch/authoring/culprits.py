"""The culprit search: which accepted nodes must stay off TOSA for a failed lowering to succeed.

A `lowering_error` says that some node the partitioner accepted cannot be lowered, a `vela_error` that Vela
refused the TOSA graph of an Ethos-U delegate; on a model with many operators which node is to blame is left to
guess. `find_culprits` re-lowers the case with chosen nodes kept on CPU (an extra partition
check, as any policy's: executorch is not patched) and searches by adaptive group testing:

1. the accepted nodes are grouped by (target, input dtypes, output dtypes): nodes of one group usually fail
   together, so the search first asks which groups are guilty;
2. a set of groups is tested by lowering with only those groups accepted (every other accepted node kept on CPU);
   a set that fails holds a culprit, and is halved until single groups remain. With one culprit among n groups
   this takes about log2(n) lowerings; with d independent culprits about d times that or less;
3. inside a guilty group of several nodes, the same search finds the guilty nodes;
4. the case is lowered once more with every culprit kept on CPU. Should that still fail (culprits that fail only
   together with others), the search goes on over the nodes still accepted, until lowering succeeds.

The answer is a smallest set found this way (not guaranteed globally minimal when failures interact), the number
of lowerings it took, and the full result (reference run and comparison) of the case with the culprits on CPU.
"""

from __future__ import annotations

import dataclasses
import functools
from dataclasses import dataclass, field

from ... import policies
from ...core.errors import WorkbenchError
from ...core.outcomes import COMPILE_FAILURES, Outcome
from ...core.records import CaseResult, NodeRecord, result_from_dict
from ...pipeline import sequence
from ...pipeline.case import Case
from ...pipeline.run import Exports, lower_and_check
from ...stack import loader
from ...stack.call_scope import scoped
from ...stages import lower
from ...stages.state import Lowering, Prepared, ignore

KEPT_ON_CPU = "kept on CPU by the culprit search"


@dataclass(frozen=True)
class Culprit:
    """One group of nodes whose delegation breaks lowering."""

    target: str
    input_dtypes: tuple[str, ...]
    output_dtypes: tuple[str, ...]
    nodes: tuple[str, ...]  # the names of the guilty nodes of the group

    def __str__(self) -> str:
        dtypes = f"{','.join(self.input_dtypes) or '-'} -> {','.join(self.output_dtypes) or '-'}"
        return f"{self.target} [{dtypes}]: {', '.join(self.nodes)}"


@dataclass(frozen=True)
class CulpritSearch:
    case: CaseResult  # the failed result the search started from
    culprits: tuple[Culprit, ...]
    lowerings: int  # how many times the search lowered the case (the final full run included)
    candidates: int  # accepted nodes of the failed case
    groups: int  # of them, distinct (target, dtypes)
    result: CaseResult | None  # the case lowered with every culprit kept on CPU (None when nothing failed)
    implied: tuple[str, ...] = field(default=())  # what the culprits imply for an allowlist

    @property
    def outcome(self):
        return None if self.result is None else self.result.outcome

    @property
    def numerics(self):
        return None if self.result is None else self.result.numerics

    @property
    def culprit_nodes(self) -> tuple[str, ...]:
        return tuple(name for culprit in self.culprits for name in culprit.nodes)

    def to_dict(self) -> dict:
        """JSON-safe: the culprits, the counts, the implied allowlist lines and both results in full."""
        return {
            "culprits": [dataclasses.asdict(culprit) for culprit in self.culprits],
            "lowerings": self.lowerings, "candidates": self.candidates, "groups": self.groups,
            "outcome": None if self.outcome is None else str(self.outcome),
            "numerics": None if self.numerics is None else str(self.numerics),
            "implied": list(self.implied),
            "case": self.case.to_dict(),
            "result": None if self.result is None else self.result.to_dict(),
        }

    @classmethod
    def from_dict(cls, data: dict) -> "CulpritSearch":
        """The search `to_dict` wrote (its results hold no case)."""
        culprits = tuple(Culprit(**{name: value if name == "target" else tuple(value) for name, value in c.items()})
                         for c in data["culprits"])
        return cls(result_from_dict(data["case"]), culprits, data["lowerings"], data["candidates"], data["groups"],
                   data["result"] and result_from_dict(data["result"]), tuple(data["implied"]))

    def to_text(self) -> str:
        lines = [f"culprit search on {self.case.op} [{self.case.dtype}] {self.case.profile} "
                 f"policy={self.case.policy}"]
        if self.result is None:
            return lines[0] + (f"\nnothing to search: the case ended in {self.case.outcome}, not "
                               f"{' or '.join(sorted(str(o) for o in COMPILE_FAILURES))}")
        lines.append(f"{len(self.culprits)} culprit group(s) among {self.candidates} accepted nodes "
                     f"({self.groups} groups by target and dtypes), found in {self.lowerings} lowerings:")
        lines += [f"  - {culprit}" for culprit in self.culprits]
        lines.append(f"with them on CPU: outcome {self.result.outcome}, numerics {self.result.numerics}")
        if self.implied:
            lines.append("implied for the allowlist:")
            lines += [f"  - {line}" for line in self.implied]
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.to_text()


@functools.lru_cache(maxsize=None)
def _exclusion_class():
    loader.torch()
    from torch.fx.passes.operator_support import OperatorSupportBase

    class KeepOnCpu(OperatorSupportBase):
        """Rejects the named nodes, with the culprit search as the reason, even those a policy accepts."""

        overrides_acceptance = True

        def __init__(self, names: frozenset[str]):
            self.names = names
            self.reporter = None

        def bind(self, exported_program, reporter, tosa_spec) -> None:
            self.reporter = reporter

        def is_node_supported(self, submodules, node) -> bool:
            if node.name not in self.names:
                return True
            if self.reporter is not None:
                self.reporter.report_reject(node, KEPT_ON_CPU)
            return False

    return KeepOnCpu


def _excluding(policy, names) -> "policies.Policy":
    """`policy` with the nodes `names` kept on CPU as well (its own checks run first)."""
    names = frozenset(names)
    if not names:
        return policy

    def make_checks(profile):
        return [*policy.checks(profile), _exclusion_class()(names)]

    return dataclasses.replace(policy, name=f"{policy.name} (culprit search)", make_checks=make_checks)


class _Trials:
    """Lowers one prepared case with chosen nodes kept on CPU, counting lowerings."""

    def __init__(self, prepared: Prepared, case: Case, candidates: list[str]):
        self.prepared, self.case = prepared, case
        self.candidates = candidates
        self.count = 0

    def _keeping_on_cpu(self, names) -> Case:
        return self.case.replace(policy=_excluding(self.case.policy, names))

    def fails(self, kept: set[str]) -> bool:
        """Whether lowering fails with only `kept` of the candidates accepted (the others on CPU)."""
        self.count += 1
        state = Lowering(prepared=self.prepared, case=self._keeping_on_cpu(set(self.candidates) - kept),
                         reuse_export=True)
        error = sequence.run_stages((lower.STAGE,), state, ignore)
        return error is not None and state.outcome in COMPILE_FAILURES

    def full_run(self, excluded: set[str]) -> CaseResult:
        self.count += 1
        return lower_and_check(self.prepared, self._keeping_on_cpu(excluded), reuse_export=True)


def _guilty(items: list, fails) -> list:
    """The items of `items` (known to fail together) that fail on their own, by halving.

    `fails(subset)` says whether keeping only `subset` fails. When the first half does not fail, the second is
    taken to fail without a lowering (the whole does): one culprit among n costs about log2(n) lowerings. Should
    that not hold (a failure that needs items of both halves), the search still ends at one item whose keeping on
    CPU breaks the failing combination, which is what it is after; `find_culprits` checks the end result.
    """
    if len(items) == 1:
        return list(items)
    half = len(items) // 2
    first, second = items[:half], items[half:]
    if not fails(first):
        return _guilty(second, fails)
    found = _guilty(first, fails)
    if fails(second):
        found += _guilty(second, fails)
    return found


def _search(trials: _Trials, accepted: list[NodeRecord]) -> list[Culprit]:
    """The culprit groups among `accepted`, whose lowering together is known to fail."""
    groups: dict[tuple, list[str]] = {}
    for node in accepted:
        groups.setdefault((node.target, node.input_dtypes, node.output_dtypes), []).append(node.name)
    keys = list(groups)

    def names_of(chosen_keys) -> set[str]:
        return {name for key in chosen_keys for name in groups[key]}

    guilty_keys = _guilty(keys, lambda subset: trials.fails(names_of(subset)))
    culprits = []
    innocent = names_of(keys) - names_of(guilty_keys)
    for key in guilty_keys:
        # Inside the group: which of its nodes fail with the innocent groups accepted and the other culprits not.
        nodes = groups[key] if len(groups[key]) == 1 else _guilty(
            groups[key], lambda subset: trials.fails(innocent | set(subset)))
        culprits.append(Culprit(key[0], key[1], key[2], tuple(nodes)))
    return culprits


def _implied(culprits, policy, outcome) -> tuple[str, ...]:
    """One line per culprit: what an allowlist, or for a Vela refusal the Ethos-U support checks, should do."""
    fails = "Vela refuses it" if outcome is Outcome.VELA_ERROR else "fails to lower"
    lines = []
    for culprit in culprits:
        dtypes = f"{','.join(culprit.input_dtypes) or '-'} -> {','.join(culprit.output_dtypes) or '-'}"
        if policy.ops is not None and culprit.target in policy.ops:
            lines.append(f"remove {culprit.target} from {policy.name} ({fails} on {dtypes})")
        elif "int64" in culprit.input_dtypes + culprit.output_dtypes:
            lines.append(f"leave {culprit.target} out of an EXT-INT64 allowlist, or take it only without "
                         f"these operand dtypes (accepted by {policy.name} on {dtypes}, {fails})")
        elif outcome is Outcome.VELA_ERROR:
            lines.append(f"keep {culprit.target} off the NPU on {dtypes} where Vela refuses it (accepted by the "
                         f"Ethos-U partitioner's checks under {policy.name})")
        else:
            lines.append(f"keep {culprit.target} off TOSA on {dtypes} (accepted by {policy.name}, {fails})")
    return tuple(lines)


@scoped
def find_culprits(result: CaseResult) -> CulpritSearch:
    """For a `lowering_error` or `vela_error` result: a smallest set of accepted nodes whose keeping on CPU lets
    lowering (and Vela) succeed.

    The search starts from the result's own case (`result.case`: a catalogue case or a model with its inputs,
    policy and passes as they ran); a result read back from a file is rebuilt from its names (Case.from_result,
    which says what a model's result needs). It runs in this process (see the module docstring).
    """
    if result.outcome not in COMPILE_FAILURES:
        return CulpritSearch(result, (), 0, 0, 0, None)
    accepted = [node for node in result.nodes if node.delegated]
    if not accepted:
        raise WorkbenchError(f"{result.op}: the lowering failed before the partitioner accepted any node "
                             f"({result.error.one_line() if result.error else 'no error recorded'}); "
                             "there is nothing to keep on CPU")
    case = Case.from_result(result)
    prepared = Exports().prepared(case)
    if prepared.error is not None:
        raise WorkbenchError(f"{result.op} no longer prepares: {prepared.error.one_line()}")
    trials = _Trials(prepared, case, [node.name for node in accepted])
    culprits: list[Culprit] = []
    remaining = accepted
    while True:
        culprits += _search(trials, remaining)
        excluded = {name for culprit in culprits for name in culprit.nodes}
        final = trials.full_run(excluded)
        remaining = [node for node in final.nodes if node.delegated]
        if final.outcome not in COMPILE_FAILURES or not remaining:
            break
    groups = len({(n.target, n.input_dtypes, n.output_dtypes) for n in accepted})
    return CulpritSearch(result, tuple(culprits), trials.count, len(accepted), groups, final,
                         _implied(culprits, case.policy, result.outcome))
