#!/usr/bin/env bash
# Holds prefsd to openapi.yaml with schemathesis, every check on, deterministically: starts the
# built daemon on a temp database with its loopback TCP listener and a bearer token, runs
# `st run openapi.yaml` against it (settings in Scripts/schemathesis.toml), and exits non-zero on
# any failure — a 5xx, an answer the document does not describe, a request the document allows
# that the server refuses, one it forbids that the server takes.
#
#   Scripts/schemathesis.sh                       # 60 examples per operation
#   Scripts/schemathesis.sh --max-examples 200
#
# Options: --prefsd PATH (default .build/debug/prefsd), --venv DIR (where schemathesis is, or is
# installed from PyPI; default .build-schemathesis/venv), --max-examples N (60), --keep (keep the
# temp dir with the daemon's log and the reports). Generation is deterministic: no seed.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)

version=4.32.5
prefsd=.build/debug/prefsd
venv=.build-schemathesis/venv
max_examples=60
keep=0
while [ $# -gt 0 ]; do
    case "$1" in
        --prefsd) prefsd=$2; shift 2 ;;
        --venv) venv=$2; shift 2 ;;
        --max-examples) max_examples=$2; shift 2 ;;
        --keep) keep=1; shift ;;
        -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
        *) echo "schemathesis.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
    esac
done
case "$venv" in /*) ;; *) venv="$repo/$venv" ;; esac
[ -x "$prefsd" ] || { echo "schemathesis.sh: no prefsd at $prefsd (swift build first)" >&2; exit 2; }

if [ "$("$venv/bin/st" --version 2>/dev/null)" != "st, version $version" ]; then
    echo "schemathesis.sh: installing schemathesis $version into $venv"
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet --disable-pip-version-check "schemathesis==$version"
fi

scratch=$(mktemp -d /tmp/prefsd-schemathesis-XXXXXX)
daemon=
cleanup() {
    [ -n "$daemon" ] && kill "$daemon" 2>/dev/null && wait "$daemon" 2>/dev/null
    if [ "$keep" = 1 ]; then echo "schemathesis.sh: kept $scratch"; else rm -rf "$scratch"; fi
}
trap cleanup EXIT

port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
token=$(python3 -c 'import secrets; print(secrets.token_hex(16))')
(umask 077; echo "$token" >"$scratch/token")
"$prefsd" --db "$scratch/prefs.sqlite" --socket "$scratch/prefsd.sock" --listen "127.0.0.1:$port" \
    --token-file "$scratch/token" --log-level warning >"$scratch/prefsd.log" 2>&1 &
daemon=$!
for _ in $(seq 200); do
    curl -sf -o /dev/null -H "Authorization: Bearer $token" "http://127.0.0.1:$port/v1/status" && break
    kill -0 "$daemon" 2>/dev/null || break
    sleep 0.05
done
curl -sf -o /dev/null -H "Authorization: Bearer $token" "http://127.0.0.1:$port/v1/status" \
    || { echo "schemathesis.sh: prefsd did not start:" >&2; cat "$scratch/prefsd.log" >&2; exit 1; }

cd "$scratch"  # schemathesis writes its reports under its working directory
set +e
# Scripts/schemathesis-hooks/yamlsafe.py: answers that say YAML and are not (see the file).
PYTHONPATH="$repo/Scripts/schemathesis-hooks${PYTHONPATH:+:$PYTHONPATH}" SCHEMATHESIS_HOOKS=prefsd \
"$venv/bin/st" --config-file "$repo/Scripts/schemathesis.toml" run "$repo/openapi.yaml" \
    --url "http://127.0.0.1:$port" --header "Authorization: Bearer $token" \
    --max-examples "$max_examples" --no-color --report junit --report-dir "$scratch/report"
status=$?
set -e
kill -0 "$daemon" 2>/dev/null || { echo "schemathesis.sh: prefsd died during the run:" >&2; tail -n 40 "$scratch/prefsd.log" >&2; exit 1; }
exit "$status"
