"""executorch's own Arm tests (executorch/backends/arm/test/) read as cases: the one module that touches its test suite.

The test suite is executorch internals as much as a private attribute is: its pipeline classes
(`tester/test_pipeline.py`: TosaPipelineFP, TosaPipelineINT, OpNotSupportedPipeline, EthosU55PipelineINT,
EthosU85PipelineINT, VgfPipeline), `tester/arm_tester.py`'s ArmTester, `common.parametrize`, the compile specs of
`common.get_u55_compile_spec` / `get_u85_compile_spec` / `get_vgf_compile_spec`, the FVP marks
`common.XfailIfNoCorstone300` / `320` and the model converter's `common.SkipIfNoModelConverter` are read here and
nowhere else. `check_test_suite()` refuses with a StackError
naming what is missing when a class or a constructor parameter read here is gone, and warns (StackWarning) when a
constructor's source is no longer the one this module reproduces (pinned_sources.PINNED_SOURCES["arm_test_suite"]);
`workbench doctor` shows the same check as the hook `arm_test_suite` (stack/internals.py).

How a test file is read, without editing it: the module is imported from the process's Arm backend (installed, or
a checkout's: stack/arm_backend.py), seeded as executorch's conftest seeds (random and torch at 0, before the
import and before every test call); the pipeline classes and ArmTester are replaced *in that module's namespace
only* by recorders, and every test function that builds a TOSA, Ethos-U or VGF pipeline, or whose name says it
tests a TOSA or Ethos-U one (census.py reads that from the source), is called once per parametrization; a test
asking for pytest's `tmp_path` gets a new temporary folder. A recorder keeps the constructor's arguments (the
profile string built exactly as the real class builds it; for an Ethos-U or VGF pipeline the compile spec its
constructor builds, from common.py) and every later call on the pipeline (pop_stage, change_args, quantizer
settings, ...); `run()` does nothing. The originals are put back afterwards.

An Ethos-U pipeline's last stage runs the program on Arm's Corstone FVP, and its tests carry `XfailIfNoCorstone300`
(or `320`): an xfail, when the FVP is not installed, with `raises=FileNotFoundError`, which the run stage raises.
pytest applies the first xfail mark whose condition holds, the function's before its parametrization's
(_pytest/skipping.py evaluate_xfail_marks; _pytest/python.py Function: own_markers, then callspec.marks), so
without the FVP that mark shadows a parametrization's own xfail and the test passes (xfails) exactly when every
stage before the run stage passes; any other failure fails it. The capture reads it so: an effective FVP mark is
no xfail but `fvp` (the stage the workbench stops before), and the parametrization's shadowed xfail is kept as
`xfail_with_fvp`.

A VGF test carries `SkipIfNoModelConverter`, a skipif whose condition common.py computed on import from this
process's PATH; the workbench runs the ML SDK's converter from its package (stack/vgf/tools.py), so the mark holds
only when the workbench has none. Its last stage runs the program on the Vulkan runtime through executorch's
executor_runner built for VKML (runner_utils.run_vkml_emulation_layer), which the wheel does not ship: the workbench
runs each delegate's .vgf with the ML SDK's scenario runner instead (stages/vgf_run.py).
"""

from __future__ import annotations

import contextlib
import importlib
import inspect
import os
import random
import sys
import tempfile
import warnings
from pathlib import Path
from types import SimpleNamespace

from ...core.errors import StackError, StackWarning
from .. import call_scope
from ..pinned_sources import source_differences
from ..vgf import tools as vgf_tools
from .census import census_file
from .marks import mark_expectation, marks_of, parametrizations
from .record import ArmTestCase, fold

