"""What the TOSA 1.1 specification allows for 64-bit integers, and the EXT-INT64 candidate list derived from it.

- `rows()`: the specification's `<typesupport>` rows that mention i64_t (data/tosa-1.1-int64-rows.csv, facts
  only; the specification file itself is under Arm's licence and not shipped). `parse_tosa_xml(path)` rebuilds
  the same table from a `tosa.xml` you supply.
- `int64_tosa_ops()`: the TOSA operators with a row under EXT-INT64.
- `candidates()`: the candidate table (data/ext-int64-candidates.csv), which the `ext-int64-allowlist` policy
  reads; `write_candidates()` stores one. Its `status` says why an operator is or is not a candidate
  (CANDIDATE_STATUSES). The table itself is derived by running the catalogue
  (`workbench.derive_candidates()`, batch/authoring/derive.py).
"""

from __future__ import annotations

import csv
import xml.etree.ElementTree as ET
from pathlib import Path

DATA = Path(__file__).resolve().parents[2] / "data"
ROWS_FILE = DATA / "tosa-1.1-int64-rows.csv"
CANDIDATES_FILE = DATA / "ext-int64-candidates.csv"
ROW_COLUMNS = ("tosa_op", "mode", "types", "profiles", "version_added")
CANDIDATE_COLUMNS = ("op", "edge_ops", "observed_profile", "outcome", "evidence", "tosa_ops", "without_int64_row",
                     "candidate", "status")
# A candidate row's status: every TOSA operator its lowering uses has a 64-bit row; one of them has none (named in
# without_int64_row); or no TOSA lowering was observed, so there is nothing to hold against the specification.
CANDIDATE = "candidate"
NO_INT64_ROW = "no_int64_row"
NO_EVIDENCE = "no_evidence"
CANDIDATE_STATUSES = (CANDIDATE, NO_INT64_ROW, NO_EVIDENCE)


def candidate_status(tosa_ops: list[str], without_int64_row: list[str]) -> str:
    """CANDIDATE, NO_INT64_ROW or NO_EVIDENCE for an operator whose lowering used `tosa_ops`."""
    if not tosa_ops:
        return NO_EVIDENCE
    return NO_INT64_ROW if without_int64_row else CANDIDATE


def rows(path: str | Path | None = None):
    """The i64 type rows as a DataFrame (the shipped table unless `path` names another CSV of the same form)."""
    import pandas as pd

    return pd.read_csv(path or ROWS_FILE, dtype=str, keep_default_na=False)


def int64_tosa_ops(table=None) -> set[str]:
    """TOSA operators with at least one type row available under EXT-INT64."""
    table = rows() if table is None else table
    return set(table[table["profiles"].str.contains("EXT-INT64")]["tosa_op"])


def _type_values(typesupport: ET.Element) -> list[tuple[str, str]]:
    values = [(k, v) for k, v in typesupport.attrib.items() if k not in ("mode", "version_added")]
    for type_set in typesupport.iter("type_set"):
        members = [t.get("name") or (t.text or "").strip() for t in type_set]
        values.append((type_set.get("name", "?"), "|".join(m for m in members if m)))
    return values


def parse_tosa_xml(path: str | Path) -> list[dict]:
    """Every <typesupport> row of a tosa.xml that mentions i64_t, in document order, as ROW_COLUMNS dicts.

    A type bound to a <type_set> (children naming its types) is written as the set's values joined with '|';
    each <op_profile> is `name+and_name(+and_name2)`, alternatives joined with ' | '.
    """
    root = ET.parse(path).getroot()
    found = []
    for operator in root.iter("operator"):
        name = (operator.findtext("name") or "").strip()
        for typesupport in operator.iter("typesupport"):
            types = _type_values(typesupport)
            if not any("i64_t" in value for _, value in types):
                continue
            profiles = [
                "+".join(p.get(k) for k in ("name", "and_name", "and_name2") if p.get(k))
                for p in typesupport.findall("op_profile")
            ]
            found.append({
                "tosa_op": name,
                "mode": typesupport.get("mode", ""),
                "types": ";".join(f"{k}={v}" for k, v in types),
                "profiles": " | ".join(profiles),
                "version_added": typesupport.get("version_added", ""),
            })
    return found


def write_rows(found: list[dict], path: str | Path) -> Path:
    path = Path(path)
    with path.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=ROW_COLUMNS)
        writer.writeheader()
        writer.writerows(found)
    return path


def write_candidates(table, path: str | Path = CANDIDATES_FILE) -> Path:
    table.to_csv(path, index=False)
    return Path(path)


def candidates(path: str | Path = CANDIDATES_FILE):
    import pandas as pd

    table = pd.read_csv(path, dtype=str, keep_default_na=False)
    table["candidate"] = table["candidate"].str.lower() == "true"
    return table


def candidate_edge_ops(path: str | Path = CANDIDATES_FILE) -> frozenset[str]:
    """The edge operators of the candidate operators (read with the csv module: listing policies needs no pandas)."""
    with open(path, newline="") as file:
        return frozenset(op for row in csv.DictReader(file) if row["candidate"].lower() == "true"
                         for op in row["edge_ops"].split())
