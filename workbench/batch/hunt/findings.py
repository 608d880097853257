"""What the counterexample hunt concludes: classes of findings, worst first, and their record (the contract that
judges each result: hunt/contract.py).

A class is one cause: (kind, failing pass, root cause with dtypes, shapes, names and numbers masked for matching -
a reader sees its own words - and the operator the failing node came from without its overload), so two operators
failing in one TOSA operator (a CONCAT made from `cat`, another from a strided slice) are two classes, while one
cause met on other dtypes, shapes or overloads is one class that lists them (`Variants`). A mismatch's class names
the yardstick and the operator of the first diverging node (a traced result), else the delegated operators.
Findings are listed worst first (`Severity`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ...core.outcomes import Outcome, is_quantize_dequantize
from ...core.quantization import call_arguments
from ...core.records import ArmBackend, CaseResult
# the contract is read beside the classes: its names are here too
from .contract import (DISAGREEMENT, ILLEGAL_GRAPH, NUMERIC_KINDS, SEVERITY, VGF_RUN_ERROR, Severity,  # noqa: F401
                       Verdict, diverged, severity, verdict, worse)

_NUMBER = re.compile(r"\d+")
# a dtype as torch, TOSA or a profile's extension spells it: masked in a class's cause, listed in its variants
_DTYPE_WORD = re.compile(r"(?<![A-Za-z0-9_])(?:torch\.)?(?:(?:u?int|b?float|complex|INT|FP|BF|UINT|bf|fp)\d+"
                         r"(?:_[a-z0-9]+)?|bool|BOOL)(?![A-Za-z0-9_])")
# a shape: (1, 1), (1,), [2, 3], torch.Size([2, 3]), ()
_SHAPE = re.compile(r"torch\.Size\(\[[-\d,\s]*\]\)|(?<![A-Za-z0-9_])[(\[]\s*-?\d+\s*(?:,\s*-?\d+\s*)*,?\s*[)\]]|"
                    r"(?<=shape=)\(\)")


# What a lowering says when it refuses a dtype the partitioner accepted, in masked words: whichever dtype, TOSA
# operator or check said it, one cause per operator (the dtypes are the class's variants, the words its causes).
# Operands of two dtypes ("Expected matching dtypes", "CONCAT requires matching dtypes") are a cause of their own.
_DTYPE_REFUSAL = re.compile(r"Unsupported dtype <dtype>|doesn't support (?:<dtype>|integer)|"
                            r"requires (?:<dtype>|[\w-]+) inputs?,? (?:but )?got <dtype>|"
                            r"to have one of the following dtypes|on a <dtype> tensor is not supported")
DTYPE_REFUSAL = "the lowering refuses a dtype the partitioner accepted"


def masked(text: str, names=()) -> str:
    """`text` with its shapes as <shape>, dtypes as <dtype>, the graph's node names (`names`) as <node> and other
    numbers as #: what stays is the cause."""
    text = _SHAPE.sub("<shape>", text or "")
    text = _DTYPE_WORD.sub("<dtype>", text)
    for name in sorted({n for n in names if n}, key=len, reverse=True):
        text = re.sub(rf"(?<![A-Za-z0-9_]){re.escape(name)}(?![A-Za-z0-9_])", "<node>", text)
    return _NUMBER.sub("#", text)


def compute_nodes(result: CaseResult) -> int:
    return sum(not is_quantize_dequantize(node.target) for node in result.nodes)


def member_size(member: tuple) -> tuple:
    """How small a (program, result) member of a class is: compute nodes, then the program's size."""
    program, result = member
    return compute_nodes(result), program.size()


def without_overload(target: str) -> str:
    """aten.eq of aten.eq.Tensor; a name that is no operator (a placeholder's) as it is."""
    return target.rsplit(".", 1)[0] if target.count(".") >= 2 else target


