"""What the workbench reproduces or relies on in torch's and executorch's code, pinned to the sha256 (first 16 hex
digits) of `inspect.getsource` it was checked against, per part. `source_differences(part)` compares the installed
sources with these; a speed lever's part whose source differs stays off (levers/), and the Arm test suite's
capture refuses to trust its cases blindly (arm_tests/capture.py warns).

- "memo": what the decomposition memo's fingerprint covers (levers/decomposition_cache.py);
- "override": what its override reproduces;
- "pass_construction": ExportPass.__init__, reproduced, and how the rest uses an interpreter's module;
- "pass_tracers": what builds a pass's interpreter and tracer, which pass_construction builds on first read;
- "tables": the decomposition tables memoised (levers/decomposition_tables.py): executorch's default table, the
  layout of torch's CustomDecompTable it copies, what builds the table, and the split it memoises with what that
  reads;
- "rng_placeholders": the rng tracker's reset and every function that reads what it sets (levers/rng_placeholders.py);
- "graph_recompile": the two fx functions a GraphModule recompile calls that levers/graph_recompile.py reproduces;
- "graph_code": the fx code generator whose inputs levers/graph_recompile.py remembers code by;
- "deferred_code": the GraphModule recompile that levers/deferred_code.py reproduces, what reads or copies a
  module's code, the builtins registration it wraps, and what it builds a graph from a record with;
- "histogram_search": the histogram observer's range search that levers/histogram_search.py reproduces;
- "provenance_sharing": the provenance record's constructor that levers/provenance_sharing.py reproduces, and every
  function that writes to a record or to the lists that hold them;
- "arm_test_suite": the constructors of executorch's test pipelines that arm_tests/capture.py reproduces, and the
  Ethos-U and VGF compile-spec functions of its common.py they call.
"""

from __future__ import annotations

import hashlib
import importlib
import inspect
from typing import Callable