TEST_PACKAGE = "executorch.backends.arm.test"
SEED = 0  # executorch's conftest: TEST_SEED defaults to 0
# Ethos-U pipeline -> the common.py function its constructor builds its compile spec with (always at its defaults)
ETHOS_U_SPECS = {"EthosU55PipelineINT": "get_u55_compile_spec", "EthosU85PipelineINT": "get_u85_compile_spec"}
FVP_MARKS = ("XfailIfNoCorstone300", "XfailIfNoCorstone320")
CONVERTER_MARK = "SkipIfNoModelConverter"  # a VGF test's skipif: no ML SDK model converter on PATH
VGF = "VgfPipeline"
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
    VGF: ("module", "test_data", "exir_op", "run_on_vulkan_runtime", "vgf_compiler_flags", "quantize",
          "symmetric_io_quantization", "per_channel_quantization", "atol", "rtol", "qtol", "dynamic_shapes",
          "transform_passes", "tosa_version", "tosa_extensions", "tosa_spec", "fold_quantize",
          "preserve_io_quantization", "n_expected_delegates"),
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
    missing += [f"common.{name} is missing" for name in ("parametrize", "get_vgf_compile_spec", *ETHOS_U_SPECS.values())
                if not callable(getattr(common, name, None))]
    missing += [f"common.{name} is missing or not a pytest mark" for name in (*FVP_MARKS, CONVERTER_MARK)
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


class _Stages:
    """Stands for pipeline._stages: `[name]` is the stage find_pos(name) named, whose `args[0]` (the stage object a
    test sets attributes on, as calibration_samples) logs each assignment as "stages[NAME].ATTRIBUTE="."""

    def __init__(self, log: list):
        self._log = log

    def __getitem__(self, name):
        return SimpleNamespace(args=(_Calls(self._log, f"stages[{name}]"),))


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
    Ethos-U or VGF pipeline's record holds the compile spec its constructor builds (`compile_spec`)."""
    signature = inspect.signature(real.__init__)
    kind = real.__name__
    build_spec = None  # the compile spec the class builds from its arguments
    if kind in ETHOS_U_SPECS:  # built with no argument that changes the target
        build_spec = lambda a: getattr(common, ETHOS_U_SPECS[kind])()  # noqa: E731
    elif kind == VGF:
        build_spec = lambda a: _vgf_compile_spec(common, a)  # noqa: E731

    class Recorder(metaclass=_RecordedClass):
        def __class_getitem__(cls, item):  # TosaPipelineFP[input_t](...)
            return cls

        def __init__(self, *args, **kwargs):
            bound = signature.bind(None, *args, **kwargs)
            bound.apply_defaults()
            arguments = dict(bound.arguments)
            arguments.pop(next(iter(signature.parameters)), None)  # self
            if build_spec is not None:
                arguments["compile_spec"] = build_spec(arguments)
            self._log: list = []
            self.tester = _Calls(self._log, "tester")
            self.quantizer = _Calls(self._log, "quantizer")
            sink.append((kind, arguments, self._log))

        def run(self):
            return None

        def find_pos(self, name):  # its stage's name stands for the position `_stages` is indexed by
            self._log.append(("find_pos", (name,), {}))
            return name

        @property
        def _stages(self):  # test_cond.py: pipeline._stages[find_pos("quantize")].args[0].calibration_samples = ...
            return _Stages(self._log)

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


def _vgf_compile_spec(common, a: dict):
    """The VgfCompileSpec VgfPipeline.__init__ builds (tester/test_pipeline.py): its TOSA specification from
    tosa_spec, else tosa_version (default: VgfCompileSpec()'s) with tosa_extensions (default: bf16 when the
    version says FP), then common.get_vgf_compile_spec with the converter flags; the artifact folder and debug mode
    are left out (they change what is written, not what is compiled)."""
    from executorch.backends.arm.tosa import TosaSpecification
    from executorch.backends.arm.vgf import VgfCompileSpec

    spec = a.get("tosa_spec")
    if spec is None:
        version = a.get("tosa_version") or str(VgfCompileSpec().tosa_spec)
        extensions = a.get("tosa_extensions")
        if extensions is None:
            extensions = ["bf16"] if "FP" in version else []
        spec = version + "".join(f"+{e}" for e in extensions)
    spec = TosaSpecification.create_from_string(spec) if isinstance(spec, str) else spec
    return common.get_vgf_compile_spec(spec, compiler_flags=a.get("vgf_compiler_flags"),
                                       preserve_io_quantization=bool(a.get("preserve_io_quantization")))


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
    # the workbench runs its own ML SDK model converter (stack/vgf/tools.py), on PATH or not
    decided = [(common.SkipIfNoModelConverter.mark, vgf_tools.model_converter() is None)]
    try:
        return _call_tests(module, relative, read, sink, cap, [getattr(common, name).mark for name in FVP_MARKS],
                           decided)
    finally:
        for name, value in originals.items():
            setattr(module, name, value)


def _call_tests(module, relative: str, read: list[str], sink: list, cap: int | None,
                fvp_marks: list, decided: list) -> list[ArmTestCase]:
    cases = []
    for name in read:
        function = getattr(module, name, None)
        if not callable(function):
            continue
        function_marks = [m for m in marks_of(function) if m.name != "parametrize"]
        for pid, arguments, marks in parametrizations(function)[:cap]:
            expectation = mark_expectation(function_marks + marks, fvp_marks, decided)
            base = dict(file=relative, test=name, param=pid, **expectation)
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
    """os.environ as pytest gives a test (PYTEST_CURRENT_TEST set; executorch's MODEL_CONVERTER_PATH naming the
    workbench's model converter unless set), and as it was before the test afterwards: a test body that sets a
    variable (TOSA_TESTCASES_BASE_PATH) changes neither the tests after it nor the caller."""
    before = dict(os.environ)
    os.environ["PYTEST_CURRENT_TEST"] = f"backends/arm/test/{test_id} (call)"
    converter = vgf_tools.model_converter()  # as for the SkipIfNoModelConverter mark: the workbench's converter
    if converter is not None and "MODEL_CONVERTER_PATH" not in os.environ:
        os.environ["MODEL_CONVERTER_PATH"] = str(converter)
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
