"""Pipeline stages: how much of the first stage's recall survives to the final context."""
from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np
import pandas as pd

from .. import stats
from .._validation import error, type_of
from ..errors import EvalframeInputError, InputProblem
from ..measures import Measure, parse_measures, resolve
from .tables import STAGE_COLUMNS


def stage_spec(stages: Sequence | Mapping[str, int] | None) -> list[tuple[str, "int | str"]]:
    """``stages`` as ``[(system, k)]``, first stage first.

    A list of names uses k = 100 for the first stage, 5 for the last and 20 between;
    pairs ``(system, k)`` and a dict ``{system: k}`` give k explicitly.  Instead of k a
    stage may pass on a token budget: ``"tokens=2000"`` or ``{"tokens": 2000}`` (its
    recall is ``R(tokens=2000)``: the leading documents whose cumulative tokens fit;
    the run needs a ``tokens`` column), kept as the string ``"tokens=2000"``.

    Raises
    ------
    TypeError
        ``stages`` is neither a list nor a dict.
    EvalframeInputError
        Fewer than two stages, or a k that is not an int >= 1.
    """
    if stages is None:
        return []
    if isinstance(stages, Mapping):
        spec = [(str(s), k) for s, k in stages.items()]
    elif isinstance(stages, (list, tuple)):
        spec = []
        for i, s in enumerate(stages):
            if isinstance(s, (list, tuple)) and len(s) == 2:
                spec.append((str(s[0]), s[1]))
            else:
                spec.append((str(s), 100 if i == 0 else 5 if i == len(stages) - 1 else 20))
    else:
        raise error(None, "stages", "a list of system names (first stage first) or a dict {system: k}", type_of(stages))
    problems = []
    if len(spec) < 2:
        problems.append(InputProblem(f"stages names {len(spec)} system(s)",
                                     "name at least two: the first stage and the final context, "
                                     "e.g. stages={'first_stage': 100, 'reranked': 5}"))
    out = []
    for s, k in spec:
        budget = _budget(k)
        if budget is not None:
            out.append((s, f"tokens={budget}"))
        elif isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
            problems.append(InputProblem(f"stage {s!r}: k must be an int >= 1 or a token budget "
                                         f"('tokens=2000'), got {k!r}",
                                         "give each stage the number of documents (or tokens) it passes on"))
        else:
            out.append((s, int(k)))
    if problems:
        raise EvalframeInputError("stages", problems)
    return out


def _budget(k) -> int | None:
    """The token budget of a stage given as ``"tokens=N"`` or ``{"tokens": N}`` (N >= 1), else None."""
    if isinstance(k, Mapping) and set(k) == {"tokens"}:
        k = k["tokens"]
    elif isinstance(k, str) and k.replace(" ", "").startswith("tokens="):
        k = k.replace(" ", "")[len("tokens="):]
        k = int(k) if k.isdigit() else None
    else:
        return None
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
        return None
    return int(k)


def stage_measures(spec: Sequence[tuple[str, int]], *, rel: int = 1) -> list[Measure]:
    """The measures the stages table needs: ``R@k`` (or ``R(tokens=N)``) of every stage."""
    if not spec:
        return []
    return [resolve(m, rel=rel) for m in parse_measures([f"R({k})" if isinstance(k, str) else f"R@{k}"
                                                          for _, k in spec])]


def stage_table(per_question: pd.DataFrame, spec: Sequence[tuple[str, int]], *, rel: int = 1,
                interval: Mapping[str, object]) -> pd.DataFrame:
    """The ``stages`` table: recall of each stage at its k, against the first stage's.

    Parameters
    ----------
    per_question : DataFrame
        ``system, query_id, measure, value`` holding every stage's ``R@k`` (other rows are ignored)
        (:func:`stage_measures`).
    spec : :func:`stage_spec`.
    rel : the relevance threshold the measures were resolved with.
    interval : ``method, confidence, n_resamples, seed[, threads]`` of :func:`stats.summarize`.

    Returns
    -------
    DataFrame
        ``stage, system, measure, k`` (<NA> for a token budget, which the measure names),
        ``n, mean, ci_low, ci_high, ceiling`` (the first stage's
        mean), ``share_of_ceiling`` (mean / ceiling), ``lost`` (ceiling - mean), ``method``
        (the interval's, as :func:`stats.summarize` names it); empty without stages.
    """
    cols = list(STAGE_COLUMNS)
    if not spec:
        return pd.DataFrame(columns=cols)
    rows = []
    ceiling = None
    for i, ((system, k), m) in enumerate(zip(spec, stage_measures(spec, rel=rel))):
        name = str(m)
        pq = per_question[(per_question["measure"] == name) & (per_question["system"] == system)]
        s = stats.summarize(pq[["system", "query_id", "measure", "value"]], **interval).iloc[0]
        if ceiling is None:
            ceiling = float(s["mean"])
        share = float(s["mean"]) / ceiling if ceiling else np.nan
        rows.append({"stage": i + 1, "system": system, "measure": name,
                     "k": pd.NA if isinstance(k, str) else k, "n": int(s["n"]),
                     "mean": float(s["mean"]), "ci_low": float(s["ci_low"]), "ci_high": float(s["ci_high"]),
                     "ceiling": ceiling, "share_of_ceiling": share, "lost": ceiling - float(s["mean"]),
                     "method": str(s["method"])})
    out = pd.DataFrame(rows, columns=cols)
    if any(isinstance(k, str) for _, k in spec):
        out["k"] = out["k"].astype("Int64")
    return out