PINNED_SOURCES = {
    "memo": {
        "torch._export.utils._collect_all_valid_cia_ops": "1d09a99ea79bd377",
        "torch._export.utils._collect_all_valid_cia_ops_for_namespace": "c26d5cd619830773",
        "torch._export.utils._materialize_cpp_cia_ops": "51472f6b4e2c3782",
        "torch._export.utils._is_preservable_cia_op": "00d78e92c3d6d9f6",
        "torch._export.utils._is_cia_op": "4588c37719fb8356",
        "torch._export.utils._check_valid_to_preserve": "a225772212a823aa",
        "torch._decomp._should_decompose_because_unsafe_op": "f106d112e31ab459",
        "torch._ops.OpOverloadPacket.op_overloads": "92f110a2bf6ca938",
    },
    "override": {
        "torch.export.exported_program._override_composite_implicit_decomp": "4422dc79d0792af7",
        "torch._ops.OperatorBase.py_impl": "8173bd205b783783",
        "torch._subclasses.fake_impls.register_op_impl": "405e93300718a185",
        "torch._export.utils._get_decomp_for_cia": "3ae30c72c7d7bce2",
        "torch._higher_order_ops.utils.autograd_not_implemented": "5cd89d9f69d7a773",
    },
    "pass_construction": {
        "executorch.exir.pass_base._ExportPassBase.__init__": "1afada6089433ecd",
        "executorch.exir.pass_base._ExportPassBase._fx": "d21aacbb5c107fba",
        "torch.fx.interpreter.Interpreter.__init__": "4b5513d8b713b8e6",
        "torch.fx.interpreter.Interpreter.call_function": "fb396d3a46b3242c",
        "torch.fx.interpreter.Interpreter.call_method": "e729261aa48179b6",
    },
    "pass_tracers": {
        "executorch.exir.pass_base._ExportPassBase.ExportTracer.__init__": "8155e8b82c4c174f",
        "torch.fx.experimental.proxy_tensor.PythonKeyTracer.__init__": "58082a381e161778",
        "torch.fx.experimental.proxy_tensor._init_proxy_trackers": "d54cf42886f67623",
        "torch.fx._symbolic_trace.Tracer.__init__": "7f4d462d05f6bc8f",
        "torch.fx.graph.Graph.__init__": "635de16c26e3497d",
        "torch.fx.graph.CodeGen.__init__": "0f2cd4b96c3b793c",
        "torch.fx.node.Node.__init__": "b533c3a8dfb156a8",
        "torch.nn.modules.module.Module.__init__": "eac5af286a7d471f",
    },
    "tables": {
        "executorch.exir.tracer._default_decomposition_table": "e59f18ff03bf06dc",
        "torch.export.exported_program.default_decompositions": "04bad0c5cb51e8c8",
        "torch.export.decomp_utils.CustomDecompTable.__init__": "b4531eec7cd0b420",
        "torch.export.decomp_utils.CustomDecompTable.copy": "d3cf90790ae23a1b",
        "torch._decomp._core_aten_decompositions_post_autograd": "006709b8dd4403f0",
        "torch._decomp.get_decompositions": "4bc9d7cac8a0a540",
        "torch.export.exported_program._split_decomp_table_to_cia_and_python_decomp": "a4ccae438dfcc5df",
        "torch.export.exported_program.ExportedProgram.run_decompositions": "c74cbc17d3874021",
        "torch._export.utils._is_preservable_cia_op": "00d78e92c3d6d9f6",
        "torch._export.utils._is_cia_op": "4588c37719fb8356",
    },
    "rng_placeholders": {
        "torch._decomp.decompositions_for_rng.PhiloxState.reset": "2c6900bfe0208586",
        "torch._decomp.decompositions_for_rng.PhiloxState.validate_state": "f2d1639420decd71",
        "torch._decomp.decompositions_for_rng.PhiloxState.get_state_as_tuple": "90253bbf825a8eb5",
        "torch._decomp.decompositions_for_rng.PhiloxState.get_state_as_tensor": "b2fc9e87e88935ae",
        "torch._decomp.decompositions_for_rng.PhiloxStateTracker.get_updated_fwd_offset": "5c37da00fca545f9",
        "torch._decomp.decompositions_for_rng.PhiloxStateTracker.get_updated_bwd_offset": "e14c1afcd2b768a7",
        "torch._functorch._aot_autograd.graph_capture_wrappers.create_functionalized_rng_ops_wrapper":
            "52a1379cc6f7ab74",
    },
    "graph_recompile": {
        "torch.fx.graph_module._exec_with_source": "3a1510761d07726e",
        "torch.fx.graph.CodeGen._call_method_with_signature_check": "73502d8b65f8fb09",
    },
    "graph_code": {
        "torch.fx.graph.Graph.python_code": "a18c22f227f05adf",
        "torch.fx.graph.Graph._python_code": "9ef86999a5e92dbb",
        "torch.fx.graph.CodeGen._gen_python_code": "9e367ac7bd7b936d",
        "torch.fx.graph.CodeGen.gen_fn_def": "5689e7d32265765a",
        "torch.fx.graph.CodeGen.generate_output": "7e1d82f5c52c85e4",
        "torch.fx.graph.CodeGen.additional_globals": "7baed852a10254dd",
        "torch.fx.graph._PyTreeCodeGen.gen_fn_def": "1f70b3be66c84cc4",
        "torch.fx.graph._PyTreeCodeGen.generate_output": "d8b31d315bc87a02",
        "torch.fx.graph._PyTreeCodeGen.gen_var_bindings": "c18b8a26a9f02e92",
    },
    "deferred_code": {
        "torch.fx.graph_module.GraphModule.recompile": "98adb1519c457ae4",
        "torch.fx.graph_module.GraphModule._recompile_submodules": "d8d048e4dfec55eb",
        "torch.fx.graph_module.GraphModule.__new__": "9b3b555879e4a3e7",
        "torch.fx.graph_module.GraphModule.__reduce__": "479fb053d55614ee",
        "torch.fx.graph_module.GraphModule.__reduce_package__": "4bec0f9856baf5d7",
        "torch.fx.graph_module.GraphModule.__deepcopy__": "895f13008e6b1972",
        "torch.fx.graph_module.GraphModule.__str__": "d116372d3dbd0adf",
        "torch.fx.graph._register_custom_builtin": "c22fd98fa919c51a",
        "torch.fx.graph.Graph.create_node": "7e8353cfe5d2ae96",
        "torch.fx.node.map_arg": "afc83b99bfcfaf27",
    },
    "histogram_search": {
        "torchao.quantization.pt2e.observer.HistogramObserver._non_linear_param_search": "9306a687ba73a304",
    },
    "provenance_sharing": {
        "torch.fx.traceback.NodeSource.__init__": "99395e7f40a4a049",
        "torch.fx.traceback.NodeSource.to_dict": "6bc84b5c6dca57a4",
        "torch.fx.traceback.NodeSource._from_dict": "b9bbe56d33b4667b",
        "torch.fx.passes.graph_transform_observer.GraphTransformObserver.get_node_creation_hook": "3f370ed7e0fa315d",
        "torch.fx.passes.graph_transform_observer.GraphTransformObserver.get_node_replace_hook": "f57ed6d99ca4f986",
    },
    # Not a lever's: what arm_tests/capture.py reproduces (how a test pipeline builds its profile or compile spec and
    # quantizes).
    "arm_test_suite": {
        "executorch.backends.arm.test.tester.test_pipeline.TosaPipelineFP.__init__": "a013cd655e7fadd5",
        "executorch.backends.arm.test.tester.test_pipeline.TosaPipelineINT.__init__": "8f291522591d2f9c",
        "executorch.backends.arm.test.tester.test_pipeline.OpNotSupportedPipeline.__init__": "87871125e0a4b715",
        "executorch.backends.arm.test.tester.arm_tester.ArmTester.__init__": "22b1ffe0b55975e8",
        "executorch.backends.arm.test.tester.test_pipeline.EthosUPipelineINTBase.__init__": "a03302483a1ad855",
        "executorch.backends.arm.test.tester.test_pipeline.EthosU55PipelineINT.__init__": "22ada0809868ca33",
        "executorch.backends.arm.test.tester.test_pipeline.EthosU85PipelineINT.__init__": "cf1d3d85c45a43d7",
        "executorch.backends.arm.test.common.get_u55_compile_spec": "452b5ea075aad86c",
        "executorch.backends.arm.test.common.get_u85_compile_spec": "09265e2a9daec153",
        "executorch.backends.arm.test.tester.test_pipeline.VgfPipeline.__init__": "223a61b020653268",
        "executorch.backends.arm.test.common.get_vgf_compile_spec": "99fd5031a0649343",
    },
}


def resolve(dotted: str):
    """The object at a dotted path of modules and attributes, e.g. torch._ops.OperatorBase.py_impl."""
    module_name, attributes = dotted, []
    while True:
        try:
            found = importlib.import_module(module_name)
            break
        except ImportError:
            module_name, _, attribute = module_name.rpartition(".")
            if not module_name:
                raise
            attributes.insert(0, attribute)
    for attribute in attributes:
        found = getattr(found, attribute)
    return found


def source_differences(part: str, read: Callable = resolve) -> list[str]:
    """Each function of PINNED_SOURCES[part] whose source is not the one pinned (empty: all match); `read(dotted)`
    gives the object to check (the one in place, unless the caller knows better)."""
    wrong = []
    for dotted, digest in PINNED_SOURCES[part].items():
        try:
            found = hashlib.sha256(inspect.getsource(read(dotted)).encode()).hexdigest()[:16]
        except (AttributeError, ImportError, OSError, TypeError) as exc:
            wrong.append(f"{dotted}: {type(exc).__name__}: {exc}")
            continue
        if found != digest:
            wrong.append(f"{dotted}: not the source this was checked against ({found}, expected {digest})")
    return wrong
