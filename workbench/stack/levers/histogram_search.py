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
The search is the same loop over the same Python floats, but the cumulative sum is read once into a list
(`tolist()` gives each float32 element exactly) and each bound is rounded to float32 before it is compared, as
torch compares a float32 tensor with a Python float (in float32). The quantization error of each candidate range
is computed by the observer's own `_compute_quantization_error`, and the range it returns is computed as torchao
computes it. A histogram that is not float32, or whose total is not a number or near float32's largest value
(where a bound could round to an infinity), runs torchao's own search. The search is pinned
(pinned_sources.PINNED_SOURCES["histogram_search"]); on any other source torchao's own search stays, a warning
says so once, and `workbench doctor` says why.
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
            if next_start_bin == start_bin and next_end_bin == end_bin:
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


LEVER = Lever("histogram_search", "WORKBENCH_HISTOGRAM_SEARCH",
              "thousands of 0-dim tensor reads per observed activation in the histogram observer's range search, "
              "when a quantized model is converted",
              (Patch(_HOME, "HistogramObserver._non_linear_param_search", _search_of, ("histogram_search",)),))
