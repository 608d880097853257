"""A forked worker's memory: its bound, its resident memory as the parent reads it, and its own high-water mark.

The bound of a WorkerPool's worker (isolation.py) is the caller's, else MEMORY_VARIABLE's, else a share of the
machine's memory. Resident memory is read from Linux's /proc; where there is none (another system), nothing is
read and no worker is stopped for its memory.
"""

from __future__ import annotations

import math
import os

from ..core.errors import WorkbenchError

# A pool worker's memory bound in MiB, when the caller gives none.
MEMORY_VARIABLE = "WORKBENCH_WORKER_MEMORY_MIB"
# Without one, the workers together may hold three quarters of the machine's memory, which leaves the rest to the
# parent and the user's other programs (a worker's resident count includes the pages it shares with the parent, so
# the sum overstates what they hold); never less than 2 GiB a worker, as a worker starts out holding the imported
# stack and a large model's lowering needs several times that.
MEMORY_SHARE, MEMORY_FLOOR_BYTES = 0.75, 2 * 2**30


def size_text(count: float, unit_of: float | None = None) -> str:
    """`6.0 GiB`, `300 MiB`: a number of bytes as the errors say it, in the unit that suits `unit_of` (by default
    `count`), so that a bound and what exceeded it read in one unit."""
    if (count if unit_of is None else unit_of) >= 2**30:
        return f"{count / 2**30:.1f} GiB"
    return f"{count / 2**20:.0f} MiB"


def default_memory_limit(workers: int) -> int:
    """A worker's bound in bytes when neither the caller nor MEMORY_VARIABLE gives one (see MEMORY_SHARE)."""
    machine = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    return max(MEMORY_FLOOR_BYTES, int(machine * MEMORY_SHARE / max(1, workers)))


def memory_limit(given, workers: int) -> int:
    """A worker's bound in bytes: `given` (bytes), else MEMORY_VARIABLE's MiB, else the default for `workers`
    workers; WorkbenchError for a value that is no bound."""
    text = os.environ.get(MEMORY_VARIABLE, "").strip()
    if given is None and not text:
        return default_memory_limit(workers)
    if given is None:
        try:
            mib = float(text)
        except ValueError:
            mib = math.nan
        if not 0 < mib < math.inf:
            raise WorkbenchError(f"{MEMORY_VARIABLE}={text!r} is not a memory bound: give a worker's bound as a "
                                 f"positive number of MiB (e.g. 6144), or unset it for the default")
        return int(mib * 2**20)
    if isinstance(given, bool) or not isinstance(given, (int, float)) or not 0 < given < math.inf:
        raise WorkbenchError(f"memory_limit={given!r} is not a memory bound: give a worker's bound as a positive "
                             f"number of bytes (e.g. 6 * 2**30), or None for {MEMORY_VARIABLE} or the default")
    return int(given)


def resident_bytes(pid: int) -> int | None:
    """The resident memory of process `pid`; None where /proc has none to read (another system, or it ended)."""
    try:
        with open(f"/proc/{pid}/statm", "rb") as statm:
            return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return None


def restart_own_peak() -> bool:
    """Start this process's resident high-water mark afresh (clear_refs 5); False where it cannot be."""
    try:
        with open("/proc/self/clear_refs", "w") as clear_refs:
            clear_refs.write("5")
        return True
    except OSError:
        return False


def own_peak() -> int | None:
    """The most resident memory this process has held since it started or `restart_own_peak`, in bytes."""
    try:
        with open("/proc/self/status", "rb") as status:
            line = next(line for line in status if line.startswith(b"VmHWM:"))
        return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError, StopIteration):
        return None
