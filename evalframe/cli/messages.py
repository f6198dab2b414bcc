"""How a command speaks: warnings shown as ``warning: ...`` while it runs, a user error as
one line ``<prog>: error: ...`` and exit status 2, never a traceback (:func:`run_command`), in the
command line's own words (:func:`command_words`: ``missing='drop'`` reads ``--missing drop``).
"""
from __future__ import annotations

import contextlib
import os
import re
import sys
import warnings
from collections.abc import Callable, Iterator


class CommandError(Exception):
    """A user error found by a command (its message is the one line shown)."""


@contextlib.contextmanager
def show_warnings(stream=None) -> Iterator[None]:
    """Show warnings as ``warning: <message>`` lines on standard error while the block runs.

    The warning hook and filters are restored when the block ends (``warnings.catch_warnings``).
    """
    def _show(message, category, filename, lineno, file=None, line=None):
        (stream or sys.stderr).write(f"warning: {command_words(str(message))}\n")

    with warnings.catch_warnings():
        warnings.showwarning = _show
        yield


def is_user_error(exc: BaseException) -> bool:
    """True for errors caused by the command's input (bad data, files, numbers), not by a bug."""
    import zlib
    if isinstance(exc, (CommandError, ValueError, TypeError, OSError, EOFError, OverflowError,
                        zlib.error, Warning)):  # Warning: one turned into an error by -W error
        return True
    return type(exc).__module__.split(".")[0] == "pyarrow"  # Arrow's errors on a bad file


def _reason(exc: BaseException, path: str | None = None) -> str:
    import gzip
    import zlib

    from ..errors import EvalframeInputError

    if isinstance(exc, EvalframeInputError):
        parts = []
        for p in exc.problems:
            text = f"{p.what} (fix: {p.fix})"
            if p.examples:
                text += "; e.g. " + " | ".join(ln.strip() for ln in p.examples.splitlines() if ln.strip())
            parts.append(text)
        n = len(exc.problems)
        return f"{exc.table}: {n} problem{'s' if n != 1 else ''} found: " + "; ".join(parts)
    if isinstance(exc, (EOFError, zlib.error, gzip.BadGzipFile)):
        return f"corrupt or truncated compressed file ({exc})"
    if isinstance(exc, OSError) and exc.strerror:
        name = exc.filename
        return f"{name}: {exc.strerror}" if name and str(name) != path else exc.strerror
    if isinstance(exc, OverflowError):
        return f"a number given is too large (at most 2^63 - 1): {exc}"
    return str(exc) or type(exc).__name__


def error_line(exc: BaseException, path: str | None = None) -> str:
    """The one-line text of a user error (newlines folded, in :func:`command_words`);
    ``path`` is left out of it."""
    return command_words(" ".join(ln.strip() for ln in _reason(exc, path).splitlines() if ln.strip()))


#: keyword arguments of the library whose command-line flag has another name
_FLAG_OF = {"method": "interval", "n_resamples": "n-resamples"}


#: keyword arguments that are flags of the commands (library spelling)
_FLAGS = ("rel", "ties", "missing", "depth", "duplicates", "conflicts", "columns", "encoding", "baseline",
          "stages", "segments", "measures", "confidence", "n_resamples", "seed", "interval", "test",
          "correction", "method", "curve", "threads")


_KEYWORD = re.compile(r"\b(" + "|".join(_FLAGS) + r")=(?:'([^']*)'|\"([^\"]*)\"|(\{[^}]*\})|([\w.+-]+)|(?=[\s,;)]|$))")


_PAIR = re.compile(r"'([^']*)': (?:'([^']*)'|([\w.+=-]+))")


_MUST = re.compile(r"(?:\b[A-Za-z_]\w*: )?\b(" + "|".join(_FLAGS) + r") must be\b")


def command_words(text: str) -> str:
    """A library message in the command line's words: ``missing='drop'`` -> ``--missing drop``,
    ``columns={'a': 'query_id'}`` -> ``--columns a=query_id``, ``encoding=`` -> ``--encoding``.

    Examples
    --------
    >>> command_words("pass missing='drop' to leave them out, or duplicates='max'")
    'pass --missing drop to leave them out, or --duplicates max'
    >>> command_words("report: n_resamples must be an int >= 1, got 0")
    '--n-resamples must be an int >= 1, got 0'
    >>> command_words("e.g. stages={'first_stage': 100, 'reranked': 5}")
    'e.g. --stages first_stage:100 reranked:5'
    """
    def flag(m: re.Match) -> str:
        name = "--" + _FLAG_OF.get(m[1], m[1]).replace("_", "-")
        if m[4] is not None:  # a dict: the --columns syntax (--stages: SYSTEM:K ...)
            pairs = [(k, a or b) for k, a, b in _PAIR.findall(m[4])]
            if name == "--stages":
                return f"{name} " + " ".join(f"{k}:{v}" for k, v in pairs)
            return f"{name} " + ",".join(f"{k}={v}" for k, v in pairs)
        value = next((g for g in (m[2], m[3], m[5]) if g is not None), None)
        return name if value is None else f"{name} {value}"
    text = _MUST.sub(lambda m: "--" + _FLAG_OF.get(m[1], m[1]).replace("_", "-") + " must be", text)
    return _KEYWORD.sub(flag, text)


def run_command(prog: str, func: Callable[[], int | None], *, stream=None) -> int:
    """Run ``func()`` as a command: warnings on stderr, user errors as one line + exit status 2.

    Parameters
    ----------
    prog : str
        The command's name, which starts its error lines (``"evalframe evaluate"``).
    func : callable
        Parses the arguments and runs the command; returns its exit status (None is 0).
    stream : file, optional
        Where warnings and errors go (default: standard error at the time of writing).

    Returns
    -------
    int
        ``func``'s exit status; argparse's for a usage error (2) or ``--help`` (0); 2 for a
        user error (:func:`is_user_error`), shown as ``"<prog>: error: <one line>"``; 130
        when interrupted. Other exceptions (bugs) propagate with their traceback. Warnings
        are shown by :func:`show_warnings` while ``func`` runs, and the hook is restored.
    """
    err = stream or sys.stderr
    try:
        with show_warnings(err):
            return int(func() or 0)
    except SystemExit as exc:  # argparse: usage error (2) or --help (0)
        code = exc.code
        return code if isinstance(code, int) else (0 if code is None else 2)
    except KeyboardInterrupt:
        err.write(f"{prog}: interrupted\n")
        return 130
    except BrokenPipeError:  # e.g. piped into head: stop quietly
        with contextlib.suppress(Exception):
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
        return 0
    except BaseException as exc:
        if not is_user_error(exc):
            raise
        err.write(f"{prog}: error: {error_line(exc)}\n")
        return 2
