"""The histogram observer's range search with its cumulative sums read as Python floats.

Why
---
Every activation the Arm quantizer observes has a `HistogramObserver` (torchao.quantization.pt2e.observer), and
converting a calibrated model calls its `_non_linear_param_search` once per observer. That search walks the
quantile bounds in steps of 1e-5 and, at every step, compares one element of the histogram's cumulative sum with
the next bound: thousands of 0-dim tensor reads and tensor-scalar comparisons per observer, most of a quantized
case's quantization time.

What changes, and why results stay identical
--------------------------------------------
The search is the same loop over the same Python floats, but the cumulative sum is read once into a list (`tolist()`
gives each float32 element exactly) and each bound is rounded to float32 before it is compared, as torch compares a
float32 tensor with a Python float (in float32). Most steps change nothing but beta: the lower bound stays below the
first bin's sum and the upper one above the last bin's, so neither range end moves and the loop goes on. Those quiet
steps are taken a block at a time (`_beta_after_quiet_steps`): beta lowered step by step by
`numpy.subtract.accumulate` (one float64 subtraction after another, as the loop subtracts), each upper bound rounded
to float32 by numpy's cast (to nearest, as the loop's round trip through a C float), up to the first step at which
the last bin leaves the range or the loop would end; that step runs as the loop runs it. The quantization error of
each candidate range is computed by the observer's own `_compute_quantization_error`, and the range it returns is
computed as torchao computes it. A histogram that is not float32, or whose total is not a number or near float32's
largest value (where a bound could round to an infinity), runs torchao's own search. The search is pinned
(pinned_sources.PINNED_SOURCES["histogram_search"]); on any other source torchao's own search stays, a warning says
so once, and `workbench doctor` says why.
"""

from __future__ import annotations

import struct

from ..patches import Lever, Patch

_HOME = "torchao.quantization.pt2e.observer"
_FLOAT32 = struct.Struct("f")
_FLOAT32_MAX = 3.4028234663852886e38


def _search_of(own):
    """HistogramObserver._non_linear_param_search reading its cumulative sums as floats; torchao's own `own` for
    a histogram that is not float32."""

    def _non_linear_param_search(self):
        # torchao/quantization/pt2e/observer.py::HistogramObserver._non_linear_param_search, step for step
        import torch

        if self.histogram.dtype != torch.float32:
            return own(self)
        assert self.histogram.size()[0] == self.bins, "bins mismatch"
        bin_width = (self.max_val - self.min_val) / self.bins
        total = torch.sum(self.histogram).item()
        if not abs(total) < _FLOAT32_MAX / 2:  # a bound could round to an infinity (or total is nan): torchao's own
            return own(self)
        pack, unpack = _FLOAT32.pack, _FLOAT32.unpack  # a bound rounded to float32: unpack(pack(bound))[0]
        sums = torch.cumsum(self.histogram, dim=0).tolist()
        stepsize = 1e-5
        alpha, beta = 0.0, 1.0
        start_bin, end_bin = 0, self.bins - 1
        norm_min = float("inf")
        while alpha < beta:
            next_alpha = alpha + stepsize
            next_beta = beta - stepsize
            low, high = unpack(pack(next_alpha * total))[0], unpack(pack(next_beta * total))[0]
            left, right = start_bin, end_bin
            while left < end_bin and sums[left] < low:
                left += 1
            while right > start_bin and sums[right] > high:
                right -= 1
            next_start_bin, next_end_bin = start_bin, end_bin
            if (left - start_bin) > (end_bin - right):
                next_start_bin = left
                alpha = next_alpha
            else:
                next_end_bin = right
                beta = next_beta
            if next_start_bin == start_bin and next_end_bin == end_bin:  # a quiet step: left stayed, and so alpha
                beta = _beta_after_quiet_steps(alpha, beta, stepsize, total, sums[end_bin] if end_bin > start_bin
                                               else None)
                continue
            norm = self._compute_quantization_error(next_start_bin, next_end_bin)
            if norm > norm_min:
                break
            norm_min = norm
            start_bin, end_bin = next_start_bin, next_end_bin
        new_min = self.min_val + bin_width * start_bin
        new_max = self.min_val + bin_width * (end_bin + 1)
        return new_min, new_max

    return _non_linear_param_search


_QUIET_BLOCK = 4096  # steps computed at once while looking for the next one that moves a range end


def _beta_after_quiet_steps(alpha: float, beta: float, stepsize: float, total: float, last: float | None) -> float:
    """After a quiet step (neither range end moved, beta lowered), the beta of the first step from `beta` on that
    either ends the search (alpha no longer below beta) or moves the range's upper end (the last bin's cumulative
    sum `last` above the step's float32 upper bound; None: a one-bin range, whose end never moves). The lower
    bound is the quiet step's, as alpha has not moved, so every step before that one is quiet too."""
    import numpy as np

    while True:
        betas = np.subtract.accumulate(np.concatenate(([beta], np.full(_QUIET_BLOCK, stepsize))))
        stops = ~(alpha < betas[:-1])  # betas[k] starts step k + 1
        if last is not None:
            stops |= last > (betas[1:] * total).astype(np.float32).astype(np.float64)
        found = np.flatnonzero(stops)
        if found.size:
            return float(betas[found[0]])
        beta = float(betas[-1])


LEVER = Lever("histogram_search", "WORKBENCH_HISTOGRAM_SEARCH",
              "thousands of 0-dim tensor reads per observed activation in the histogram observer's range search, "
              "when a quantized model is converted",
              (Patch(_HOME, "HistogramObserver._non_linear_param_search", _search_of, ("histogram_search",)),))
