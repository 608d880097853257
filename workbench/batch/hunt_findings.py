"""What the counterexample hunt concludes: the partitioner's contract, classes of findings, and their record.

The contract, for a policy (or an Arm backend) under a profile: a node the partitioner accepts must lower (a
`lowering_error` or `vela_error` breaks it), what is delegated must compute what eager PyTorch computes by the
yardstick that judges it (`mismatch`; `reference_error`: the reference model refused the TOSA graph;
`unpredictable`: the delegate computes, on these values, what the TOSA specification leaves unpredictable), every
delegate's TOSA graph must be legal under the profile by the specification's strict alignment (`illegal_graph`:
tosa-opt refused an operator or type the profile does not declare, core/spec_check.py), and nothing may crash or
hang. Rejected nodes run on CPU, which is no finding. A program that fails before the partitioner
decides anything (its export, or its conversion to edge) fails on its own: it is discarded and counted. A float
output that only the workbench's dtype tolerance judged (no TOSA compliance mode: a chain of operators) in a
delegate that accumulates (REDUCE_SUM, MATMUL, a convolution, AVG_POOL2D: what the conformance suite judges as
dot products, whose allowed error grows with their length) is not judged either: the dtype tolerance does not
allow for the accumulation the specification allows, so such a mismatch is counted, not reported.

A class is (kind, failing pass, root cause with its numbers masked, the operator the failing node came from, the
input dtypes the partitioner accepted that operator's node with), so two operators failing in one TOSA operator (a
CONCAT made from `cat`, another from a strided slice) are two classes, and so are a `cat` accepted on int64 and
int32 and one accepted on uniform int64 whose int32 operand a later pass made. A mismatch's class names the
yardstick and the delegated operators instead.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field

from ..core.outcomes import Numerics, Outcome, is_quantize_dequantize
from ..core.quantization import call_arguments
from ..core.records import ArmBackend, CaseResult

BROKEN_OUTCOMES = (Outcome.LOWERING_ERROR, Outcome.VELA_ERROR, Outcome.CRASHED, Outcome.TIMEOUT)
BROKEN_NUMERICS = (Numerics.MISMATCH, Numerics.REFERENCE_ERROR, Numerics.UNPREDICTABLE)
# stages before the partitioner decides: a failure there is the program's own (discarded, not a finding)
OWN_FAILURE_STAGES = ("eager", "quantize", "export", "to_edge")
_NUMBER = re.compile(r"\d+")
# dtype names keep their widths: int64 and int32 are two classes
_DTYPE_WORD = re.compile(r"(?<![A-Za-z])(?:u?int|b?float|complex)\d+(?:_[a-z0-9]+)?")


def verdict(result: CaseResult) -> str | None:
    """The contract's word on one result: the kind of break ("lowering_error", "mismatch", ...), None when it
    holds, or "discard: <why>" when the program failed on its own before the partitioner decided or its numbers
    cannot be judged (see the module docstring)."""
    stage = result.error.stage if result.error is not None else None
    if result.outcome == Outcome.EXPORT_ERROR or (result.outcome == Outcome.LOWERING_ERROR
                                                  and stage in OWN_FAILURE_STAGES):
        return f"discard: {stage or result.outcome.value}"
    if result.outcome in BROKEN_OUTCOMES:
        return result.outcome.value
    if result.spec_check is not None and result.spec_check.legal is False:
        return ILLEGAL_GRAPH  # what the profile does not allow was delegated, whatever it computed
    if result.numerics == Numerics.MISMATCH and _tolerance_beside_accumulation(result):
        return UNJUDGED
    if result.numerics in BROKEN_NUMERICS:
        return result.numerics.value
    return None


UNJUDGED = "discard: float mismatch by the dtype tolerance alone, beside an accumulation"
ILLEGAL_GRAPH = "illegal_graph"


def _tolerance_beside_accumulation(result: CaseResult) -> bool:
    from ..stack.tosa import conformance

    wrong = [o for o in result.outputs if not o.match]
    if not wrong or any(o.note or not o.dtype.startswith(("float", "bfloat")) or o.yardstick.startswith("TOSA")
                        for o in wrong):
        return False  # a dtype or shape that differs, an integer, or a compliance mode's verdict is judged
    return any(conformance.accumulates(op) for delegate in result.delegates for op in delegate.tosa_op_names)


def worse(result: CaseResult, baseline: CaseResult | None) -> bool:
    """Whether `result` breaks the contract where `baseline` (None: no baseline) holds it."""
    kind = verdict(result)
    if kind is None or kind.startswith("discard"):
        return False
    return baseline is None or verdict(baseline) is None


def masked(text: str, node: str = "") -> str:
    """`text` with its numbers as # (dtype widths kept) and the failing node's own name as <node>."""
    text = text or ""
    if node:
        text = text.replace(node, "<node>")
    words = _DTYPE_WORD.findall(text)
    text = _NUMBER.sub("#", _DTYPE_WORD.sub("\0", text))
    for word in words:
        text = text.replace("\0", word, 1)
    return text


