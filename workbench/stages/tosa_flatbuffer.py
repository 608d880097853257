"""Read a delegate's TOSA flatbuffer: its operators with their tensors' dtypes and shapes."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class TosaTensorInfo:
    name: str
    dtype: str
    shape: tuple[int, ...]


@dataclass(frozen=True)
class TosaOpInfo:
    op: str
    inputs: tuple[TosaTensorInfo, ...]
    outputs: tuple[TosaTensorInfo, ...]

    def to_dict(self) -> dict:
        """JSON-shaped (lists, not tuples), so a result reads back from JSON equal to itself."""

        def tensor(t: TosaTensorInfo) -> dict:
            return {"name": t.name, "dtype": t.dtype, "shape": list(t.shape)}

        return {"op": self.op, "inputs": [tensor(t) for t in self.inputs], "outputs": [tensor(t) for t in self.outputs]}


def _enum_names(enum_class) -> dict[int, str]:
    return {v: k for k, v in vars(enum_class).items() if not k.startswith("_") and isinstance(v, int)}


def read_operators(flatbuffer: bytes, main_block_only: bool = False) -> list[TosaOpInfo]:
    """Every operator of every block (or of the main block only), in serialization order."""
    from tosa.DType import DType
    from tosa.Op import Op
    from tosa.TosaGraph import TosaGraph

    op_names, dtype_names = _enum_names(Op), _enum_names(DType)
    graph = TosaGraph.GetRootAs(bytes(flatbuffer), 0)
    operators: list[TosaOpInfo] = []
    for r in range(1 if main_block_only else graph.RegionsLength()):
        region = graph.Regions(r)
        for b in range(1 if main_block_only else region.BlocksLength()):
            block = region.Blocks(b)
            tensors = {}
            for t in range(block.TensorsLength()):
                tensor = block.Tensors(t)
                name = tensor.Name().decode()
                shape = tuple(tensor.Shape(i) for i in range(tensor.ShapeLength()))
                tensors[name] = TosaTensorInfo(name, dtype_names.get(tensor.Type(), str(tensor.Type())), shape)
            # Shape values (TOSA 1.1 CONST_SHAPE and friends) are listed apart from data tensors.
            for t in range(block.ShapesLength()):
                shape_value = block.Shapes(t)
                name = shape_value.Name().decode()
                tensors[name] = TosaTensorInfo(name, "SHAPE", (shape_value.Rank(),))

            def lookup(name: bytes) -> TosaTensorInfo:
                key = name.decode()
                return tensors.get(key, TosaTensorInfo(key, "?", ()))

            for o in range(block.OperatorsLength()):
                op = block.Operators(o)
                operators.append(
                    TosaOpInfo(
                        op=op_names.get(op.Op(), str(op.Op())),
                        inputs=tuple(lookup(op.Inputs(i)) for i in range(op.InputsLength())),
                        outputs=tuple(lookup(op.Outputs(i)) for i in range(op.OutputsLength())),
                    )
                )
    return operators


def input_names(flatbuffer: bytes) -> list[str]:
    """Names of the main block's input tensors, in the order the reference model expects its inputs."""
    from tosa.TosaGraph import TosaGraph

    block = TosaGraph.GetRootAs(bytes(flatbuffer), 0).Regions(0).Blocks(0)
    return [block.Inputs(i).decode() for i in range(block.InputsLength())]


def output_names(flatbuffer: bytes) -> list[str]:
    """Names of the main block's output tensors, in the order the reference model returns its outputs."""
    from tosa.TosaGraph import TosaGraph

    block = TosaGraph.GetRootAs(bytes(flatbuffer), 0).Regions(0).Blocks(0)
    return [block.Outputs(i).decode() for i in range(block.OutputsLength())]
