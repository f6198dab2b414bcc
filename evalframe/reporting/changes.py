"""Top regressions and improvements: the questions where one system lost or gained most
against another (:func:`top_changes`), and the report's ``changes`` table."""
from __future__ import annotations

import os
import re
from typing import Mapping, Sequence

import numpy as np
import pandas as pd

from .._validation import POSITIVE_INT, check, error
from ..canonical import alias_candidates, apply_columns, split_question_text

#: columns of :func:`top_changes` and of the report's ``changes`` table
CHANGE_COLUMNS = ("system_a", "system_b", "measure", "query_id", "value_a", "value_b", "diff",
                  "direction", "rank", "text")


def query_texts(queries: pd.DataFrame | None, *, caller: str = "top_changes") -> pd.Series | None:
    """The question text by query id (str) of a ``query_id, text`` table (None: None);
    the usual aliases are read as the golden set's are (``question_id, question``,
    ``qid, query``...).

    Raises
    ------
    ValueError
        ``queries`` is not a DataFrame with ``query_id`` and ``text`` columns.
    """
    if queries is None:
        return None
    if isinstance(queries, pd.DataFrame) and not {"query_id", "text"} <= set(queries.columns):
        q = split_question_text(queries)
        ids = [c for c in alias_candidates(q, "query_id") if c != "text"]
        if "query_id" not in q.columns and len(ids) == 1:
            q = q.rename(columns={ids[0]: "query_id"})
        queries = q
    if not isinstance(queries, pd.DataFrame) or not {"query_id", "text"} <= set(queries.columns):
        found = list(queries.columns) if isinstance(queries, pd.DataFrame) else type(queries).__name__
        raise error(caller, "queries", "a DataFrame with columns query_id, text", found)
    q = queries.drop_duplicates("query_id")
    return pd.Series(q["text"].astype(str).to_numpy(), index=q["query_id"].astype(str).to_numpy())


def top_changes(per_question: pd.DataFrame, system_a: str, system_b: str, measure: str, *,
                n: int = 10, queries: pd.DataFrame | None = None) -> pd.DataFrame:
    """The questions where ``system_b`` lost or gained most against ``system_a`` on ``measure``.

    Parameters
    ----------
    per_question : DataFrame
        ``system, query_id, measure, value`` (:func:`evalframe.evaluate`).
    system_a, system_b : the reference system and the system compared with it.
    measure : the measure's name as in the table (e.g. ``"nDCG@10"``).
    n : int
        Up to ``n`` regressions (``diff < 0``) and up to ``n`` improvements (``diff > 0``);
        ties (``diff == 0``) are never listed.
    queries : DataFrame, optional
        ``query_id, text``: the question text, in a ``text`` column (NaN without it).

    Returns
    -------
    DataFrame
        ``system_a, system_b, measure, query_id, value_a, value_b, diff`` (``value_b -
        value_a``), ``direction`` (``"regression"`` / ``"improvement"``), ``rank`` (1 = the
        largest change of its direction), ``text``; regressions first (largest loss first),
        then improvements (largest gain first); a question one system does not answer is
        left out. Ties in ``diff`` are broken by query_id.

    Examples
    --------
    >>> import pandas as pd
    >>> pq = pd.DataFrame({"system": ["a", "a", "b", "b"], "query_id": ["1", "2", "1", "2"],
    ...                    "measure": "RR", "value": [1.0, 0.5, 0.25, 1.0]})
    >>> top_changes(pq, "a", "b", "RR")[["query_id", "diff", "direction"]]
      query_id  diff    direction
    0        1 -0.75   regression
    1        2  0.50  improvement
    """
    check("top_changes", "n", n, POSITIVE_INT)
    cols = list(CHANGE_COLUMNS)
    text = query_texts(queries)
    rows = per_question[per_question["measure"] == measure]
    a = rows[rows["system"] == system_a].drop_duplicates("query_id").set_index("query_id")["value"]
    b = rows[rows["system"] == system_b].drop_duplicates("query_id").set_index("query_id")["value"]
    both = a.index.intersection(b.index, sort=False)
    d = pd.DataFrame({"query_id": both.astype(str), "value_a": a.loc[both].to_numpy(dtype=float),
                      "value_b": b.loc[both].to_numpy(dtype=float)})
    d["diff"] = d["value_b"] - d["value_a"]
    d = d[d["diff"].notna() & (d["diff"] != 0)]
    reg = d[d["diff"] < 0].sort_values(["diff", "query_id"], kind="stable").head(n)
    imp = d[d["diff"] > 0].assign(neg=lambda x: -x["diff"]).sort_values(
        ["neg", "query_id"], kind="stable").head(n).drop(columns="neg")
    reg = reg.assign(direction="regression", rank=np.arange(1, len(reg) + 1))
    imp = imp.assign(direction="improvement", rank=np.arange(1, len(imp) + 1))
    out = pd.concat([reg, imp], ignore_index=True)
    out.insert(0, "system_a", system_a)
    out.insert(1, "system_b", system_b)
    out.insert(2, "measure", measure)
    out["text"] = (text.reindex(out["query_id"]).to_numpy() if text is not None
                   else np.full(len(out), np.nan, dtype=object))
    return out[cols].reset_index(drop=True)


