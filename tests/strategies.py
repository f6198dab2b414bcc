"""Random cases shared by the differential tests (pytrec_eval) and the fusion and pooling tests."""
import numpy as np
import pandas as pd
from hypothesis import strategies as st

#: Scores exactly representable in float32 (trec_eval 9 and pytrec_eval store scores
#: as 32-bit floats), drawn from a small set so that ties are common.
SCORES = [0.0, 0.25, 0.5, 1.0, 1.5, 2.0, -1.0, 3.0, float(np.float32(0.1)), float(np.float32(2.7))]


@st.composite
def cases(draw, max_labels=3):
    """(qrels, run, rel): ties, graded and negative labels, a question that may be
    only in the run or only in the golden set, unjudged retrieved documents."""
    n_q = draw(st.integers(1, 4))
    n_d = draw(st.integers(1, 16))
    docs = [f"d{i}" for i in range(n_d)]
    qrels_rows, run_rows = [], []
    for qi in range(n_q + 1):  # the last question may be run-only or qrels-only
        q = f"q{qi}"
        in_qrels = qi < n_q or draw(st.booleans())
        in_run = draw(st.booleans()) if qi >= n_q - 1 else True
        if in_qrels:
            judged = draw(st.lists(st.sampled_from(docs), min_size=1, max_size=n_d, unique=True))
            labels = [draw(st.integers(-1, max_labels)) for _ in judged]
            if max(labels) < 0:
                labels[0] = 0  # trec_eval 9 crashes on a question whose labels are all negative
            qrels_rows += [(q, d, lab) for d, lab in zip(judged, labels)]
        if in_run:
            ret = draw(st.lists(st.sampled_from(docs + ["x1", "x2", "x3"]), min_size=1,
                                max_size=n_d + 3, unique=True))
            run_rows += [(q, d, draw(st.sampled_from(SCORES))) for d in ret]
    qrels = pd.DataFrame(qrels_rows, columns=["query_id", "doc_id", "relevance"])
    run = pd.DataFrame(run_rows, columns=["query_id", "doc_id", "score"])
    if not set(qrels.query_id) & set(run.query_id):
        run = pd.concat([run, pd.DataFrame([(qrels.query_id.iloc[0], "d0", 0.5)], columns=run.columns)])
        run = run.drop_duplicates(["query_id", "doc_id"], ignore_index=True)
    rel = draw(st.sampled_from([1, 1, 2]))
    return qrels, run, rel


def random_runs(seed: int, n_sys: int = 3, n_q: int = 15, pool: int = 40, ties: bool = False) -> pd.DataFrame:
    """Runs of several systems for fusion and pooling tests (ties on request)."""
    rng = np.random.default_rng(seed)
    rows = []
    for s in range(n_sys):
        for q in range(n_q):
            n = int(rng.integers(1, 25))
            docs = rng.choice(pool, size=n, replace=False)
            scores = rng.integers(0, 4, size=n).astype(float) if ties else rng.normal(size=n) * (s + 1) + s
            rows += [(f"s{s}", f"q{q}", f"d{d}", float(x)) for d, x in zip(docs, scores)]
    return pd.DataFrame(rows, columns=["system", "query_id", "doc_id", "score"])


def doc_id_desc_key(doc: str) -> tuple:
    """Sort key for doc_id descending, byte-wise (evalframe's tie order)."""
    return tuple(-b for b in doc.encode()) + (1,)  # byte-wise descending, a prefix after its extensions