def compute_nodes(result: CaseResult) -> int:
    return sum(not is_quantize_dequantize(node.target) for node in result.nodes)


def class_of(result: CaseResult) -> tuple[str, str, str, str, str]:
    """(kind, failing pass, root cause masked, origin operator, accepted input dtypes) of a result that breaks the
    contract."""
    kind = verdict(result) or ""
    error = result.error
    if kind == ILLEGAL_GRAPH:
        return kind, "", masked(result.spec_check.message), _delegated_targets(result), ""
    if kind == Numerics.MISMATCH.value or error is None:
        wrong = [o for o in result.outputs if not o.match]
        judged = "; ".join(sorted({f"{o.dtype}: {o.note}" if o.note else
                                   f"{o.dtype} outside {o.yardstick or 'tolerance'}" for o in wrong}))
        return kind, "", masked(judged), _delegated_targets(result), ""
    node = error.failing_node
    # a placeholder (an input, buffer or constant) came from no operator, whichever operator reads it
    origin = "" if node is None else node.op if node.op != "call_function" else node.origin_target or node.target
    cause = masked(f"{error.root_cause_type}: {error.root_cause}", node.name if node is not None else "")
    return kind, error.failing_pass or "", cause, origin, accepted_dtypes(result, origin)


def _delegated_targets(result: CaseResult) -> str:
    return "+".join(sorted({n.target for n in result.delegated_nodes if not is_quantize_dequantize(n.target)}))


def _base_name(target: str) -> str:
    """`cat` of aten.cat.default, `slice` of aten.slice.Tensor and of the edge aten.slice_copy.Tensor."""
    name = target.split(".")[1] if target.count(".") >= 2 else target
    return name.strip("_").removesuffix("_copy")


def accepted_dtypes(result: CaseResult, origin: str) -> str:
    """The input dtypes of the delegated edge nodes of the origin operator (`int64,int32`), as the partitioner saw
    them; "" when no delegated node is of that operator."""
    if not origin or "." not in origin:
        return ""
    found = sorted({",".join(n.input_dtypes) for n in result.delegated_nodes
                    if _base_name(n.target) == _base_name(origin)})
    return " | ".join(found)


def class_label(key: tuple) -> str:
    kind, failing_pass, cause, origin, accepted = key
    where = f" in {failing_pass}" if failing_pass else ""
    on = f" (accepted on {accepted})" if accepted else ""
    return f"{kind}{where} from {origin or '?'}{on}: {cause}"