@dataclass(frozen=True)
class ClassKey:
    """What makes two counterexamples one class: one cause. Keys match by `pattern`, the cause masked (see `masked`);
    `cause` keeps the first member's own words, which is what a reader sees."""

    kind: str  # the contract's verdict: "mismatch", "imprecise", "lowering_error", "illegal_graph", ...
    failing_pass: str = ""  # "" when none
    cause: str = field(default="", compare=False)  # the root cause in its own words: real digits, dtypes, names
    origin: str = ""  # the origin operator without its overload ("aten.permute_copy"), "" when none
    pattern: str = field(default="", repr=False)  # the cause masked: what two keys compare (`masked(cause)` if "")

    def __post_init__(self):
        if not self.pattern:
            object.__setattr__(self, "pattern", masked(self.cause))

    def same_cause(self, other: "ClassKey") -> bool:
        """Whether `other` has the same kind, failing pass and masked cause, whatever operator it came from."""
        return (self.kind, self.failing_pass, self.pattern) == (other.kind, other.failing_pass, other.pattern)

    def __str__(self) -> str:
        where = f" in {self.failing_pass}" if self.failing_pass else ""
        return f"{self.kind}{where} from {self.origin or '?'}: {self.cause}"

    def origins(self) -> set[str]:
        return set(filter(None, self.origin.split("+")))

    def to_dict(self) -> dict:
        return {"kind": self.kind, "failing_pass": self.failing_pass, "cause": self.cause, "origin": self.origin,
                "pattern": self.pattern}

    @classmethod
    def from_dict(cls, data: dict) -> "ClassKey":
        """A key as `to_dict` wrote it, or as earlier hunts kept it (no pattern: their cause was masked)."""
        return cls(data["kind"], data.get("failing_pass", ""), data.get("cause", ""), data.get("origin", ""),
                   data.get("pattern", ""))


@dataclass(frozen=True)
class Variants:
    """What varied within a class, each value once, in the order first seen."""

    dtypes: tuple[str, ...] = ()  # accepted input dtypes of the origin operator's node ("int64,int32", ...)
    shapes: tuple[str, ...] = ()  # the shapes its message named ("(1, 1)", ...)
    overloads: tuple[str, ...] = ()  # the origin operator with its overload ("aten.eq.Tensor", "aten.eq.Scalar")
    causes: tuple[str, ...] = ()  # the root causes in their own words ("Unsupported dtype torch.bool for MUL", ...)

    def __or__(self, other: "Variants") -> "Variants":
        return Variants(*(tuple(dict.fromkeys(mine + theirs)) for mine, theirs in
                          ((self.dtypes, other.dtypes), (self.shapes, other.shapes),
                           (self.overloads, other.overloads), (self.causes, other.causes))))

    def to_dict(self) -> dict:
        return {"dtypes": list(self.dtypes), "shapes": list(self.shapes), "overloads": list(self.overloads),
                "causes": list(self.causes)}

    def __str__(self) -> str:
        """The dtypes, shapes and overloads seen, and the causes' words when there was more than one."""
        parts = [f"{name} {' | '.join(values)}" for name, values in
                 (("dtypes", self.dtypes), ("shapes", self.shapes), ("overloads", self.overloads),
                  ("causes", self.causes if len(self.causes) > 1 else ())) if values]
        return "; ".join(parts)


def _judged(outputs) -> str:
    wrong = [o for o in outputs if not o.match]
    return "; ".join(sorted({f"{o.dtype}: {o.note}" if o.note else f"{o.dtype} outside {o.yardstick or 'tolerance'}"
                             for o in wrong}))


def _diverging_target(result: CaseResult) -> str:
    """The operator of the first diverging node of a traced result; "" when untraced or not found."""
    divergence = result.first_divergence
    if divergence is None or divergence.fx_node is None:
        return ""
    return next((n.target for n in result.nodes if n.name == divergence.fx_node), "")


def _origin_target(result: CaseResult) -> str:
    """The origin operator with its overload (several joined by +, sorted), "" when none."""
    kind = verdict(result).kind
    error = result.error
    if kind == ILLEGAL_GRAPH:
        return _illegal_operator_targets(result) or _delegated_targets(result)
    if kind in (Outcome.VGF_ERROR.value, VGF_RUN_ERROR) and (error is None or error.failing_node is None):
        return _delegated_targets(result)  # the ML SDK names TOSA operators, not FX nodes
    if kind in NUMERIC_KINDS or kind == DISAGREEMENT or error is None:
        return _diverging_target(result) or _delegated_targets(result)
    node = error.failing_node
    # a placeholder (an input, buffer or constant) came from no operator, whichever operator reads it
    return "" if node is None else node.op if node.op != "call_function" else node.origin_target or node.target


_ILLEGAL_TOSA_OP = re.compile(r"'tosa\.(\w+)' op illegal")


