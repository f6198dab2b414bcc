"""Output paths checked before any work (:func:`check_out_file`, :func:`check_out_dir`).
"""
from __future__ import annotations

import os
from pathlib import Path

from .messages import CommandError


def check_out_file(path: str, flag: str = "--out") -> Path:
    """Check, before any work, that a file can be written at ``path`` (its folder exists, a
    local one); ``flag`` names the option in the error."""
    from ..io import local_path
    try:
        out = local_path(path, flag, write=True)
    except ValueError as exc:
        raise CommandError(f"{flag} {path}: looks like a URL; evalframe writes only to local paths") from exc
    if out.is_dir():
        raise CommandError(f"{flag} {path}: is a directory; give a "
                           + (".csv or .parquet file name" if flag == "--out" else "file name"))
    parent = out.parent if str(out.parent) else Path(".")
    if not parent.exists():
        raise CommandError(f"{flag} {path}: the directory {str(parent)!r} does not exist")
    if not parent.is_dir():
        raise CommandError(f"{flag} {path}: {str(parent)!r} is not a directory")
    if not os.access(parent, os.W_OK) or (out.exists() and not os.access(out, os.W_OK)):
        raise CommandError(f"{flag} {path}: permission denied")
    return out


def check_out_dir(path: str) -> Path:
    """Check, before any work, that a directory can be made or written at ``path`` (a
    local one: a URL-looking path is refused)."""
    from ..io import local_path
    try:
        out = local_path(path, "--out", write=True)
    except ValueError as exc:
        raise CommandError(f"--out {path}: looks like a URL; evalframe writes only to local paths") from exc
    if out.exists() and not out.is_dir():
        raise CommandError(f"--out {path}: exists and is not a directory")
    first = out
    while not first.exists():
        if first.parent == first:
            break
        first = first.parent
    if first.exists() and not first.is_dir():
        raise CommandError(f"--out {path}: {str(first)!r} is not a directory")
    if first.exists() and not os.access(first, os.W_OK):
        raise CommandError(f"--out {path}: permission denied in {str(first)!r}")
    return out