@dataclass(frozen=True)
class Finding:
    """One class of counterexamples: its shrunk, confirmed representative and how many programs fell in it."""

    key: tuple  # class_of: (kind, failing pass, root cause masked, origin operator, accepted input dtypes)
    program: object  # the shrunk catalogue.program.Program
    result: CaseResult  # the fresh rerun that confirmed it (result.case: its Case; traced for a mismatch)
    count: int  # programs of the hunt in this class
    first: object  # the first program found in it, before shrinking
    confirmed: bool  # the fresh rerun broke the contract the same way
    baseline: CaseResult | None = None  # the same program under the baseline, when the hunt had one
    culprits: object = None  # batch.culprits.CulpritSearch of a lowering error, when searched

    @property
    def kind(self) -> str:
        return self.key[0]

    @property
    def failing_pass(self) -> str:
        return self.key[1]

    @property
    def origin_op(self) -> str:
        return self.key[3]

    @property
    def accepted_dtypes(self) -> str:
        return self.key[4]

    @property
    def root_cause(self) -> str:
        if self.result.error is not None:
            return self.result.error.root_cause
        return self.key[2]

    @property
    def compute_nodes(self) -> int:
        return compute_nodes(self.result)

    @property
    def delegated_ops(self) -> tuple[str, ...]:
        """The edge operators its program delegated (what an allowlist names; `origin_op` is the exported
        program's operator, e.g. aten.__xor__.Tensor for an edge aten.bitwise_xor.Tensor)."""
        return tuple(sorted({n.target for n in self.result.delegated_nodes if not is_quantize_dequantize(n.target)}))

    @property
    def label(self) -> str:
        return class_label(self.key)

    def reproduce(self) -> str:
        """The lines that rerun it: the source saved as a file, then `workbench run` or `run_model` (the command
        line only for a policy it can look up by name)."""
        from .. import policies

        policy = self.result.policy
        quantize = f" --quantization {self.result.quantization}" if self.result.quantization else ""
        model_quantize = call_arguments(self.result.quantization)
        by_name = policy in policies.names() or policy.endswith((".toml", ".yaml", ".yml"))
        backend = ArmBackend.from_dict(self.result.arm_backend).rerun_argument if self.result.arm_backend else None
        shell_backend = f" --arm-backend {backend}" if backend else ""
        command = (f"workbench run finding.py --profile {self.result.profile} --policy {policy}{quantize}"
                   f"{shell_backend}\n"
                   if by_name else f"# (policy {policy!r} is a Python object: register it, or pass it to run_model)\n")
        python_policy = repr(policy) if by_name else "policy"
        dynamic = ", dynamic_shapes" if self.program.dynamic else ""
        use_backend = f"workbench.use_arm_backend({backend!r})  # first, in a new process\n" if backend else ""
        return (f"# save `source` as finding.py, then\n{command}"
                f"# or, in Python:\n{use_backend}"
                f"from finding import Program, inputs{dynamic}\n"
                f"workbench.run_model(Program(), inputs, {self.result.profile!r}, policy={python_policy}"
                f"{model_quantize}{dynamic.replace(', dynamic_shapes', ', dynamic_shapes=dynamic_shapes')})")

    def to_dict(self) -> dict:
        divergence = self.result.first_divergence
        return {
            "kind": self.kind, "outcome": self.result.outcome.value, "numerics": self.result.numerics.value,
            "failing_pass": self.failing_pass or None, "root_cause": self.root_cause, "origin_op": self.origin_op,
            "accepted_dtypes": self.accepted_dtypes or None,
            "failing_node": (self.result.error.failing_node.describe()
                             if self.result.error and self.result.error.failing_node else None),
            "first_divergence": divergence.label() if divergence else None,
            "yardstick": "; ".join(sorted({o.yardstick for o in self.result.outputs if o.yardstick and not o.match})),
            "compute_nodes": self.compute_nodes, "delegated_ops": list(self.delegated_ops), "count": self.count,
            "confirmed": self.confirmed,
            "profile": self.result.profile, "policy": self.result.policy, "source": self.program.source(),
            "reproduce": self.reproduce(),
            "baseline": None if self.baseline is None else {
                "profile": self.baseline.profile, "policy": self.baseline.policy,
                "outcome": self.baseline.outcome.value, "numerics": self.baseline.numerics.value},
            "culprits": [str(c) for c in self.culprits.culprits] if self.culprits is not None else None,
        }

    def __str__(self) -> str:
        head = f"{self.label} ({self.count} program{'s' * (self.count != 1)}, {self.compute_nodes} compute nodes)"
        return f"{head}\n{self.program.source()}"


@dataclass
class HuntStats:
    """What the hunt did: programs generated, discarded (by reason), run, and per outcome; its time."""

    generated: int = 0
    discarded: Counter = field(default_factory=Counter)
    run: int = 0
    cases: int = 0
    cached: int = 0
    outcomes: Counter = field(default_factory=Counter)  # "delegated/match", "lowering_error/not_run", ...
    broke: int = 0  # programs that broke the contract (worse than the baseline, with one)
    classes: int = 0
    unconfirmed: int = 0  # classes whose shrunk representative's fresh rerun did not fail the same way (dropped)
    search_seconds: float = 0.0
    shrink_seconds: float = 0.0
    shrink_runs: int = 0
    first_seconds: dict = field(default_factory=dict)  # class label -> seconds into the search it was first seen

    def to_dict(self) -> dict:
        return {"generated": self.generated, "discarded": sum(self.discarded.values()),
                "discarded_by_reason": dict(self.discarded), "run": self.run, "cases": self.cases,
                "cached": self.cached, "outcomes": dict(self.outcomes), "broke_contract": self.broke,
                "classes": self.classes, "unconfirmed": self.unconfirmed,
                "search_seconds": round(self.search_seconds, 2),
                "shrink_seconds": round(self.shrink_seconds, 2), "shrink_runs": self.shrink_runs,
                "first_seconds": {k: round(v, 2) for k, v in self.first_seconds.items()}}

    def __str__(self) -> str:
        outcomes = ", ".join(f"{k} {v}" for k, v in self.outcomes.most_common())
        return (f"{self.generated} programs generated, {sum(self.discarded.values())} discarded, {self.run} run "
                f"({self.cached} of {self.cases} cases from the cache): {outcomes}; {self.broke} broke the contract "
                f"in {self.classes} classes ({self.unconfirmed} not confirmed by a fresh rerun); search "
                f"{self.search_seconds:.0f} s, shrinking {self.shrink_seconds:.0f} s ({self.shrink_runs} runs)")


@dataclass
class HuntResult:
    findings: list
    stats: HuntStats
    description: str = ""

    def to_dict(self) -> dict:
        return {"description": self.description, "findings": [f.to_dict() for f in self.findings],
                "stats": self.stats.to_dict()}

    def __str__(self) -> str:
        lines = [self.description, str(self.stats), ""]
        for number, finding in enumerate(self.findings, 1):
            lines += [f"[{number}] {finding}", ""]
        return "\n".join(lines).rstrip() + "\n"
