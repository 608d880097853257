"""Warm per-case time of run_case with the decomposition cache on and off, and where the time goes.

    python scripts/decomposition_cache_benchmark.py [--rounds 3] [--profile TOSA-1.0+FP] [op ...]

Every case runs once to warm up; then each round runs every case with the cache on, then off. Stage times
come from timers wrapped around the stack's own functions (exclusive: a stage's time leaves out the stages
inside it); "other" is the rest of run_case.
"""

from __future__ import annotations

import argparse
import collections
import functools
import statistics
import time

DEFAULT_OPS = ("add", "sub", "mul", "relu", "sigmoid", "cat", "view", "permute", "sum_dim", "mm")


class StageClock:
    def __init__(self):
        self.seconds = collections.defaultdict(float)
        self._inner = []

    def wrap(self, owner, name: str, stage: str) -> None:
        function = getattr(owner, name)

        @functools.wraps(function)
        def timed(*args, **kwargs):
            start = time.perf_counter()
            self._inner.append(0.0)
            try:
                return function(*args, **kwargs)
            finally:
                elapsed = time.perf_counter() - start
                inner = self._inner.pop()
                self.seconds[stage] += elapsed - inner
                if self._inner:
                    self._inner[-1] += elapsed

        setattr(owner, name, timed)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("ops", nargs="*", default=DEFAULT_OPS)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--profile", default="TOSA-1.0+FP")
    parser.add_argument("--dtype", default="float32")
    options = parser.parse_args()

    from workbench import _stack, decomposition_cache, pipeline

    _stack.arm()
    import executorch.exir.program._program as edge_program
    import torch
    from executorch.backends.arm._passes import arm_pass_manager
    from executorch.backends.arm.tosa import backend, partitioner
    from torch.export import exported_program

    clock = StageClock()
    clock.wrap(pipeline, "run_case", "other (workbench, executorch glue)")
    clock.wrap(torch.export, "export", "export (torch.export.export)")
    clock.wrap(exported_program.ExportedProgram, "run_decompositions", "to_edge: run_decompositions (x3)")
    clock.wrap(edge_program, "_generate_edge_program", "to_edge: edge dialect passes")
    clock.wrap(partitioner.TOSAPartitioner, "partition", "partition (TOSAPartitioner)")
    clock.wrap(arm_pass_manager.ArmPassManager, "transform_to_backend_pipeline", "Arm passes")
    clock.wrap(backend.TOSABackend, "preprocess", "TOSA serialization")
    clock.wrap(pipeline, "execute", "reference model run")
    clock.wrap(pipeline, "compare_outputs", "comparison")

    cases = [(op, options.dtype, options.profile) for op in options.ops]
    for case in cases:
        pipeline.run_case(*case)

    walls = {True: [], False: []}
    cpus = {True: [], False: []}
    stages = {True: collections.Counter(), False: collections.Counter()}
    for _ in range(options.rounds):
        for on in (True, False):
            with decomposition_cache.switched(on):
                clock.seconds.clear()
                for case in cases:
                    wall, cpu = time.perf_counter(), time.process_time()
                    pipeline.run_case(*case)
                    walls[on].append(time.perf_counter() - wall)
                    cpus[on].append(time.process_time() - cpu)
                stages[on].update(clock.seconds)

    print(f"{len(cases)} cases x {options.rounds} rounds, {options.dtype}, {options.profile}")
    print("| cache | median wall s | median CPU s | mean wall s |")
    print("|---|---|---|---|")
    for on in (True, False):
        print(f"| {'on' if on else 'off'} | {statistics.median(walls[on]):.3f} | {statistics.median(cpus[on]):.3f} "
              f"| {statistics.mean(walls[on]):.3f} |")
    print(f"speed-up of the median: {statistics.median(walls[False]) / statistics.median(walls[True]):.2f}x")
    print()
    print("| stage | on ms/case | off ms/case |")
    print("|---|---|---|")
    runs = len(cases) * options.rounds
    for stage in sorted(stages[False], key=lambda s: -stages[False][s]):
        print(f"| {stage} | {stages[True][stage] / runs * 1000:.1f} | {stages[False][stage] / runs * 1000:.1f} |")


if __name__ == "__main__":
    main()
