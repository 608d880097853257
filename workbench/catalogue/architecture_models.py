"""The architectures' modules (catalogue/architectures.py declares them): torch is imported here, when one is
built, not when the catalogue is read."""

import math

import torch
import torch.nn.functional as F

from ._common import ARCHITECTURE_SEED as SEED
from ._common import DIM, HEADS, MAX_LEN, VOCAB


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
