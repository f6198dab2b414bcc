"""``evalframe evaluate QRELS RUN [RUN ...]``: measures per system (or per question).

A thin composition of :func:`evalframe.read_qrels`, :func:`evalframe.read_run`,
:func:`evalframe.evaluate` and :func:`evalframe.aggregate`; runs are read and
systems named by :mod:`evalframe.cli.runs`.
"""
from __future__ import annotations

import argparse
import sys

from .arguments import (add_chunks, add_conventions, add_inputs, add_memory_budget, add_rollup, conventions,
                        memory_budget_arg, parse_measure_args, read_chunks_arg, read_rollup)
from .messages import run_command
from .outputs import check_out_file
from .runs import read_input, run_source, stdin_once

PROG = "evalframe evaluate"


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``evalframe evaluate``."""
    p = argparse.ArgumentParser(prog=PROG, description="Measures per system (or per question) for one "
                                                       "or many runs.")
    add_inputs(p)
    p.add_argument("-m", "--measures", action="extend", nargs="+", metavar="M",
                   help="measures, e.g. nDCG@10 R@100 AP, or -m nDCG@10 -m AP (default: the spec's seven)")
    p.add_argument("-q", "--per-question", action="store_true", help="print every question's values")
    p.add_argument("--format", choices=["text", "csv", "json"], default="text")
    p.add_argument("--out", help="also write the table to this .csv or .parquet file")
    p.add_argument("--unjudged", choices=["nonrelevant", "relevant", "bounds"],
                   help="unjudged retrieved documents: not relevant (the default rule, declared), relevant "
                        "(the upper bound), or both bounds (value_low, value_high); P, R, Success, RR only")
    add_conventions(p)
    add_memory_budget(p)
    p.add_argument("--threads", type=int, metavar="N",
                   help="threads to evaluate on (default: $EVALFRAME_THREADS, else every core); same numbers")
    add_rollup(p)
    add_chunks(p)
    return p


def run(args: argparse.Namespace) -> int:
    """Evaluate the parsed arguments, print the table; returns the exit status."""
    import pandas as pd

    from ..evaluation import aggregate, evaluate
    from ..io import read_golden_set

    stdin_once(args.qrels, args.runs)
    measures = parse_measure_args(args.measures)
    out = check_out_file(args.out) if args.out else None
    budget = memory_budget_arg(args)
    qrels = read_input(args.qrels, read_golden_set, "golden set", columns=args.columns, conflicts=args.conflicts,
                       encoding=args.encoding)
    with run_source(args.runs, duplicates=args.duplicates, budget=budget, columns=args.columns, ties=args.ties,
                    encoding=args.encoding, ascending=args.ascending) as runs:
        per_q = evaluate(runs, qrels, measures, memory_budget=budget, threads=args.threads,
                         rollup=read_rollup(args.rollup),
                         chunks=read_chunks_arg(args.chunks), min_overlap=args.min_overlap,
                         unjudged=args.unjudged, **conventions(args))
    table = per_q if args.per_question else aggregate(per_q)
    if not args.per_question:
        wide = table.pivot(index="system", columns="measure", values="value")
        wide = wide[list(dict.fromkeys(table["measure"]))]
        if "value_high" in table.columns:  # each measure's upper bound beside it
            high = table.pivot(index="system", columns="measure", values="value_high")
            wide = pd.concat({m: wide[m] for m in wide.columns} | {f"{m} high": high[m] for m in wide.columns},
                             axis=1)[[c for m in wide.columns for c in (m, f"{m} high")]]
        wide.insert(0, "n", table.groupby("system")["n"].max())
        wide = wide.loc[list(dict.fromkeys(table["system"]))]
    else:
        wide = table
    if args.format == "csv":
        table.to_csv(sys.stdout, index=False)
    elif args.format == "json":
        # values written whole (Python's shortest round-trip repr; pandas' to_json keeps 10
        # digits), a missing value as null
        import json
        records = table.astype(object).where(table.notna(), None).to_dict(orient="records")
        sys.stdout.write(json.dumps(records, indent=1) + "\n")
    else:
        if "unit" in table.columns:
            sys.stdout.write("documents are pages (chunks rolled up with --rollup)\n")
        with pd.option_context("display.width", 200, "display.max_columns", 50, "display.max_rows", 500):
            sys.stdout.write(wide.to_string(float_format=lambda v: f"{v:.4f}") + "\n")
    if out is not None:
        (table.to_parquet if out.suffix == ".parquet" else table.to_csv)(out, index=False)
    return 0


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``evalframe evaluate`` (arguments after the command); returns the exit status."""
    argv = list(sys.argv[1:] if argv is None else argv)
    return run_command(PROG, lambda: run(build_parser().parse_args(argv)))
