"""Sweep results as a table (`results_table`) and on disk: one row per case, as CSV or Parquet, read back with the
same dtypes."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd

from ..core.errors import ResultsFileError
from ..core.rows import LATER_COLUMNS, RESULT_COLUMNS, VELA_COLUMNS, VGF_COLUMNS, columns_for, result_row

# Vela's figures are floats too: a TOSA profile's case has none (NaN), and a count read back from CSV is "36.0".
FLOAT_COLUMNS = ("max_abs_error", "max_steps", "seconds", *VELA_COLUMNS)
INT_COLUMNS = ("mismatches", "beyond_int32")
BOOL_COLUMNS = ("cached",)
# True, False or None (None: not checked): the specification check's verdict (core/spec_check.py)
OPTIONAL_BOOL_COLUMNS = ("spec_legal",)
TEXT_COLUMNS = tuple(c for c in RESULT_COLUMNS
                     if c not in FLOAT_COLUMNS + INT_COLUMNS + BOOL_COLUMNS + OPTIONAL_BOOL_COLUMNS)
# A VGF target's columns (core/rows.py VGF_COLUMNS), typed when a sweep has them: its verdict is text, the rest numbers.
VGF_FLOAT_COLUMNS = VGF_COLUMNS[1:]
FORMATS = {".csv": "CSV", ".parquet": "Parquet"}

_BOOLS = {"true": True, "1": True, "1.0": True, "false": False, "0": False, "0.0": False}


def results_table(results_with_cached, *, typed: bool = False) -> pd.DataFrame:
    """A sweep's DataFrame from (CaseResult, whether it came from the cache) pairs: one row per result
    (core/rows.py); typed=True: with the columns typed as a results file is read back (load_results)."""
    pairs = list(results_with_cached)
    table = pd.DataFrame([result_row(r, cached) for r, cached in pairs],
                         columns=columns_for(r.profile for r, _ in pairs))
    return load_results(table) if typed else table


def save_results(frame: pd.DataFrame, path) -> Path:
    """Write a sweep result to `path`, as CSV or Parquet by its extension; returns the path."""
    path = Path(path)
    kind = _format_of(path)
    frame = load_results(frame)
    path.parent.mkdir(parents=True, exist_ok=True)
    if kind == ".csv":
        frame.to_csv(path, index=False)
    else:
        _parquet_engine(path)
        frame.to_parquet(path, index=False)
    return path


def load_results(path_or_frame) -> pd.DataFrame:
    """A sweep result from a .csv or .parquet file (or a DataFrame), with the result columns first and typed.

    Raises ResultsFileError when the file is missing, unreadable or not a sweep result.
    """
    if isinstance(path_or_frame, pd.DataFrame):
        return _normalise(path_or_frame.copy(), "the frame")
    path = Path(path_or_frame)
    kind = _format_of(path)
    if not path.is_file():
        raise ResultsFileError(f"no results file at {path}")
    try:
        if kind == ".csv":
            # Everything as text first: versions like "2.10" must not become floats, and "" must stay "".
            frame = pd.read_csv(path, dtype=str, keep_default_na=False)
        else:
            _parquet_engine(path)
            frame = pd.read_parquet(path)
    except ResultsFileError:
        raise
    except Exception as error:  # pandas and pyarrow raise many types for a file that is not a table
        detail = " ".join(str(error).split()) or type(error).__name__
        raise ResultsFileError(f"cannot read {path} as {FORMATS[kind]}: {detail}") from None
    return _normalise(frame, str(path))


def check_results_path(path) -> None:
    """Refuse, before any work, a results file name whose format is not one a sweep writes."""
    _format_of(Path(path))


def _format_of(path: Path) -> str:
    suffix = path.suffix.lower()
    if suffix not in FORMATS:
        valid = ", ".join(FORMATS)
        raise ResultsFileError(f"{path.name}: unknown results format {suffix or '(no extension)'!r}; use {valid}")
    return suffix


def _parquet_engine(path: Path) -> None:
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        raise ResultsFileError(f"{path.name}: Parquet needs pyarrow (pip install pyarrow), or use .csv") from None


def _normalise(frame: pd.DataFrame, source: str) -> pd.DataFrame:
    for column, value in LATER_COLUMNS.items():
        if column not in frame.columns:
            frame[column] = value
    missing = [c for c in RESULT_COLUMNS if c not in frame.columns]
    if missing:
        raise ResultsFileError(
            f"{source} is not a sweep result: missing column{'s' if len(missing) > 1 else ''} "
            f"{', '.join(missing)} (a sweep result has the columns {', '.join(RESULT_COLUMNS)})"
        )
    extra = [c for c in frame.columns if c not in RESULT_COLUMNS]
    frame = frame[list(RESULT_COLUMNS) + extra].reset_index(drop=True)
    for column in TEXT_COLUMNS + tuple(c for c in VGF_COLUMNS[:1] if c in frame.columns):
        text = frame[column].astype(object)  # an all-empty column may have come back as float NaN
        frame[column] = text.where(text.notna(), "").astype(str)
    for columns, convert, dtype, kind in (
        (FLOAT_COLUMNS + tuple(c for c in VGF_FLOAT_COLUMNS if c in frame.columns), _to_float, "float64", "numbers"),
        (INT_COLUMNS, _to_int, "int64", "integers"),
        (BOOL_COLUMNS, _to_bool, "bool", "true or false"),
        (OPTIONAL_BOOL_COLUMNS, _to_optional_bool, "object", "true, false or nothing"),
    ):
        for column in columns:
            frame[column] = _convert(frame[column], convert, dtype, f"{source}: column {column} should hold {kind}")
    return frame


def _convert(series: pd.Series, convert, dtype: str, problem: str) -> pd.Series:
    values = []
    for row, value in enumerate(series):
        try:
            values.append(convert(value))
        except (TypeError, ValueError):
            raise ResultsFileError(f"{problem}, but row {row + 1} holds {value!r}") from None
    return pd.Series(values, index=series.index, name=series.name, dtype=dtype)


def _to_float(value) -> float:
    if value is None or (isinstance(value, str) and value.strip() == ""):
        return math.nan
    return float(value)


def _to_int(value) -> int:
    if isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_)):
        return int(value)
    number = float(value)  # "3", "3.0" and 3.0 all mean 3; NaN and 3.5 do not
    if not number.is_integer():
        raise ValueError(value)
    return int(number)


def _to_optional_bool(value) -> bool | None:
    if value is None or (isinstance(value, float) and math.isnan(value)) or str(value).strip() in ("", "None"):
        return None
    return _to_bool(value)


def _to_bool(value) -> bool:
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    key = str(value).strip().lower()
    if key not in _BOOLS:
        raise ValueError(value)
    return _BOOLS[key]
