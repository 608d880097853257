"""A whole model's partition summary (batch/model_summary.py's table) for the terminal."""

from __future__ import annotations


def format_architecture_summary(name: str, table, *, dtype_chosen: bool, wide: bool = False) -> str:
    """`architecture_summary`'s table for the terminal, headed by the case's dtype (and, when the dtype was the
    entry's default, saying so and which others it has); the table fits the terminal's width, or one line per row
    when `wide`."""
    from ..catalogue import get
    from ..core.text import table as text_table

    dtype = table["dtype"].iloc[0] if len(table) else get(name).dtypes[0]
    head = f"{name} [{dtype}]"
    if not dtype_chosen:
        head += f": {dtype} is the entry's first dtype; --dtype chooses another of {' '.join(get(name).dtypes)}"
    columns = ["profile", "policy", "outcome", "delegates", "cpu_islands", "int64_crossings"]
    lines = [head, text_table(table[columns].values.tolist(), columns, wide=wide)]
    for row in table.itertuples():
        error = f"; {row.error}" if row.error else ""
        lines.append(f"{row.profile} {row.policy}: {row.crossings or 'no int64 crossing'}{error}")
    return "\n".join(lines)
