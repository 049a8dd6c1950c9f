#!/usr/bin/env bash
# The throwaway PostgreSQL server of the tests: start|stop|env (see scripts/pg_cluster.py).
#   eval "$(scripts/pg-cluster.sh start)"; export OUTLIVE_TEST_PG; ...; scripts/pg-cluster.sh stop
exec python3 "$(dirname "$0")/pg_cluster.py" "$@"