def _illegal_operator_targets(result: CaseResult) -> str:
    """The delegated nodes that became the TOSA operator the specification check refused (by the Arm backend's
    record of which TOSA operators each node became), "" when the message or the record does not say."""
    found = _ILLEGAL_TOSA_OP.search(result.spec_check.message or "")
    if found is None:
        return ""
    refused = found.group(1).upper()
    return "+".join(sorted({n.target for n in result.delegated_nodes if refused in (n.tosa_ops or ())}))


def cause_text(result: CaseResult) -> str:
    """The root cause of a result that breaks the contract, as it was: real digits, dtypes and names."""
    kind = verdict(result).kind
    error = result.error
    if kind == ILLEGAL_GRAPH:
        return result.spec_check.message
    if kind == DISAGREEMENT:
        wrong = diverged(result)
        right, outputs = (("reference model", result.vgf_outputs) if wrong == "VGF run" else
                          ("VGF run", result.outputs))
        return (f"the two TOSA implementations disagree: the {wrong} gives {_judged(outputs)} where the {right} "
                "matches eager")
    if kind in NUMERIC_KINDS or error is None:
        # a VGF target's imprecise run beside a reference model that matches: the run's outputs say it
        return _judged(result.outputs) or _judged(result.vgf_outputs)
    return f"{error.root_cause_type}: {error.root_cause}"


def class_of(result: CaseResult) -> ClassKey:
    """The class of a result that breaks the contract."""
    error = result.error
    names = [n.name for n in result.nodes]
    if error is not None and error.failing_node is not None:
        names.append(error.failing_node.name)
    origin = "+".join(sorted({without_overload(t) for t in _origin_target(result).split("+") if t}))
    kind, words = verdict(result).kind, cause_text(result)
    pattern = masked(words, names)
    if kind == Outcome.LOWERING_ERROR.value and _DTYPE_REFUSAL.search(pattern):
        pattern = DTYPE_REFUSAL
    return ClassKey(kind, (error.failing_pass or "") if error is not None else "", words, origin, pattern)


def same_class(a: ClassKey, b: ClassKey) -> bool:
    """Whether two keys are one cause: equal, or equal but for origins that share an operator (an illegal graph's
    origin is every node that became the refused TOSA operator: `cat` alone, or `cat` and the unsqueeze it reads)."""
    return a == b or (a.same_cause(b) and bool(a.origins() & b.origins()))


def class_among(keys, key: ClassKey) -> ClassKey:
    """The key among `keys` that is one cause with `key` (the first found), else `key`."""
    return next((k for k in keys if same_class(k, key)), key)


def variants_of(result: CaseResult) -> Variants:
    """The dtypes, shapes and overloads of one result's class member."""
    origin = _origin_target(result)
    dtypes = accepted_dtypes(result, origin).split(" | ") if "+" not in origin else []
    shapes = tuple(dict.fromkeys(_SHAPE.findall(cause_text(result))))
    overloads = tuple(t for t in origin.split("+") if t.count(".") >= 2)
    return Variants(tuple(d for d in dtypes if d), shapes, overloads, (cause_text(result),))


def member_label(result: CaseResult) -> str:
    """One member's class with its real message and accepted dtypes: what `HuntStats.first_seconds` keys on, so each
    variant's first time is found by its words."""
    key = class_of(result)
    origin = _origin_target(result) or "?"
    where = f" in {key.failing_pass}" if key.failing_pass else ""
    dtypes = accepted_dtypes(result, origin) if "+" not in origin else ""
    on = f" (accepted on {dtypes})" if dtypes else ""
    return f"{key.kind}{where} from {origin}{on}: {cause_text(result)}"


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


