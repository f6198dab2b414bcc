"""``evalframe trec-eval``: a drop-in trec_eval (version 10) on evalframe's engine.

Same flags, same measure names and parameter syntax, same output, byte for
byte::

    evalframe trec-eval [-q] [-c] [-n] [-J] [-M N] [-l N] [-N N] [-m MEASURE[.PARAMS]] ... QRELS RUN

``RUN`` may be ``-`` (standard input).  The files are read by
:func:`evalframe.read_qrels` / :func:`evalframe.read_run`, ranked and judged by
:func:`evalframe.ranking.judge` and measured by
:func:`evalframe.measures.compute`; this module only translates trec_eval's
command line into evalframe measures and prints trec_eval's format.

Flags map onto evalframe's conventions: ``-c`` is ``missing="zero"`` (default
``missing="drop"``), ``-M`` is ``depth``, ``-l`` is ``rel``, ``-J`` evaluates
the condensed (judged-only) lists.  Differences from trec_eval 10: a question
of the golden set that the run does not answer is left out without ``-c``
(trec_eval 10 stops with "result qid not found"; trec_eval 9 and the manual
leave it out); the preference (``-R prefs``), ``qrels_jg`` and z-score
(``-Z``) modes and the measures ``dcg``, ``ideal_dcg`` and ``yaap`` are not
provided; ``--memory-budget SIZE`` (evalframe's) bounds the memory a large run
file takes (it is read a block of whole questions at a time).  Files are read as
trec_eval reads them (ids as bytes, through latin-1; a first line is data unless
it cannot be; indented ``#`` comments in a run; C's ``isspace`` separators); the behaviours of trec_eval 10 not copied
are listed, with the reason, in the README ("trec_eval 9 vs 10").
"""
from __future__ import annotations

__all__ = ["main", "TREC_MEASURES", "NICKNAMES"]

from .catalogue import NICKNAMES, TREC_MEASURES
from .command import main
