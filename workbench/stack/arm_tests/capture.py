"""executorch's own Arm tests (executorch/backends/arm/test/) read as cases: the one module that touches its test suite.

The test suite is executorch internals as much as a private attribute is: its pipeline classes
(`tester/test_pipeline.py`: TosaPipelineFP, TosaPipelineINT, OpNotSupportedPipeline, EthosU55PipelineINT,
EthosU85PipelineINT), `tester/arm_tester.py`'s ArmTester, `common.parametrize`, the Ethos-U compile specs of
`common.get_u55_compile_spec` / `get_u85_compile_spec` and the FVP marks `common.XfailIfNoCorstone300` / `320` are
read here and nowhere else. `check_test_suite()` refuses with a StackError
naming what is missing when a class or a constructor parameter read here is gone, and warns (StackWarning) when a
constructor's source is no longer the one this module reproduces (pinned_sources.PINNED_SOURCES["arm_test_suite"]);
`workbench doctor` shows the same check as the hook `arm_test_suite` (stack/internals.py).

How a test file is read, without editing it: the module is imported from the process's Arm backend (installed, or
a checkout's: stack/arm_backend.py), seeded as executorch's conftest seeds (random and torch at 0, before the
import and before every test call); the pipeline classes and ArmTester are replaced *in that module's namespace
only* by recorders, and every test function that builds a TOSA or Ethos-U pipeline, or whose name says it tests
one (census.py reads that from the source), is called once per parametrization; a test asking for
pytest's `tmp_path` gets a new temporary folder. A recorder keeps the constructor's arguments (the profile
string built exactly as the real class builds it; for an Ethos-U pipeline the compile spec its constructor builds,
from common.py) and every later call on the pipeline (pop_stage, change_args, quantizer settings, ...); `run()`
does nothing. The originals are put back afterwards.

An Ethos-U pipeline's last stage runs the program on Arm's Corstone FVP, and its tests carry `XfailIfNoCorstone300`
(or `320`): an xfail, when the FVP is not installed, with `raises=FileNotFoundError`, which the run stage raises.
pytest applies the first xfail mark whose condition holds, the function's before its parametrization's
(_pytest/skipping.py evaluate_xfail_marks; _pytest/python.py Function: own_markers, then callspec.marks), so
without the FVP that mark shadows a parametrization's own xfail and the test passes (xfails) exactly when every
stage before the run stage passes; any other failure fails it. The capture reads it so: an effective FVP mark is
no xfail but `fvp` (the stage the workbench stops before), and the parametrization's shadowed xfail is kept as
`xfail_with_fvp`.
"""

from __future__ import annotations

import contextlib
import enum
import importlib
import inspect
import itertools
import os
import random
import sys
import tempfile
import warnings
from collections import Counter
from pathlib import Path

from ...core.errors import StackError, StackWarning
from .. import call_scope
from ..pinned_sources import source_differences
from .census import census_file
from .record import ArmTestCase, fold

TEST_PACKAGE = "executorch.backends.arm.test"
SEED = 0  # executorch's conftest: TEST_SEED defaults to 0
# Ethos-U pipeline -> the common.py function its constructor builds its compile spec with (always at its defaults)
ETHOS_U_SPECS = {"EthosU55PipelineINT": "get_u55_compile_spec", "EthosU85PipelineINT": "get_u85_compile_spec"}
FVP_MARKS = ("XfailIfNoCorstone300", "XfailIfNoCorstone320")
# The constructor parameters read below, per class; a missing one refuses (check_test_suite).
READ_PARAMETERS = {
    "TosaPipelineFP": ("module", "test_data", "exir_op", "run_on_tosa_ref_model", "atol", "rtol", "qtol",
                       "compare_tosa_ref_model_outputs", "dynamic_shapes", "transform_passes", "tosa_version",
                       "tosa_extensions"),
    "TosaPipelineINT": ("module", "test_data", "exir_op", "run_on_tosa_ref_model", "atol", "rtol", "qtol",
                        "compare_tosa_ref_model_outputs", "dynamic_shapes", "tosa_version", "tosa_extensions",
                        "symmetric_io_quantization", "per_channel_quantization", "fold_quantize"),
    "OpNotSupportedPipeline": ("module", "test_data", "non_delegated_ops", "n_expected_delegates", "quantize",
                               "u55_subset", "tosa_version", "tosa_extensions"),
    **{name: ("module", "test_data", "exir_ops", "run_on_fvp", "symmetric_io_quantization", "per_channel_quantization",
              "a16w8_quantization", "atol", "rtol", "qtol", "epsilon", "fold_quantize") for name in ETHOS_U_SPECS},
    "ArmTester": ("model", "example_inputs", "compile_spec", "dynamic_shapes", "transform_passes"),
}


# --- the test suite's shape --------------------------------------------------------------------------------------