def change_table(per_question: pd.DataFrame, *, systems: Sequence[str], measures: Sequence[str],
                 baseline: str | None = None, n: int = 10,
                 queries: pd.DataFrame | None = None) -> pd.DataFrame:
    """The report's ``changes`` table: :func:`top_changes` of the baseline (default: the first
    system) against every other system, for every measure; empty with fewer than two systems."""
    if len(systems) < 2:
        return pd.DataFrame(columns=list(CHANGE_COLUMNS))
    ref = baseline if baseline is not None else systems[0]
    parts = [top_changes(per_question, ref, s, m, n=n, queries=queries)
             for m in measures for s in systems if s != ref]
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=list(CHANGE_COLUMNS))


#: documents kept of each ranking behind a top change (the report's ``rankings`` table)
RANKINGS_DEPTH = 10


def ranking_table(run: pd.DataFrame | None, golden: pd.DataFrame, changes: pd.DataFrame, *, rel: int,
                  ties: str, k: int = RANKINGS_DEPTH, ascending: bool = False) -> pd.DataFrame:
    """The top ``k`` of the two rankings behind every top change: ``system, query_id, rank,
    doc_id, score, label`` (label NaN when the golden set does not judge the document),
    ranked as the measures rank (:func:`evalframe.ranking.judge`, same ties and cutoff
    rules; ``ascending``: the scores are distances, shown as given); empty without a run
    table (``run`` None) or without changes."""
    from .._judged import NOT_JUDGED
    from ..ranking import judge
    from .tables import RANKING_COLUMNS
    if run is None or changes.empty or not len(run):
        return pd.DataFrame(columns=list(RANKING_COLUMNS))
    wanted = pd.concat([changes[["system_a", "query_id"]].set_axis(["system", "query_id"], axis=1),
                        changes[["system_b", "query_id"]].set_axis(["system", "query_id"], axis=1)])
    wanted = wanted.astype(str).drop_duplicates()
    sys_col = run["system"].astype(str) if "system" in run.columns else pd.Series("system", index=run.index)
    key = pd.MultiIndex.from_arrays([sys_col.to_numpy(), run["query_id"].astype(str).to_numpy()])
    sub = run.loc[key.isin(pd.MultiIndex.from_frame(wanted))].reset_index(drop=True)
    qids = set(wanted["query_id"])
    gold = golden.loc[golden["query_id"].astype(str).isin(qids), ["query_id", "doc_id", "relevance"]]
    if sub.empty or gold.empty:
        return pd.DataFrame(columns=list(RANKING_COLUMNS))
    ranked = sub.assign(score=-pd.to_numeric(sub["score"], errors="coerce")) if ascending else sub
    J = judge(ranked, gold.reset_index(drop=True), rel=rel, ties=ties, missing="drop", depth=k, warn=False,
              keep_rows=True)
    groups = J.groups.reset_index(drop=True)
    out = pd.DataFrame({
        "system": (groups["system"].astype(str).to_numpy()[J.grp] if "system" in groups
                   else np.full(len(J.grp), "system", dtype=object)),
        "query_id": groups["query_id"].astype(str).to_numpy()[J.grp],
        "rank": J.rank.astype(np.int64),
        "doc_id": sub["doc_id"].astype(str).to_numpy()[J.source_row],
        "score": pd.to_numeric(sub["score"], errors="coerce").to_numpy(dtype=float)[J.source_row],
        "label": np.where(J.label == NOT_JUDGED, np.nan, J.label.astype(float)),
    })
    return out.loc[out["rank"] <= k].reset_index(drop=True)[list(RANKING_COLUMNS)]


