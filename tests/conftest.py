"""Hypothesis profiles. ``make test`` (and CI) draws the same examples on every run, so
a run that passed once passes again and a failure is not a coin toss between commits;
``make fuzz`` (profile ``explore``) draws new random examples on every run, to hunt for
inputs the fixed ones miss (run it in a loop for longer hunts). A failure it finds prints a reproduce blob; add the
case as an explicit example or test."""
import os

from hypothesis import settings

settings.register_profile("fixed", derandomize=True, database=None, print_blob=True)
settings.register_profile("explore", derandomize=False, database=None, print_blob=True)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "fixed"))