def _suite_classes() -> dict[str, type]:
    pipelines = importlib.import_module(f"{TEST_PACKAGE}.tester.test_pipeline")
    tester = importlib.import_module(f"{TEST_PACKAGE}.tester.arm_tester")
    found = {name: getattr(pipelines, name, None) for name in READ_PARAMETERS if name != "ArmTester"}
    found["ArmTester"] = getattr(tester, "ArmTester", None)
    found["BasePipeline"] = getattr(pipelines, "BasePipeline", None)
    return found


def check_test_suite() -> dict[str, type]:
    """The classes read here; StackError naming what is gone when one of them or a parameter read is missing, a
    StackWarning when a constructor reproduced here has another source."""
    classes, missing, changed = suite_problems()
    if missing:
        raise StackError("executorch's Arm test suite changed: " + "; ".join(missing) + ". workbench/stack/"
                         "arm_tests/capture.py reads these to turn its tests into cases")
    for name in changed:
        warnings.warn(f"executorch's {name} is not the source workbench/stack/arm_tests/capture.py reproduces "
                      "(how it builds the profile or compile spec and quantizes): check the captured cases against "
                      "it", StackWarning, stacklevel=2)
    return classes


def suite_problems() -> tuple[dict, list[str], list[str]]:
    """(the classes read here, what is missing, the classes whose constructor source is not the pinned one); the
    doctor shows the same as the hook `arm_test_suite` (internals.py)."""
    try:
        classes = _suite_classes()
        common = importlib.import_module(f"{TEST_PACKAGE}.common")
    except ImportError as exc:
        return {}, [f"it does not import ({type(exc).__name__}: {exc}); reading its tests as cases needs "
                    "backends/arm/test/tester and common.py"], []
    missing = [f"{name} is missing" for name, cls in classes.items() if not isinstance(cls, type)]
    missing += [f"common.{name} is missing" for name in ("parametrize", *ETHOS_U_SPECS.values())
                if not callable(getattr(common, name, None))]
    missing += [f"common.{name} is missing or not a pytest mark" for name in FVP_MARKS
                if getattr(getattr(common, name, None), "mark", None) is None]
    for name, wanted in READ_PARAMETERS.items():
        if isinstance(classes.get(name), type):
            have = inspect.signature(classes[name].__init__).parameters
            missing += [f"{name}.__init__ has no parameter {p!r}" for p in wanted if p not in have]
    if missing:
        return classes, missing, []
    changed = [".".join(difference.split(":")[0].rsplit(".", 2)[-2:])
               for difference in source_differences("arm_test_suite")]
    return classes, missing, changed


# --- recorders ---------------------------------------------------------------------------------------------------

class _Calls:
    """Stands for pipeline.tester / pipeline.quantizer: takes any call or assignment, and logs it."""

    def __init__(self, log: list, prefix: str):
        object.__setattr__(self, "_log", log)
        object.__setattr__(self, "_prefix", prefix)

    def __getattr__(self, name):
        def call(*args, **kwargs):
            self._log.append((f"{self._prefix}.{name}", args, kwargs))
            return None

        return call

    def __setattr__(self, name, value):
        self._log.append((f"{self._prefix}.{name}=", (value,), {}))


class _TesterMethod:
    """Stands for `ArmTester.check_not` (any method of the class itself) where a test passes it to add_stage_after:
    the record says which check the added stage makes (record.py reads check_not and check_count)."""

    def __init__(self, name: str):
        self.__name__ = name

    def __repr__(self) -> str:
        return f"ArmTester.{self.__name__}"


class _RecordedClass(type):
    def __getattr__(cls, name):  # ArmTester.check_not, read on the class
        if name.startswith("_"):
            raise AttributeError(name)
        return _TesterMethod(name)


def _recorder(real: type, sink: list, common):
    """A stand-in for the pipeline class `real` (or ArmTester) that records its construction and later calls; an
    Ethos-U pipeline's record holds the compile spec its constructor builds (`compile_spec`)."""
    signature = inspect.signature(real.__init__)
    kind = real.__name__
    build_spec = getattr(common, ETHOS_U_SPECS[kind]) if kind in ETHOS_U_SPECS else None

    class Recorder(metaclass=_RecordedClass):
        def __class_getitem__(cls, item):  # TosaPipelineFP[input_t](...)
            return cls

        def __init__(self, *args, **kwargs):
            bound = signature.bind(None, *args, **kwargs)
            bound.apply_defaults()
            arguments = dict(bound.arguments)
            arguments.pop(next(iter(signature.parameters)), None)  # self
            if build_spec is not None:  # the class calls it with no argument that changes the target
                arguments["compile_spec"] = build_spec()
            self._log: list = []
            self.tester = _Calls(self._log, "tester")
            self.quantizer = _Calls(self._log, "quantizer")
            sink.append((kind, arguments, self._log))

        def run(self):
            return None

        def __getattr__(self, name):  # pop_stage, change_args, add_stage_after, ... and ArmTester's chain
            log = self.__dict__.get("_log")
            if log is None:
                raise AttributeError(name)

            def call(*args, **kwargs):
                log.append((name, args, kwargs))
                return self

            return call

    Recorder.__name__ = Recorder.__qualname__ = f"Recording{kind}"
    return Recorder


