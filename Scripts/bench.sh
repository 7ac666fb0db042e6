#!/usr/bin/env bash
# Builds prefsd, prefsctl and the benchmark in release mode and prints the benchmark's table:
# every target (docs/benchmarks.md) with the value measured, the baseline measured in the same
# run, and the ratio. Takes a few minutes on 2 cores. Pass --quick for a short run, --watchers N
# to change the number of idle watchers.
set -euo pipefail
cd "$(dirname "$0")/.."
ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)"
# prefsctl as one static executable (Package.swift, PREFSCTL_STATIC), as it is installed: the
# `prefsctl get` row measures its whole start-up. The same flags and environment for all three
# builds, so no build undoes another's.
export PREFSCTL_STATIC=1
swift build -c release --static-swift-stdlib --product prefsd >&2
swift build -c release --static-swift-stdlib --product prefsctl >&2
swift build -c release --static-swift-stdlib --product prefs-bench >&2
# The PostgreSQL section runs on a throwaway server of its own, when PostgreSQL is installed.
postgres=()
if eval "$(Scripts/postgres-for-tests.sh start 2>/dev/null)"; then
    trap 'Scripts/postgres-for-tests.sh stop "$PREFSD_TEST_POSTGRES_DIR"' EXIT
    postgres=(--postgres "$PREFSD_TEST_POSTGRES")
fi
.build/release/prefs-bench "${postgres[@]}" "$@"
