"""Fixtures of the multi-host tests: the test server's URI, fresh store names,
the host_peer program, and hosts (network namespaces; skipped, saying why,
where they cannot be made)."""
import os
import sys
import uuid

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import hosts  # noqa: E402

PEER = os.path.join(ROOT, "build", "tests", "host_peer")


@pytest.fixture
def server():
    value = os.environ.get("OUTLIVE_TEST_PG")
    if not value:
        pytest.skip("OUTLIVE_TEST_PG is not set: no PostgreSQL test server (scripts/pg_cluster.py start)")
    return value


@pytest.fixture
def store_name():
    return f"hosts_{uuid.uuid4().hex[:16]}"


@pytest.fixture
def peer():
    if not os.access(PEER, os.X_OK):
        pytest.fail(f"{PEER} is missing: make c-tests builds it")
    return PEER


@pytest.fixture
def two_hosts():
    reason = hosts.missing()
    if reason:
        pytest.skip(reason)
    with hosts.made(2) as made:
        yield made