# --- parametrizations and marks ----------------------------------------------------------------------------------

def _marks(obj) -> list:
    return list(getattr(obj, "pytestmark", []) or [])


def _condition_holds(mark, text_holds: bool) -> bool:
    """A skipif / xfail mark's condition, as pytest reads it: `condition=` or the positional ones, any true; none:
    true. A string condition (pytest evaluates it) counts as `text_holds`."""
    conditions = (mark.kwargs["condition"],) if "condition" in mark.kwargs else mark.args
    if not conditions:
        return True
    return any(text_holds if isinstance(c, str) else bool(c) for c in conditions)


def _mark_expectation(marks, fvp_marks=()) -> dict:
    """skip / xfail as pytest evaluates `marks` (the function's, then the parametrization's): the first skip or
    skipif that holds; the first xfail whose condition holds. An effective FVP mark (one of `fvp_marks`) is no
    xfail but `fvp`, and the xfail it shadows is `xfail_with_fvp` (see the module's docstring)."""
    found: dict = {}
    for mark in marks:
        if mark.name == "skip":
            found.setdefault("skip", mark.kwargs.get("reason") or (mark.args[0] if mark.args else "skip"))
        elif mark.name == "skipif" and _condition_holds(mark, text_holds=False):
            found.setdefault("skip", mark.kwargs.get("reason", "skipif"))
    xfails = [m for m in marks if m.name == "xfail" and _condition_holds(m, text_holds=True)]
    if xfails and xfails[0] in fvp_marks:
        found["fvp"] = str(xfails[0].kwargs.get("reason", ""))
        shadowed = [m for m in xfails[1:] if m not in fvp_marks]
        if shadowed:
            found["xfail_with_fvp"] = str(shadowed[0].kwargs.get("reason", ""))
    elif xfails:
        raises = xfails[0].kwargs.get("raises")
        found["xfail"] = str(xfails[0].kwargs.get("reason", ""))
        found["xfail_raises"] = None if raises is None else getattr(raises, "__name__", str(raises))
    return found


def _value_id(value, name: str, index: int) -> str:
    """pytest's id of one parameter value (_pytest/python.py IdMaker._idval_from_value): the value itself for a
    str, number, bool, None or enum, the __name__ of a class or function, else the argument name and index."""
    if isinstance(value, (str, int, float, bool, complex, enum.Enum)) or value is None:
        return str(value)
    if isinstance(getattr(value, "__name__", None), str):
        return value.__name__
    return f"{name}{index}"


def _unique(ids: list[str]) -> list[str]:
    """pytest's suffixes for repeated ids (IdMaker.make_unique_parameterset_ids): a0, a1; 1_0, 1_1."""
    counts, suffixes, unique = Counter(ids), Counter(), list(ids)
    for index, pid in enumerate(ids):
        if counts[pid] > 1:
            joiner = "_" if pid and pid[-1].isdigit() else ""
            while f"{pid}{joiner}{suffixes[pid]}" in ids:
                suffixes[pid] += 1
            unique[index] = f"{pid}{joiner}{suffixes[pid]}"
            suffixes[pid] += 1
    return unique


def _axis(mark) -> list:
    names = mark.args[0]
    names = [n.strip() for n in names.split(",")] if isinstance(names, str) else list(names)
    ids = mark.kwargs.get("ids")
    axis = []
    for index, value in enumerate(mark.args[1]):
        if hasattr(value, "values") and hasattr(value, "marks"):  # pytest.param(...)
            values, marks, pid = value.values, list(value.marks), value.id
        else:
            values, marks, pid = ((value,) if len(names) == 1 else tuple(value)), [], None
        if pid is None and ids and not callable(ids) and index < len(ids) and ids[index] is not None:
            pid = str(ids[index])
        if pid is None:
            pid = "-".join(_value_id(v, n, index) for v, n in zip(values, names))
        axis.append((pid, dict(zip(names, values)), marks))
    return [(pid, values, marks) for pid, (_, values, marks) in zip(_unique([a[0] for a in axis]), axis)]


