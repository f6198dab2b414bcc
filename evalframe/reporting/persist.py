"""Writing a report's tables to CSV / Parquet with their metadata, and reading them back.

Both formats round-trip: the tables read back equal the tables written (CSV restores
the column dtypes from ``metadata.json``; Parquet keeps them in the files).
"""
from __future__ import annotations

__all__ = ["METADATA_FILE", "PARQUET_KEY", "write_csv", "write_parquet", "read_csv_tables",
           "read_parquet_tables", "detect_format", "tables_directory", "output_dir"]

import json
from pathlib import Path
from typing import Literal, Mapping

import pandas as pd

from .._validation import Options, check
from ..io import local_path
from .tables import OPTIONAL_TABLES, RANKING_COLUMNS, TABLES

#: the metadata file written next to the tables
METADATA_FILE = "metadata.json"
#: the key of the evalframe metadata (JSON) in every Parquet file's schema metadata
PARQUET_KEY = b"evalframe"

Tables = Mapping[str, pd.DataFrame]


def _is_text(s: pd.Series) -> bool:
    return s.dtype == object or pd.api.types.is_string_dtype(s.dtype)


def _dtypes(t: pd.DataFrame) -> dict[str, str]:
    # "str?" marks a text column with missing values (written as empty fields)
    return {c: (("str?" if t[c].isna().any() else "str") + ":" + str(t[c].dtype)
                if _is_text(t[c]) else str(t[c].dtype)) for c in t.columns}


def output_dir(directory, what: str = "report output") -> Path:
    """``directory`` as a local folder to write into (a URL-looking path is refused before
    anything is created: pandas and pyarrow would send it over the network)."""
    return local_path(directory, what, write=True)


def write_csv(tables: Tables, metadata: Mapping[str, object], directory) -> Path:
    """Write every table as ``<name>.csv`` plus ``metadata.json`` (the metadata and every
    column's dtype, key ``dtypes``); returns the directory."""
    d = output_dir(directory)
    d.mkdir(parents=True, exist_ok=True)
    dtypes = {}
    for name in TABLES:
        t = tables[name]
        t.to_csv(d / f"{name}.csv", index=False)
        dtypes[name] = _dtypes(t)
    (d / METADATA_FILE).write_text(json.dumps({**dict(metadata), "dtypes": dtypes}, indent=1))
    return d


def write_parquet(tables: Tables, metadata: Mapping[str, object], directory) -> Path:
    """Write every table as ``<name>.parquet``; each file's schema metadata (key
    ``evalframe``) holds the metadata as JSON, also written to ``metadata.json``."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    d = output_dir(directory)
    d.mkdir(parents=True, exist_ok=True)
    meta = json.dumps(dict(metadata))
    for name in TABLES:
        t = pa.Table.from_pandas(tables[name], preserve_index=False)
        t = t.replace_schema_metadata({**(t.schema.metadata or {}), PARQUET_KEY: meta.encode()})
        pq.write_table(t, d / f"{name}.parquet")
    (d / METADATA_FILE).write_text(json.dumps(dict(metadata), indent=1))
    return d


def _empty(name: str) -> pd.DataFrame:
    """An optional table a report written by an older evalframe lacks."""
    return pd.DataFrame(columns=list(RANKING_COLUMNS))


def read_parquet_tables(directory) -> tuple[dict[str, pd.DataFrame], dict]:
    """The tables and metadata written by :func:`write_parquet`."""
    import pyarrow.parquet as pq

    d = local_path(directory, "saved report")
    tables, meta = {}, None
    for name in TABLES:
        if name in OPTIONAL_TABLES and not (d / f"{name}.parquet").exists():
            tables[name] = _empty(name)
            continue
        t = pq.read_table(d / f"{name}.parquet")
        meta = json.loads(t.schema.metadata[PARQUET_KEY])
        tables[name] = t.to_pandas()
    return tables, meta


def read_csv_tables(directory) -> tuple[dict[str, pd.DataFrame], dict]:
    """The tables and metadata written by :func:`write_csv` (dtypes restored)."""
    d = local_path(directory, "saved report")
    meta = json.loads((d / METADATA_FILE).read_text())
    dtypes = meta.pop("dtypes")
    tables = {}
    for name in TABLES:
        if name in OPTIONAL_TABLES and name not in dtypes:
            tables[name] = _empty(name)
            continue
        dt = dtypes[name]
        text = [c for c, v in dt.items() if v.startswith(("str:", "str?:"))]
        other = {c: v for c, v in dt.items() if c not in text and v not in ("bool", "float64")}
        t = pd.read_csv(d / f"{name}.csv", dtype={**{c: str for c in text}, **other},
                        keep_default_na=False, na_values={c: ["", "NaN", "nan", "<NA>"] for c in dt
                                                           if c not in text})
        for c, v in dt.items():
            if v == "bool":
                t[c] = t[c].astype(str).str.lower().map({"true": True, "false": False})
            elif c in text:
                kind, orig = v.split(":", 1)
                col = t[c].astype(object)
                if kind == "str?":
                    col = col.where(col != "", None)
                t[c] = col if orig == "object" else col.astype(orig)
        tables[name] = t[list(dt)] if dt else pd.DataFrame()
    return tables, meta


def tables_directory(directory, format: Literal["auto", "parquet", "csv"] = "auto") -> Path:
    """Where a saved report's tables are: ``directory`` itself (``Report.to_parquet`` /
    ``to_csv``), else its ``parquet/`` or ``csv/`` folder (``evalframe report --out DIR``)."""
    d = local_path(directory, "saved report")
    for sub in (d, d / "parquet", d / "csv"):
        if any((sub / f"summary.{f}").is_file() for f in (("parquet", "csv") if format == "auto" else (format,))):
            return sub
    return d


def detect_format(directory, format: Literal["auto", "parquet", "csv"] = "auto") -> Literal["parquet", "csv"]:
    """The format of a report directory: Parquet when ``summary.parquet`` is there, else CSV.

    Raises
    ------
    FileNotFoundError
        Neither ``summary.parquet`` nor ``summary.csv`` (of the format asked for) exists.
    ValueError
        ``format`` is not ``"auto"``, ``"parquet"`` or ``"csv"``.
    """
    check("read_report", "format", format, Options(("auto", "parquet", "csv")))
    d = local_path(directory, "saved report")
    for f in (("parquet", "csv") if format == "auto" else (format,)):
        if (d / f"summary.{f}").is_file():
            return f
    raise FileNotFoundError(f"read_report: no report tables in {d} (summary.parquet or summary.csv); "
                            "write them with Report.to_parquet(directory) or Report.to_csv(directory)")
