"""ef.judge (issue 29): your function over batches, a JSON-lines cache that resumes, retries.
Deterministic functions only; calls are counted."""
import warnings

import numpy as np
import pandas as pd
import pytest

import evalframe as ef


def _pairs(n_q=7, per_q=9):
    return pd.DataFrame({"query_id": np.repeat([str(q) for q in range(n_q)], per_q),
                         "doc_id": [f"d{q}-{i}" for q in range(n_q) for i in range(per_q)]})


def rule(batch: pd.DataFrame) -> list:
    """A deterministic judge: the label depends on the pair only."""
    return [(int(q) + int(d.split("-")[1])) % 3 for q, d in zip(batch["query_id"], batch["doc_id"])]


class Counting:
    """``rule``, counting the pairs asked; ``fail_at`` batches raise (``times`` times each)."""

    def __init__(self, fail_at=(), times=1, crash_at=None):
        self.asked, self.calls, self.fail_at, self.times, self.crash_at = 0, 0, set(fail_at), times, crash_at
        self.failed: dict = {}

    def __call__(self, batch):
        self.calls += 1
        first = (batch["query_id"].iloc[0], batch["doc_id"].iloc[0])
        if self.crash_at is not None and self.calls == self.crash_at:
            raise RuntimeError("the judge's service went away")
        if first in self.fail_at and self.failed.get(first, 0) < self.times:
            self.failed[first] = self.failed.get(first, 0) + 1
            raise TimeoutError("rate limited")
        self.asked += len(batch)
        return rule(batch)


def _want(pairs):
    return pairs.assign(relevance=np.asarray(rule(pairs), dtype=np.int64), judge="m")


def test_labels_batches_and_provenance():
    pairs = _pairs()
    seen = []
    def fn(batch):
        seen.append(batch)
        return np.asarray(rule(batch))
    got = ef.judge(pairs, fn, batch_size=10, judge_name="m", progress=False,
                   queries={str(q): f"question {q}" for q in range(7)},
                   documents=pd.DataFrame({"doc_id": pairs["doc_id"], "text": "body of " + pairs["doc_id"]}))
    pd.testing.assert_frame_equal(got, _want(pairs))
    assert [len(b) for b in seen] == [10] * 6 + [3]
    assert list(seen[0].columns) == ["query_id", "doc_id", "query_text", "doc_text"]
    assert seen[1]["query_text"].iloc[0] == "question 1" and seen[1]["doc_text"].iloc[0] == "body of d1-1"
    # a golden set as it is: evaluate reads it, and a person's labels outrank it
    human = got.iloc[:5].assign(relevance=2, judge="human")
    both = ef.read_qrels(pd.concat([got, human]), conflicts="human")
    assert (both.iloc[:5]["relevance"] == 2).all() and (both.iloc[:5]["judge"] == "human").all()
    assert (both.iloc[5:]["judge"] == "m").all()


def test_a_second_call_asks_nothing_and_new_pairs_only_are_asked(tmp_path):
    cache = tmp_path / "labels.jsonl"
    pairs = _pairs()
    fn = Counting()
    first = ef.judge(pairs, fn, batch_size=8, cache=cache, judge_name="m", progress=False)
    assert fn.asked == len(pairs) == 63
    again = ef.judge(pairs, fn, batch_size=8, cache=cache, judge_name="m", progress=False)
    assert fn.asked == 63  # every pair from the cache
    pd.testing.assert_frame_equal(first, again)
    more = pd.concat([pairs, _pairs(9, 9).iloc[63:]], ignore_index=True)
    got = ef.judge(more, fn, batch_size=8, cache=cache, judge_name="m", progress=False)
    assert fn.asked == 63 + 18
    pd.testing.assert_frame_equal(got, _want(more))
    # another judge name is another judge: nothing of "m" is reused
    other = Counting()
    ef.judge(pairs, other, cache=cache, judge_name="m2", progress=False)
    assert other.asked == 63
    assert len(cache.read_text().splitlines()) == 63 + 18 + 63


