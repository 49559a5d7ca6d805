"""How the suite is shared among xdist's workers: ``-n auto --dist loadgroup`` (README).

Each test is a unit of work of its own, as with xdist's "load", except the tests of a module
marked ``pytest.mark.xdist_group`` (its tests share a module-scoped fixture: a whole lesson
run, a Prometheus server with its exporters): they are one unit, so the fixture is made once,
not once in every worker that gets one of them. ``tests/test_suite_scheduling.py`` checks that
every such module carries the mark, and that a group runs in one worker.

``--dist`` is given on the command line, not in ``addopts``: a pytest without xdist (the tests'
own child runs, ``-p no:xdist``) would refuse it. Its hook is ``tests/conftest.py``'s.
"""

from __future__ import annotations

import pytest


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """In each worker, xdist's loadgroup names a test's group by writing ``ID@group`` to the
    test's ``_nodeid``; pytest 9.2 reads a node's id from ``_id`` instead, so the name is
    lost and nothing is grouped (pytest-xdist issue #1386). Where that happened, the id takes
    the name xdist wrote. Nothing to do with a pytest that reads ``_nodeid`` (up to 9.1)."""
    for item in items:
        written = item.__dict__.get("_nodeid")
        if isinstance(written, str) and written != item.nodeid and hasattr(item, "_id"):
            from _pytest.nodeid import NodeId  # pytest 9.2's; absent where not needed

            item._id = NodeId.parse(written)
