"""A user's process is theirs: outside a workbench call, torch and executorch are exactly as the user imported them
(stack/call_scope.py), and inside one the speed levers, quiet warnings and loggers are in place."""

import gc
import json
import subprocess
import sys
import warnings

import pytest

# Imports torch and executorch as a user would, then checks, after `import workbench` and after each public call
# returns, that every function and method of the torch and executorch modules loaded before is the very object it
# was, that no class of theirs gained an attribute, and that the collector's freeze count and state, the warning
# filters and the levels of torch's and executorch's loggers are unchanged.
UNTOUCHED = r'''
import gc, importlib, json, logging, sys, types, warnings

import torch
import executorch.exir
for name in ("executorch.backends.arm.tosa.partitioner", "executorch.backends.arm.tosa.compile_spec",
             "executorch.backends.arm.quantizer", "executorch.backends.arm._passes", "executorch.exir.pass_base",
             "torch._export.utils", "torch.export.exported_program", "torch.export.decomp_utils",
             "torch._decomp.decompositions_for_rng", "torch.fx.graph_module", "torch.fx.graph",
             "tosa_reference_model"):
    importlib.import_module(name)

KINDS = (types.FunctionType, types.BuiltinFunctionType, classmethod, staticmethod, property, type)


def ours(name):
    return name.split(".")[0] in ("torch", "executorch")


def snapshot():
    with warnings.catch_warnings():  # some of torch's deprecated objects warn when their type is asked
        warnings.simplefilter("ignore")
        return _snapshot()


def _snapshot():
    found = {}
    for name, module in list(sys.modules.items()):
        if module is None or not ours(name):
            continue
        for attribute, value in list(vars(module).items()):
            if isinstance(value, KINDS):
                found[name, attribute] = value
            if isinstance(value, type) and getattr(value, "__module__", None) == name:
                for member, inner in list(vars(value).items()):
                    found[name, attribute, member] = inner if isinstance(inner, KINDS) or hasattr(
                        type(inner), "__get__") else "data"
    return found


def state():
    loggers = {name: logger.level for name, logger in logging.root.manager.loggerDict.items()
               if ours(name) and isinstance(logger, logging.Logger)}
    return {"freeze_count": gc.get_freeze_count(), "collecting": gc.isenabled(), "filters": list(warnings.filters),
            "filters_object": id(warnings.filters), "loggers": loggers}


before, settings = snapshot(), state()
report = {}


def check(after_what):
    now = snapshot()
    replaced = sorted(".".join(key) for key, value in before.items() if key in now and now[key] is not value)
    added = sorted(".".join(key) for key in now if len(key) == 3 and key not in before and key[:2] in
                   {k[:2] for k in before} and now[key] != "data")
    current = state()
    changed = [name for name in ("freeze_count", "collecting", "filters", "filters_object")
               if current[name] != settings[name]]
    changed += [f"logger {name}: {level} -> {current['loggers'][name]}" for name, level in settings["loggers"].items()
                if current["loggers"].get(name, level) != level]
    report[after_what] = {"replaced": replaced, "added": added, "changed": changed}


import workbench
check("import workbench")
result = workbench.run_case("add", "int32", "TOSA-1.0+INT")
assert result.outcome.value == "delegated", result
check("run_case")


class Twice(torch.nn.Module):
    def forward(self, x):
        return x * 2


assert workbench.run_model(Twice(), (torch.ones(3),), "TOSA-1.0+FP").numerics.value == "match"
check("run_model")
table = workbench.sweep(workbench.Matrix(["add", "neg"], ["int32"], ["TOSA-1.0+INT"]), cache=False, workers=2,
                        progress=False)
assert len(table) == 2, table
check("sweep, 2 workers")
failed = workbench.run_case("cumsum", "int64", "TOSA-1.1+INT+int64")
assert workbench.find_culprits(failed).culprits, failed
check("find_culprits")
from workbench.ui import Explorer

explorer = Explorer("add", "float32", "TOSA-1.0+FP", threaded=False)
assert explorer.run().outcome.value == "delegated"
check("explorer Run")
print(json.dumps(report))
'''


