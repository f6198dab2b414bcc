"""Command line: ``evalframe evaluate QRELS RUN [RUN ...]``.

A thin composition of the public functions; errors go to standard error with a
non-zero exit status.
"""
from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path

import pandas as pd


def _add_conventions(p: argparse.ArgumentParser) -> None:
    p.add_argument("--rel", type=int, default=1, help="relevant means label >= REL (default 1)")
    p.add_argument("--ties", choices=["doc_id_desc", "doc_id_asc", "rank"], default="doc_id_desc",
                   help="order of equal scores (default doc_id_desc, as trec_eval)")
    p.add_argument("--missing", choices=["zero", "drop"], default="zero",
                   help="golden-set questions a system did not answer: score 0 (default) or drop (trec_eval)")
    p.add_argument("--depth", type=int, default=None, help="evaluate only the top DEPTH documents")
    p.add_argument("--duplicates", choices=["error", "max", "first"], default="error",
                   help="a document listed twice for one question: error (default), keep max score, keep first")


def _runs(paths: list[str]):
    from .io import read_run
    if len(paths) == 1:
        run = read_run(paths[0])
        if "system" not in run:
            run.insert(0, "system", Path(paths[0]).stem)
        return run
    return read_run(paths)


def _cmd_evaluate(args) -> int:
    from .evaluate import aggregate, evaluate
    from .io import read_qrels

    qrels = read_qrels(args.qrels)
    run = _runs(args.runs)
    per_q = evaluate(run, qrels, args.measures or None, rel=args.rel, ties=args.ties,
                     missing=args.missing, depth=args.depth, duplicates=args.duplicates)
    table = per_q if args.per_question else aggregate(per_q)
    if not args.per_question:
        wide = table.pivot(index="system", columns="measure", values="value")
        wide = wide[list(dict.fromkeys(table["measure"]))]
        wide.insert(0, "n", table.groupby("system")["n"].max())
        wide = wide.loc[list(dict.fromkeys(table["system"]))]
    else:
        wide = table
    if args.format == "csv":
        table.to_csv(sys.stdout, index=False)
    elif args.format == "json":
        sys.stdout.write(table.to_json(orient="records", indent=1) + "\n")
    else:
        with pd.option_context("display.width", 200, "display.max_columns", 50, "display.max_rows", 500):
            sys.stdout.write(wide.to_string(float_format=lambda v: f"{v:.4f}") + "\n")
    if args.out:
        out = Path(args.out)
        (table.to_parquet if out.suffix == ".parquet" else table.to_csv)(out, index=False)
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="evalframe", description="Trustworthy retrieval evaluation.")
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("trec-eval", help="drop-in trec_eval: same flags, same output, faster", add_help=False)
    sub.add_parser("report", help="the full report: summary, segments, comparisons, diagnostics, plots",
                   add_help=False)
    p = sub.add_parser("evaluate", help="measures per system (or per question) for one or many runs")
    p.add_argument("qrels", help="golden set: TREC qrels, CSV/TSV, Parquet or JSONL")
    p.add_argument("runs", nargs="+", help="one or more runs (TREC, CSV/TSV, Parquet, JSONL)")
    p.add_argument("-m", "--measures", nargs="+", metavar="M",
                   help="measures, e.g. nDCG@10 R@100 AP (default: the spec's seven)")
    p.add_argument("-q", "--per-question", action="store_true", help="print every question's values")
    p.add_argument("--format", choices=["text", "csv", "json"], default="text")
    p.add_argument("--out", help="also write the table to this .csv or .parquet file")
    _add_conventions(p)
    p.set_defaults(func=_cmd_evaluate)
    return parser


# Subcommands with their own argument parsers live in their own modules.
_DELEGATED = {
    "trec-eval": ("evalframe.trec_eval", "main"),  # drop-in trec_eval
    "report": ("evalframe.report_cli", "main"),     # the full report
}


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] in _DELEGATED:
        import importlib
        mod, fn = _DELEGATED[argv[0]]
        return getattr(importlib.import_module(mod), fn)(argv[1:])
    parser = build_parser()
    args = parser.parse_args(argv)
    from .errors import EvalframeInputError

    def _show(message, category, filename, lineno, file=None, line=None):
        sys.stderr.write(f"warning: {message}\n")

    warnings.showwarning = _show
    try:
        return args.func(args)
    except (EvalframeInputError, FileNotFoundError, ValueError, TypeError) as exc:
        sys.stderr.write(f"evalframe: error: {exc}\n")
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