def parametrizations(function) -> list[tuple[str, dict, list]]:
    """(id, keyword arguments, marks) over the product of the function's parametrize marks, in pytest's order."""
    axes = [_axis(m) for m in _marks(function) if m.name == "parametrize"]
    if not axes:
        return [("", {}, [])]
    found = []
    for combination in itertools.product(*axes):
        arguments, marks = {}, []
        for _, values, extra in combination:
            arguments.update(values)
            marks += extra
        found.append(("-".join(c[0] for c in combination), arguments, marks))
    return found


def seed() -> None:
    """What executorch's conftest does before collecting and before each test (TEST_SEED=0)."""
    import torch

    random.seed(SEED)
    torch.manual_seed(SEED)


def capture_file(relative: str, cap: int | None = None, census=None) -> list[ArmTestCase]:
    """The TOSA and Ethos-U cases of one test file (path relative to backends/arm/test), at most `cap`
    parametrizations per test function (the first ones), of the functions its `census` (census_file) reads.
    Raises whatever importing the file raises."""
    with call_scope.importing():  # the test suite's own modules, on the first file
        classes = check_test_suite()
        common = importlib.import_module(f"{TEST_PACKAGE}.common")
    seed()
    folder = Path(common.__file__).parent
    with _conftest_importable(folder), call_scope.importing():
        module = importlib.import_module(f"{TEST_PACKAGE}.{relative.removesuffix('.py').replace('/', '.')}")
    read = [f.name for f in census or census_file(Path(module.__file__), relative) if f.read]
    sink: list = []
    originals = {name: value for name, value in vars(module).items() if inspect.isclass(value)
                 and (issubclass(value, classes["BasePipeline"]) or issubclass(value, classes["ArmTester"]))}
    for name, value in originals.items():
        setattr(module, name, _recorder(value, sink, common))
    try:
        return _call_tests(module, relative, read, sink, cap, [getattr(common, name).mark for name in FVP_MARKS])
    finally:
        for name, value in originals.items():
            setattr(module, name, value)


def _call_tests(module, relative: str, read: list[str], sink: list, cap: int | None,
                fvp_marks: list) -> list[ArmTestCase]:
    cases = []
    for name in read:
        function = getattr(module, name, None)
        if not callable(function):
            continue
        function_marks = [m for m in _marks(function) if m.name != "parametrize"]
        for pid, arguments, marks in parametrizations(function)[:cap]:
            base = dict(file=relative, test=name, param=pid, **_mark_expectation(function_marks + marks, fvp_marks))
            start, error = len(sink), None
            seed()
            try:
                with tempfile.TemporaryDirectory(prefix="workbench-arm-test-") as folder, _working_folder(folder), \
                        _test_environment(f"{relative}::{name}" + (f"[{pid}]" if pid else "")):
                    function(**arguments, **_fixtures(function, folder))
            except (KeyboardInterrupt, SystemExit):
                raise
            except BaseException as exc:  # noqa: B036 - the test body failed (pytest.fail/skip raise BaseExceptions)
                if type(exc).__name__ == "Skipped":
                    base["skip"] = base.get("skip") or f"skipped in its body: {str(exc)[:200]}"
                error = f"{type(exc).__name__}: {str(exc).splitlines()[0][:200] if str(exc) else ''}"
            made = sink[start:]
            if not made:
                cases.append(ArmTestCase(pipeline="", capture_error=error or "the test built no pipeline", **base))
            for index, (kind, arguments_, log) in enumerate(made):
                param = f"{pid}#{index}" if len(made) > 1 else pid
                cases.append(fold(kind, arguments_, log, dict(base, param=param), error))
    return cases


@contextlib.contextmanager
def _conftest_importable(folder: Path):
    """As under pytest, whose rootdir conftest's folder is on sys.path, a test file may `import conftest`
    (ops/test_transpose_conv2d.py): the test folder is on sys.path while the file imports."""
    added = str(folder) not in sys.path
    if added:
        sys.path.insert(0, str(folder))
    try:
        yield
    finally:
        if added and str(folder) in sys.path:
            sys.path.remove(str(folder))


@contextlib.contextmanager
def _test_environment(test_id: str):
    """os.environ as pytest gives a test (PYTEST_CURRENT_TEST set), and as it was before the test afterwards: a
    test body that sets a variable (TOSA_TESTCASES_BASE_PATH) changes neither the tests after it nor the caller."""
    before = dict(os.environ)
    os.environ["PYTEST_CURRENT_TEST"] = f"backends/arm/test/{test_id} (call)"
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(before)


@contextlib.contextmanager
def _working_folder(folder: str):
    """A test that writes relative paths (misc/test_save_exported_model.py) writes into its temporary folder."""
    before = os.getcwd()
    os.chdir(folder)
    try:
        yield
    finally:
        os.chdir(before)


def _fixtures(function, folder: str) -> dict:
    """The pytest fixtures the capture can give: `tmp_path` (a new folder)."""
    return {"tmp_path": Path(folder)} if "tmp_path" in inspect.signature(function).parameters else {}