@pytest.mark.slow
def test_torch_and_executorch_are_as_the_user_had_them_after_every_public_call():
    done = subprocess.run([sys.executable, "-c", UNTOUCHED], capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-4000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert list(report) == ["import workbench", "run_case", "run_model", "sweep, 2 workers", "find_culprits",
                            "explorer Run"]
    for after_what, found in report.items():
        assert found == {"replaced": [], "added": [], "changed": []}, after_what


def test_inside_a_call_the_levers_and_quiet_warnings_are_in_place_and_undone_after():
    from workbench.stack import call_scope, levers, loader

    loader.arm()
    from executorch.exir.pass_base import _ExportPassBase

    own_init, filters = _ExportPassBase.__init__, warnings.filters
    with call_scope.workbench_call():
        with call_scope.workbench_call():  # nested calls share the outermost's state
            assert _ExportPassBase.__init__ is not own_init and levers.SPEED.installed
        assert _ExportPassBase.__init__ is not own_init
        assert warnings.filters is not filters
        with warnings.catch_warnings(record=True) as caught:
            warnings.warn("`torch.jit.script_method` is deprecated. Please switch", DeprecationWarning)  # chatter
            warnings.warn("a deprecation of something the workbench touches", DeprecationWarning)
        assert [str(w.message) for w in caught] == ["a deprecation of something the workbench touches"]
    assert _ExportPassBase.__init__ is own_init and not levers.SPEED.installed
    assert warnings.filters is filters


def test_an_import_of_the_stack_pauses_the_collector_and_leaves_it_as_it_was():
    from workbench.stack import call_scope

    for enabled in (True, False):
        (gc.enable if enabled else gc.disable)()
        try:
            with pytest.raises(ImportError), call_scope.importing():
                assert not gc.isenabled()
                import a_module_that_is_not_there  # noqa: F401
            assert gc.isenabled() is enabled
        finally:
            gc.enable()
    assert gc.get_freeze_count() == 0  # only the command's own process freezes what an import made


def test_the_commands_own_process_freezes_what_an_import_of_the_stack_made(tmp_path):
    """`workbench` (cli.command_line) marks its process as its own: there an import of the stack ends frozen, so the
    collector's full passes skip it; the Python API never marks a process (the probe above checks its calls)."""
    script = ("import gc, json\n"
              "from workbench.stack import call_scope\n"
              "with call_scope.importing():\n"
              "    import decimal\n"
              "before = gc.get_freeze_count()\n"
              "call_scope.command_process()\n"
              "with call_scope.importing():\n"
              "    import fractions, statistics\n"
              "print(json.dumps([before, gc.get_freeze_count(), gc.isenabled()]))\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    before, after, enabled = json.loads(done.stdout)
    assert before == 0 and after > 1000 and enabled


def test_a_call_that_raises_undoes_what_it_changed():
    from workbench.stack import call_scope, levers, loader

    loader.arm()
    from executorch.exir.pass_base import _ExportPassBase

    own_init = _ExportPassBase.__init__

    @call_scope.scoped
    def fails():
        assert _ExportPassBase.__init__ is not own_init
        raise RuntimeError("a failing call")

    with pytest.raises(RuntimeError, match="a failing call"):
        fails()
    assert _ExportPassBase.__init__ is own_init and not levers.SPEED.installed and not call_scope.in_call()


def test_the_undo_stack_puts_an_inherited_method_back_as_inherited_and_a_new_variable_back_to_absent(monkeypatch):
    import logging
    import os

    from workbench.stack.patches import Patches

    class Base:
        def speak(self):
            return "base"

    class Child(Base):
        pass

    monkeypatch.delenv("WORKBENCH_UNDO_TEST", raising=False)
    patches = Patches()
    patches.setattr(Child, "speak", lambda self: "patched")
    patches.setattr(Child, "speak", lambda self: "patched twice")
    patches.setenv("WORKBENCH_UNDO_TEST", "1")
    patches.setlevel("workbench.undo_test", logging.ERROR)
    assert Child().speak() == "patched twice" and patches.original(Child, "speak") is Base.speak
    patches.undo()
    assert "speak" not in vars(Child) and Child().speak() == "base"
    assert "WORKBENCH_UNDO_TEST" not in os.environ and logging.getLogger("workbench.undo_test").level == logging.NOTSET
