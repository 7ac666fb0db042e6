#!/usr/bin/env bash
# Runs Scripts/install.sh into a temp prefix and checks what it installed: every file in its
# place, completions that bash, zsh and fish parse (and that bash loads for prefsctl), man
# pages that render without warnings, a unit that runs the installed prefsd, binaries that run;
# and the script's refusals. Pass --configuration (default debug: the build tests already made,
# so this adds little time); with CI=true, zsh and fish must be installed.
#
#   Scripts/install-test.sh [--configuration release|debug]
set -uo pipefail
cd "$(dirname "$0")/.."
configuration=debug
[ "${1:-}" = --configuration ] && configuration=${2:?--configuration needs a value}

scratch=$(mktemp -d /tmp/prefsd-install-test-XXXXXX)
trap 'rm -rf "$scratch"' EXIT
prefix=$scratch/prefix
passed=0
failed=0
check() { # description, command…
    local description=$1
    shift
    if "$@" >"$scratch/out" 2>&1; then
        passed=$((passed + 1))
    else
        failed=$((failed + 1))
        echo "FAILED: $description" >&2
        sed 's/^/    /' "$scratch/out" >&2
    fi
}
# A shell that must be there in CI; elsewhere its check is left out, and said so.
shell_present() {
    command -v "$1" >/dev/null && return 0
    if [ "${CI:-}" = true ]; then
        failed=$((failed + 1))
        echo "FAILED: $1 is not installed (.ci/run installs it)" >&2
    else
        echo "install-test: $1 is not installed; its completion is not parsed" >&2
    fi
    return 1
}
refuses() { # status, message, install.sh arguments…
    local status=$1 message=$2
    shift 2
    Scripts/install.sh "$@" >"$scratch/refusal" 2>&1
    local got=$?
    [ "$got" = "$status" ] && grep -qF -- "$message" "$scratch/refusal" || {
        echo "exit $got (expected $status), output:"
        cat "$scratch/refusal"
        return 1
    }
}

check "--help prints the usage" bash -c 'Scripts/install.sh --help | grep -q "^Usage: Scripts/install.sh \[--prefix P\]"'
check "an unknown option is refused" refuses 2 "unknown option '--prefx'" --prefx /tmp
check "--prefix without a value is refused" refuses 2 "--prefix needs a value" --prefix
check "a prefix with a space is refused" refuses 2 "has a space" --prefix "$scratch/a b"
check "a prefix that cannot be written is refused" refuses 1 "cannot write to /proc" --prefix /proc/prefsd
check "an unknown configuration is refused" refuses 2 "release or debug, not 'fast'" --configuration fast

check "install.sh installs into $prefix" Scripts/install.sh --prefix "$prefix" --configuration "$configuration"
for file in bin/prefsd bin/prefsctl; do
    check "$file is an executable" test -x "$prefix/$file"
done
bash_completion=$prefix/share/bash-completion/completions/prefsctl
zsh_completion=$prefix/share/zsh/site-functions/_prefsctl
fish_completion=$prefix/share/fish/vendor_completions.d/prefsctl.fish
unit=$prefix/lib/systemd/user/prefsd.service
for file in "$bash_completion" "$zsh_completion" "$fish_completion" "$unit" \
    "$prefix/share/man/man1/prefsctl.1" "$prefix/share/man/man1/prefsd.1"; do
    check "${file#"$prefix"/} is there, not empty" test -s "$file"
done

check "prefsctl --version runs" bash -c "[ \"\$('$prefix/bin/prefsctl' --version)\" = \"\$(.build/$configuration/prefsctl --version)\" ]"
check "prefsd --help runs" bash -c "'$prefix/bin/prefsd' --help | grep -q -- --socket"

check "bash parses the bash completion" bash -n "$bash_completion"
check "bash loads it for prefsctl" bash -c "source '$bash_completion' && complete -p prefsctl | grep -q 'prefsctl\$'"
if shell_present zsh; then
    check "zsh parses the zsh completion" zsh -n "$zsh_completion"
    check "it is a zsh completion for prefsctl" grep -q '^#compdef prefsctl' "$zsh_completion"
fi
if shell_present fish; then
    check "fish parses the fish completion" fish -n "$fish_completion"
    check "it completes prefsctl's verbs" grep -q "complete -c 'prefsctl'.* -fa 'drafts'" "$fish_completion"
fi

for page in prefsctl prefsd; do
    manual=$prefix/share/man/man1/$page.1
    check "$page.1 is a section-1 mdoc page" grep -qi "^\.Dt $page 1" "$manual"
    check "$page.1 renders without warnings" bash -c "
        MANWIDTH=80 man --warnings -l '$manual' 2>'$scratch/$page.warnings' >'$scratch/$page.txt' &&
        [ ! -s '$scratch/$page.warnings' ] && grep -q '^NAME' '$scratch/$page.txt' && grep -q '$page' '$scratch/$page.txt'"
done
check "prefsctl.1 documents the drafts verbs" grep -q "drafts" "$scratch/prefsctl.txt"

check "the unit runs the installed prefsd" \
    grep -qx "ExecStart=$prefix/bin/prefsd --db %S/prefsd/prefs.sqlite --socket %t/prefsd/prefsd.sock --log-level info" "$unit"
if command -v systemd-analyze >/dev/null; then
    check "systemd-analyze finds nothing wrong with the unit" bash -c "
        out=\$(systemd-analyze verify '$unit' 2>&1); echo \"\$out\"; [ -z \"\$out\" ]"
fi

echo "install-test: $passed passed, $failed failed"
[ "$failed" = 0 ]
