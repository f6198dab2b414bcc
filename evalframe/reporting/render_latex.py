"""A Report's summary as a booktabs LaTeX table (:func:`to_latex`; no jinja2)."""
from __future__ import annotations

import numpy as np

from .views import ReportView, significance_marks, test_description


def to_latex(rep: ReportView, *, digits: int = 3, caption: str | None = None, label: str = "tab:evalframe",
             intervals: bool = False) -> str:
    """The summary as a booktabs LaTeX table: systems x measures, best value bold,
    significance markers (test and correction named in the caption); no jinja2."""
    s = rep.summary
    marks = significance_marks(rep)
    systems, measures = rep.systems, rep.measures
    means = s.pivot(index="system", columns="measure", values="mean")
    best = {mm: means[mm].max() for mm in measures if mm in means}
    rows = []
    for sy in systems:
        cells = [_tex(sy)]
        for mm in measures:
            r = s[(s["system"] == sy) & (s["measure"] == mm)]
            if r.empty:
                cells.append("--")
                continue
            r = r.iloc[0]
            v = f"{r['mean']:.{digits}f}"
            if np.isclose(r["mean"], best[mm]):
                v = f"\\textbf{{{v}}}"
            mk = marks.get((sy, mm))
            if mk:
                v += "$^{\\dagger}$" if mk == "+" else "$^{\\ddagger}$"
            if intervals:
                v += f" {{\\scriptsize [{r['ci_low']:.{digits}f}, {r['ci_high']:.{digits}f}]}}"
            cells.append(v)
        rows.append(" & ".join(cells) + r" \\")
    n = int(s["n"].max()) if len(s) else 0
    cap = caption or (f"Means over {n} questions (best in bold).")
    ref = rep.reference
    if ref and not rep.comparisons.empty:
        cap += (f" $\\dagger$ / $\\ddagger$: significantly better / worse than {_tex(ref)} "
                f"({_tex(test_description(rep))}).")
    head = " & ".join(["System", *[_tex(mm) for mm in measures]]) + r" \\"
    return "\n".join([
        r"\begin{table}[t]", r"\centering", f"\\caption{{{cap}}}", f"\\label{{{label}}}",
        r"\begin{tabular}{l" + "r" * len(measures) + "}", r"\toprule", head, r"\midrule",
        *rows, r"\bottomrule", r"\end{tabular}", r"\end{table}", ""])


_TEX = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
        "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}"}


def _tex(s: str) -> str:
    return "".join(_TEX.get(ch, ch) for ch in str(s))