def _question_column(names: Sequence[str], columns: Mapping[str, str] | None) -> str | None:
    """The dataset column that is ``query_id`` once ``columns=`` and the aliases apply
    (None when there is none or more than one)."""
    renamed = apply_columns(pd.DataFrame(columns=list(names)), columns)
    found = alias_candidates(renamed, "query_id")
    if len(found) != 1:
        return None
    back = {v: k for k, v in (columns or {}).items() if k in names}
    return back.get(found[0], found[0])


def _question_filter(dataset, column: str, questions: Sequence[str]):
    """A pyarrow filter keeping the rows of ``questions``: on the column's own type when it
    holds text or integers (row groups pruned by their statistics), else on its text."""
    import pyarrow as pa
    from .. import _arrow_compute as pc
    kind = dataset.schema.field(column).type
    field = pc.field(column)
    if pa.types.is_string(kind) or pa.types.is_large_string(kind):
        return field.isin(pa.array(list(questions), type=kind))
    if pa.types.is_integer(kind):
        ints = [int(q) for q in questions if re.fullmatch(r"[+-]?\d{1,18}", q)]
        return field.isin(pa.array(ints, type=pa.int64()))
    return field.cast(pa.string()).isin(pa.array(list(questions), type=pa.string()))


def question_rows(run, questions: Sequence[str], *, columns: Mapping[str, str] | None = None,
                  duplicates: str = "error", ascending: bool = False) -> pd.DataFrame | None:
    """The rows of ``questions`` of a run given by path, as :func:`evalframe.read_run`'s
    canonical table: a Parquet file, directory, glob or :class:`pyarrow.dataset.Dataset`
    (or a dict ``{system: one of those}``) is read with a filter on its question column,
    so only those questions' rows are loaded; another run file (TREC, CSV, JSONL; or a list
    of paths) is read whole and cut. None when ``run`` is none of these, or its question
    column cannot be told (the report then keeps no rankings)."""
    from ..io import read_run_as_given
    from ..engine.choice import is_dataset_source, open_run_dataset
    questions = [str(q) for q in pd.unique(pd.Series(list(questions), dtype=object).astype(str))]
    try:
        if is_dataset_source(run):
            parts = []
            for name, src in (run.items() if isinstance(run, Mapping) else [(None, run)]):
                dataset = open_run_dataset(src)
                column = _question_column(dataset.schema.names, columns)
                if column is None:
                    return None
                df = dataset.to_table(filter=_question_filter(dataset, column, questions)).to_pandas()
                if not len(df):
                    continue
                part = read_run_as_given(df, columns=columns, duplicates=duplicates, ascending=ascending)
                if name is not None:
                    part = part.drop(columns="system", errors="ignore")
                    part.insert(0, "system", str(name))
                parts.append(part)
            return pd.concat(parts, ignore_index=True) if parts else None
        paths = run if isinstance(run, (list, tuple)) else [run]
        if not paths or not all(isinstance(p, (str, os.PathLike)) for p in paths):
            return None
        table = read_run_as_given(run, columns=columns, duplicates=duplicates, ascending=ascending)
    except (ValueError, TypeError, KeyError, OSError):  # evaluated already: a form read here differently
        return None
    return table[table["query_id"].astype(str).isin(set(questions))].reset_index(drop=True)


def explain_table(rankings: pd.DataFrame, question: str, system_a: str, system_b: str, *, rel: int = 1
                  ) -> pd.DataFrame:
    """The two rankings of ``question`` side by side: ``rank, doc_a, label_a, doc_b,
    label_b`` (label NaN: not judged); each side's first relevant rank is its first row
    with a label >= ``rel``."""
    q = str(question)
    cols = {}
    for side, name in (("a", system_a), ("b", system_b)):
        r = rankings[(rankings["system"].astype(str) == str(name)) & (rankings["query_id"].astype(str) == q)]
        r = r.sort_values("rank")
        cols[side] = r.set_index("rank")[["doc_id", "label"]].rename(
            columns={"doc_id": f"doc_{side}", "label": f"label_{side}"})
    return cols["a"].join(cols["b"], how="outer").rename_axis("rank").reset_index()