@dataclass(frozen=True)
class Finding:
    """One class of counterexamples: its shrunk, confirmed representative, how many programs fell in it and what
    varied among them."""

    key: ClassKey
    program: object  # the shrunk catalogue.program.Program (the smallest member when not shrunk)
    result: CaseResult  # the fresh rerun that confirmed it (result.case: its Case; traced for a mismatch)
    count: int  # programs of the hunt in this class
    first: object  # the first program found in it, before shrinking
    confirmed: bool  # the fresh rerun broke the contract the same way
    baseline: CaseResult | None = None  # the same program under the baseline, when the hunt had one
    culprits: object = None  # authoring/culprits.py: CulpritSearch of a lowering error, when searched
    variants: Variants = Variants()
    shrunk: bool = True  # False: the budget ran out before its shrinking finished (`program`: the smallest reached)

    @property
    def kind(self) -> str:
        return self.key.kind

    @property
    def failing_pass(self) -> str:
        return self.key.failing_pass

    @property
    def origin_op(self) -> str:
        """The representative's origin operator, with its overload (`key.origin` is without)."""
        return _origin_target(self.result) or self.key.origin

    @property
    def severity(self) -> Severity:
        return severity(self.kind)

    @property
    def accepted_dtypes(self) -> str:
        return " | ".join(self.variants.dtypes)

    @property
    def root_cause(self) -> str:
        if self.result.error is not None:
            return self.result.error.root_cause
        return cause_text(self.result)

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
        """The class as a reader sees it: the representative's real message (the key masks it)."""
        where = f" in {self.failing_pass}" if self.failing_pass else ""
        return f"{self.kind}{where} from {self.origin_op or '?'}: {cause_text(self.result)}"

    def reproduce(self) -> str:
        """The lines that rerun it: the source saved as a file, then `workbench run` or `run_model` (the command
        line only for a policy it can look up by name)."""
        from ... import policies

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

    def to_dict(self, whole: bool = False) -> dict:
        """The finding as the hunt's JSON shows it; whole=True adds, under "whole", its parts in full (its programs,
        results, class key and culprit search), which HuntResult.from_dict makes the same finding of."""
        divergence = self.result.first_divergence
        shown = {
            "kind": self.kind, "outcome": self.result.outcome.value, "numerics": self.result.numerics.value,
            "failing_pass": self.failing_pass or None, "root_cause": self.root_cause, "origin_op": self.origin_op,
            "accepted_dtypes": self.accepted_dtypes or None, "variants": self.variants.to_dict(),
            "severity": self.severity.name.lower(), "shrunk": self.shrunk,
            "failing_node": (self.result.error.failing_node.describe()
                             if self.result.error and self.result.error.failing_node else None),
            "first_divergence": divergence.label() if divergence else None,
            "yardstick": "; ".join(sorted({o.yardstick for o in self.result.outputs + self.result.vgf_outputs
                                           if o.yardstick and not o.match})),
            "compute_nodes": self.compute_nodes, "delegated_ops": list(self.delegated_ops), "count": self.count,
            "confirmed": self.confirmed,
            "profile": self.result.profile, "policy": self.result.policy, "source": self.program.source(),
            "reproduce": self.reproduce(),
            "baseline": None if self.baseline is None else {
                "profile": self.baseline.profile, "policy": self.baseline.policy,
                "outcome": self.baseline.outcome.value, "numerics": self.baseline.numerics.value},
            "culprits": [str(c) for c in self.culprits.culprits] if self.culprits is not None else None,
        }
        if whole:
            shown["whole"] = {"key": self.key.to_dict(), "program": self.program.to_dict(),
                              "first": self.first.to_dict(), "result": self.result.to_dict(),
                              "baseline": None if self.baseline is None else self.baseline.to_dict(),
                              "culprits": None if self.culprits is None else self.culprits.to_dict()}
        return shown

    def summary(self, width: int = 240) -> str:
        """One line: the label's first line (cut at `width`), how many programs, how small, shrunk and confirmed."""
        label = self.label.splitlines()[0] if self.label else ""
        label = label if len(label) <= width else label[:width - 1] + "…"
        notes = [f"{self.count} program{'s' * (self.count != 1)}", f"{self.compute_nodes} compute nodes"]
        notes += ["not shrunk"] * (not self.shrunk) + ["not confirmed: the budget ran out"] * (not self.confirmed)
        return f"{label} ({', '.join(notes)})"

    def __str__(self) -> str:
        seen = f"; {self.variants}" if str(self.variants) else ""
        not_shrunk = ", not shrunk" if not self.shrunk else ""
        head = (f"{self.label} ({self.count} program{'s' * (self.count != 1)}, {self.compute_nodes} compute nodes"
                f"{not_shrunk}{seen})")
        return f"{head}\n{self.program.source()}"


def ordered(findings: list) -> list:
    """Findings worst first (`Severity`), then by how many programs fell in each: the order of a hunt's result, its
    JSON, its text and its report."""
    return sorted(findings, key=lambda f: (f.severity, -f.count, f.label))
