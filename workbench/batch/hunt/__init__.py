"""The counterexample hunt: programs drawn, run and judged by the partitioner's contract.

- `search`: the hunt itself (`hunt`): draw, run, class, shrink, within a budget;
- `space`: what a hunt draws and runs, and what it is judged against;
- `clock`: its budget, and the measured speed of a case that plans how it is spent;
- `contract`: the partitioner's contract: which results break it, and how badly;
- `findings`: the classes of findings, worst first, and their record;
- `shrink`: the smallest program that still breaks the contract;
- `examples`: the classes a hunt remembers and replays first next time;
- `stats`: what a hunt did and what it returns;
- `elsewhere`: a hunt on another Arm backend, and a hunt's baseline there, each in a new process.
"""
