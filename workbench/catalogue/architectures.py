"""Small real architectures, int64-heavy where real models are: whole nn.Modules, seeded, no downloads.

Each entry builds its model through `OpEntry.make_module(dtype)`; weights (and the decoder's KV cache) come
from a torch.Generator with a fixed seed, so the same dtype always gives the same model. Sizes are small so a
case lowers in seconds. The sequence models take int64 token ids (the case dtype; weights are float32); the CNN
is float32, or qint8 (the float model quantized by the Arm quantizer). No architecture declares int32, so
`derive_candidates` (which observes every int32 entry) stays a list of single operators.
"""

import math

import torch
import torch.nn.functional as F

from .entry import Operand, OpEntry

SEED = 1234
VOCAB, DIM, HEADS, MAX_LEN, STEPS = 32, 16, 2, 8, 3


def _seeded(module: torch.nn.Module, seed: int = SEED) -> torch.nn.Module:
    """Every parameter drawn anew from one seeded generator: N(0, 1/fan_in) weights, small biases."""
    gen = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, param in module.named_parameters():
            fan_in = param.shape[1:].numel() if param.dim() > 1 else param.shape[0]
            scale = 1.0 / math.sqrt(fan_in) if param.dim() > 1 else 0.1
            param.copy_(torch.randn(param.shape, generator=gen) * scale)
    return module.eval()


class DecoderBlock(torch.nn.Module):
    """One pre-norm-free decoder layer over a KV cache: embed the new tokens, place them at positions
    `start + arange(T)`, write their keys and values into the cache (index_copy / index_put with int64
    positions), attend causally (the mask compares key and query positions) and pick the next token greedily."""

    def __init__(self):
        super().__init__()
        self.embed = torch.nn.Embedding(VOCAB, DIM)
        self.q, self.k, self.v, self.o = (torch.nn.Linear(DIM, DIM, bias=False) for _ in range(4))
        self.up, self.down = torch.nn.Linear(DIM, 2 * DIM), torch.nn.Linear(2 * DIM, DIM)
        self.head = torch.nn.Linear(DIM, VOCAB, bias=False)
        gen = torch.Generator().manual_seed(SEED + 1)
        self.register_buffer("k_cache", torch.randn(1, MAX_LEN, DIM, generator=gen))
        self.register_buffer("v_cache", torch.randn(1, MAX_LEN, DIM, generator=gen))
        _seeded(self)

    def _heads(self, t):
        return t.view(1, t.shape[1], HEADS, DIM // HEADS).transpose(1, 2)

    def forward(self, tokens, start):
        steps = tokens.shape[1]
        positions = start + torch.arange(steps)  # int64 positions of the new tokens
        x = self.embed(tokens)
        keys = self.k_cache.index_copy(1, positions, self.k(x))
        values = self.v_cache[0].index_put((positions,), self.v(x)[0]).unsqueeze(0)
        allowed = torch.arange(MAX_LEN).unsqueeze(0) <= positions.unsqueeze(1)  # causal mask, (T, MAX_LEN)
        scores = self._heads(self.q(x)) @ self._heads(keys).transpose(-1, -2) / math.sqrt(DIM // HEADS)
        scores = torch.where(allowed, scores, torch.full_like(scores, -1e4))
        attended = (scores.softmax(-1) @ self._heads(values)).transpose(1, 2).reshape(1, steps, DIM)
        x = x + self.o(attended)
        x = x + self.down(torch.relu(self.up(x)))
        logits = self.head(x[:, -1])
        return logits, logits.argmax(-1)


class SmallCNN(torch.nn.Module):
    """conv-relu-pool twice, then a linear classifier; returns the logits and the predicted class (int64)."""

    def __init__(self):
        super().__init__()
        self.conv1 = torch.nn.Conv2d(1, 4, 3, padding=1)
        self.conv2 = torch.nn.Conv2d(4, 8, 3, padding=1)
        self.fc = torch.nn.Linear(8 * 2 * 2, 10)
        _seeded(self)

    def forward(self, image):
        x = F.max_pool2d(torch.relu(self.conv1(image)), 2)
        x = F.max_pool2d(torch.relu(self.conv2(x)), 2)
        logits = self.fc(x.flatten(1))
        return logits, logits.argmax(-1)


class LSTMStep(torch.nn.Module):
    """One step of a character-level LSTM language model: embed the token, one LSTM cell step on the given
    (h, c) written with linear, sigmoid and tanh, then the next token greedily."""

    def __init__(self):
        super().__init__()
        self.embed = torch.nn.Embedding(VOCAB, DIM)
        self.gates_x = torch.nn.Linear(DIM, 4 * DIM)
        self.gates_h = torch.nn.Linear(DIM, 4 * DIM, bias=False)
        self.head = torch.nn.Linear(DIM, VOCAB)
        _seeded(self)

    def forward(self, token, h, c):
        gates = self.gates_x(self.embed(token)) + self.gates_h(h)
        i, f, g, o = gates.chunk(4, dim=-1)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        h = torch.sigmoid(o) * torch.tanh(c)
        logits = self.head(h)
        return logits.argmax(-1), h, c


def _builder(cls):
    def make(dtype: str) -> torch.nn.Module:
        return cls()

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
            make_module=_builder(DecoderBlock)),
    OpEntry("small_cnn", "architecture", CNN_OPS, None, (Operand((1, 1, 8, 8)),), ("float32", "qint8"),
            "conv(1->4)-relu-maxpool, conv(4->8)-relu-maxpool, linear(32->10) on an 8x8 image; logits and the "
            "argmax class (int64). qint8 under INT profiles: one delegate, the argmax alone on CPU (TOSA ARGMAX "
            "is int32), no int64 crossing; float32 the same under FP profiles",
            make_module=_builder(SmallCNN)),
    OpEntry("lstm_step", "architecture", LSTM_OPS, None, (Operand((1,), role="index", high=VOCAB), STATE, STATE),
            ("int64",),
            "one step of an LSTM language model (vocab 32, hidden 16): embedding of the token id, the cell as "
            "linear + sigmoid/tanh on the given h, c, and the next token by argmax. Under FP profiles the cell "
            "is one delegate; the embedding (int64 indices) and the argmax stay on CPU, so no int64 tensor "
            "crosses a boundary",
            make_module=_builder(LSTMStep)),
]
