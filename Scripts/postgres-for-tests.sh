#!/usr/bin/env bash
# A throwaway PostgreSQL server for the tests and the benchmark: a new cluster in a temp folder,
# listening on loopback only, trusting local connections, gone when stopped.
#
#   eval "$(Scripts/postgres-for-tests.sh start)"   # exports PREFSD_TEST_POSTGRES and PREFSD_TEST_POSTGRES_DIR
#   swift test                                       # PostgreSQL tests use it
#   Scripts/postgres-for-tests.sh stop               # stops it and removes the folder
#   Scripts/postgres-for-tests.sh pause DIR          # stops the server at once, as a crash would (for fault tests)
#   Scripts/postgres-for-tests.sh resume DIR         # starts it again, on the same port
#
# Needs Debian's postgresql package (apt-get install postgresql). PostgreSQL refuses to run as
# root: as root the cluster belongs to the `postgres` user.
set -euo pipefail
# The server lives on after this script: it must not keep open a descriptor inherited from
# whoever ran the script (a pipe the caller waits on, to learn that the script has ended).
for fd in /proc/$$/fd/*; do
    fd=${fd##*/}
    if [ "$fd" -gt 2 ] 2>/dev/null; then eval "exec $fd>&-" 2>/dev/null || true; fi
done

bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
case "${1:-}" in
start)
    if [ -z "$bin" ]; then
        echo "postgres-for-tests: PostgreSQL is not installed (apt-get install postgresql)" >&2
        exit 1
    fi
    dir=$(mktemp -d /tmp/prefsd-postgres-XXXXXX)
    as=()
    if [ "$(id -u)" = 0 ]; then
        chown postgres "$dir"
        as=(runuser -u postgres --)
    fi
    "${as[@]}" "$bin/initdb" -D "$dir/data" -U postgres -A trust --no-sync >"$dir/initdb.log" 2>&1
    # A free port: bind to port 0 and read back what the kernel gave.
    port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    echo "-p $port -k $dir -c listen_addresses=127.0.0.1 -c max_connections=300" >"$dir/options"
    "${as[@]}" "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 start -o "$(cat "$dir/options")" >/dev/null
    echo "export PREFSD_TEST_POSTGRES=postgresql://postgres@127.0.0.1:$port/postgres"
    echo "export PREFSD_TEST_POSTGRES_DIR=$dir"
    ;;
stop)
    dir=${2:-${PREFSD_TEST_POSTGRES_DIR:-}}
    [ -n "$dir" ] && [ -d "$dir/data" ] || exit 0
    as=()
    [ "$(id -u)" = 0 ] && as=(runuser -u postgres --)
    "${as[@]}" "$bin/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null 2>&1 || true
    rm -rf "$dir"
    ;;
pause | resume)
    dir=$2
    as=()
    [ "$(id -u)" = 0 ] && as=(runuser -u postgres --)
    if [ "$1" = pause ]; then
        "${as[@]}" "$bin/pg_ctl" -D "$dir/data" -m immediate -w stop >/dev/null
    else
        "${as[@]}" "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 start -o "$(cat "$dir/options")" >/dev/null
    fi
    ;;
*)
    echo "usage: $0 start | stop [DIR] | pause DIR | resume DIR" >&2
    exit 2
    ;;
esac