def test_a_crashed_run_resumes(tmp_path):
    cache = tmp_path / "labels.jsonl"
    pairs = _pairs()
    crashing = Counting(crash_at=4)
    with pytest.raises(RuntimeError, match="went away") as err:
        ef.judge(pairs, crashing, batch_size=10, cache=cache, judge_name="m", retries=0, progress=False)
    assert "the batches before it are in the cache" in "".join(getattr(err.value, "__notes__", []))
    assert len(cache.read_text().splitlines()) == 30  # three batches done
    with open(cache, "a") as fh:
        fh.write('{"judge":"m","query_id":"6","doc_i')  # a line cut short by the crash
    fn = Counting()
    got = ef.judge(pairs, fn, batch_size=10, cache=cache, judge_name="m", progress=False)
    assert fn.asked == 63 - 30
    pd.testing.assert_frame_equal(got, _want(pairs))


def test_failing_batches_are_retried():
    pairs = _pairs()
    starts = {tuple(pairs.iloc[i][["query_id", "doc_id"]]) for i in (0, 20, 60)}  # batches 1, 3, 7 of 10
    fn = Counting(fail_at=starts, times=2)
    got = ef.judge(pairs, fn, batch_size=10, judge_name="m", retries=2, progress=False)
    pd.testing.assert_frame_equal(got, _want(pairs))
    assert fn.calls == 7 + 3 * 2 and fn.asked == 63
    with pytest.raises(TimeoutError, match="rate limited") as err:
        ef.judge(pairs, Counting(fail_at=starts, times=2), batch_size=10, judge_name="m", retries=1, progress=False)
    assert "failed 2 times" in "".join(err.value.__notes__)


def test_bad_answers_and_arguments():
    pairs = _pairs(2, 3)
    with pytest.raises(ValueError, match=r"one integer label per row of its batch \(6\)"):
        ef.judge(pairs, lambda b: [1, 0], retries=0, progress=False)
    with pytest.raises(ValueError, match="integer labels"):
        ef.judge(pairs, lambda b: [0.5] * len(b), retries=0, progress=False)
    with pytest.raises(ValueError, match="integer labels"):
        ef.judge(pairs, lambda b: ["yes"] * len(b), retries=0, progress=False)
    assert ef.judge(pairs, lambda b: b["doc_id"].str.endswith("1"), progress=False)["relevance"].tolist() == [
        0, 1, 0, 0, 1, 0]  # booleans are 1 and 0
    with pytest.raises(ValueError, match="batch_size must be an int >= 1, got 0"):
        ef.judge(pairs, rule, batch_size=0)
    with pytest.raises(ValueError, match="judge_name must be a non-empty str"):
        ef.judge(pairs, rule, judge_name="")
    with pytest.raises(ef.EvalframeInputError, match="no doc_id column"):
        ef.judge(pairs.drop(columns="doc_id"), rule, progress=False)


def test_a_pool_is_judged_and_aliases_read():
    cran = ef.datasets.load_cranfield()
    p = ef.pool(cran.runs, depth=3, qrels=cran.qrels)
    got = ef.judge(p, lambda b: [1] * len(b), judge_name="yes", progress=False)
    assert len(got) == len(p.documents) and (got["judge"] == "yes").all()
    aliased = p.documents[["query_id", "doc_id"]].rename(columns={"query_id": "qid", "doc_id": "docno"})
    pd.testing.assert_frame_equal(ef.judge(aliased, lambda b: [1] * len(b), judge_name="yes", progress=False), got)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        filled = pd.concat([cran.qrels, got], ignore_index=True)
        assert ef.evaluate(cran.runs, filled, ["Judged@3"], conflicts="human")["value"].min() == 1.0


@pytest.mark.parametrize("where", ["missing folder", "a folder"])
def test_a_cache_that_cannot_be_written_is_refused_before_fn_is_asked(tmp_path, where):
    # the labels of the first batch (perhaps paid for) were lost to a raw FileNotFoundError
    calls = []

    def fn(batch):
        calls.append(len(batch))
        return [1] * len(batch)
    cache = tmp_path / "nodir" / "c.jsonl" if where == "missing folder" else tmp_path
    pairs = pd.DataFrame({"query_id": ["q1", "q1"], "doc_id": ["d1", "d2"]})
    with pytest.raises(ef.errors.EvalframeInputError, match="judge cache"):
        ef.judge(pairs, fn, cache=cache, judge_name="j", progress=False)
    assert calls == []
