"""Small real architectures, int64-heavy where real models are: whole nn.Modules, seeded, no downloads.

Each entry builds its model through `OpEntry.make_module(dtype)`; weights (and the decoder's KV cache) come
from a torch.Generator with a fixed seed, so the same dtype always gives the same model. Sizes are small so a
case lowers in seconds. The sequence models take int64 token ids (the case dtype; weights are float32); the CNN
is float32, or qint8 (the float model quantized by the Arm quantizer). No architecture declares int32, so
`derive_candidates` (which observes every int32 entry) stays a list of single operators.
"""

from .entry import Operand, OpEntry
from ._common import DIM, MAX_LEN, STEPS, VOCAB


def _builder(class_name: str):
    def make(dtype: str):
        from . import architecture_models  # torch, imported when a model is built

        return getattr(architecture_models, class_name)()

    return make


# What the partitioner sees under TOSA-1.0+INT, TOSA-1.0+FP and TOSA-1.1+INT+int64, quantize/dequantize left out
# (the Arm partitioner keeps linear, and for the decoder softmax, undecomposed for FP graphs; INT graphs have
# addmm / mm instead of linear).
DECODER_OPS = ("aten.embedding.default", "aten.arange.start_step", "aten.add.Tensor", "aten.index_put.default",
               "aten.select_copy.int", "aten.unsqueeze_copy.default", "aten.le.Tensor", "aten.linear.default",
               "aten.mm.default", "aten.addmm.default", "aten.view_copy.default", "aten.permute_copy.default",
               "aten.expand_copy.default", "aten.bmm.default", "aten.div.Tensor", "aten.full_like.default",
               "aten.where.self", "aten._softmax.default", "dim_order_ops._clone_dim_order.default",
               "aten.relu.default", "aten.argmax.default")
CNN_OPS = ("aten.convolution.default", "aten.relu.default", "aten.max_pool2d_with_indices.default",
           "aten.view_copy.default", "aten.linear.default", "aten.permute_copy.default", "aten.addmm.default",
           "aten.argmax.default")
LSTM_OPS = ("aten.embedding.default", "aten.linear.default", "aten.permute_copy.default", "aten.mm.default",
            "aten.addmm.default", "aten.add.Tensor", "aten.split_with_sizes_copy.default", "aten.sigmoid.default",
            "aten.tanh.default", "aten.mul.Tensor", "aten.argmax.default")

TOKENS = Operand((1, STEPS), role="index", high=VOCAB)  # int64 token ids (the case dtype)
STATE = Operand((1, DIM), dtype="float32", role="small")

ENTRIES = [
    OpEntry("decoder_block", "architecture", DECODER_OPS, None,
            (TOKENS, Operand((1,), role="index", dtype="int64", high=MAX_LEN - STEPS + 1)), ("int64",),
            "a decoder layer over a KV cache (vocab 32, dim 16, 2 heads, cache of 8): int64 positions from "
            "start + arange, index_copy / index_put into the cache buffers, a causal mask from comparisons, "
            "attention, an MLP and a greedy argmax (index_copy reaches the edge program as index_put). "
            "Under TOSA-1.1+INT+int64, stock and ext-int64-allowlist delegate the same six nodes in one "
            "delegate: the int64 position arithmetic (two arange.start_step, the add start + arange, two "
            "unsqueeze_copy) and the mask's le.Tensor, all int64 of uniform width and all on the derived list "
            "(their TOSA operators have 64-bit rows), so the allowlist passes what stock passes; every float "
            "node stays on CPU (not quantized), as do the embedding (int64 indices, +int64 or not) and argmax "
            "(TOSA ARGMAX is int32); only the index_put nodes' reason differs (the allowlist keeps executorch's "
            "int64 check for them). Lowering then fails in both on the int64 ADD. Under TOSA-1.1+FP+int64 the "
            "allowlist does differ: it keeps the two index_put (KV-cache writes at int64 positions) on CPU, "
            "which stock delegates with the attention (3 -> 5 CPU islands, still 2 delegates); both fail on "
            "an int64 view_copy",
            make_module=_builder("DecoderBlock")),
    OpEntry("small_cnn", "architecture", CNN_OPS, None, (Operand((1, 1, 8, 8)),), ("float32", "qint8"),
            "conv(1->4)-relu-maxpool, conv(4->8)-relu-maxpool, linear(32->10) on an 8x8 image; logits and the "
            "argmax class (int64). qint8 under INT profiles: one delegate, the argmax alone on CPU (TOSA ARGMAX "
            "is int32), no int64 crossing; float32 the same under FP profiles",
            make_module=_builder("SmallCNN")),
    OpEntry("lstm_step", "architecture", LSTM_OPS, None, (Operand((1,), role="index", high=VOCAB), STATE, STATE),
            ("int64",),
            "one step of an LSTM language model (vocab 32, hidden 16): embedding of the token id, the cell as "
            "linear + sigmoid/tanh on the given h, c, and the next token by argmax. Under FP profiles the cell "
            "is one delegate; the embedding (int64 indices) and the argmax stay on CPU, so no int64 tensor "
            "crosses a boundary",
            make_module=_builder("LSTMStep")),
]
