"""Bundled example data (see README.md in this folder); read it through evalframe.datasets."""
