"""pytest at python/: `rpcscan` in every doctest's namespace (the docstrings' examples)."""

import pytest

import rpcscan


@pytest.fixture(autouse=True)
def _rpcscan_in_doctests(doctest_namespace):
    doctest_namespace["rpcscan"] = rpcscan
