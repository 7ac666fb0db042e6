#!/usr/bin/env bash
# Builds prefsd and prefsctl and installs them under a prefix, with what they need around them:
# prefsctl's shell completions and both man pages, generated from the built binaries by
# swift-argument-parser (--generate-completion-script, the generate-manual plugin), and prefsd's
# systemd user unit, its ExecStart pointed at the installed prefsd.
set -euo pipefail

usage() {
    cat <<EOF
Usage: Scripts/install.sh [--prefix P] [--unit-dir DIR] [--configuration release|debug]

Builds prefsd and prefsctl and installs:
  P/bin/prefsd, P/bin/prefsctl
  P/share/bash-completion/completions/prefsctl
  P/share/zsh/site-functions/_prefsctl
  P/share/fish/vendor_completions.d/prefsctl.fish
  P/share/man/man1/prefsctl.1, P/share/man/man1/prefsd.1
  DIR/prefsd.service      a systemd user unit: one daemon per user

Options:
  --prefix P              where to install (default: /usr/local)
  --unit-dir DIR          where the unit goes (default: P/lib/systemd/user, which the user
                          manager searches for the prefixes /usr/local and /usr; with
                          --prefix ~/.local, give --unit-dir ~/.local/share/systemd/user)
  --configuration C       release (default: optimised, Swift's libraries linked in) or debug
                          (the debug build as it is: quicker, for testing this script)
  -h, --help              show this help

Then, as each user who runs prefsd:
  systemctl --user daemon-reload && systemctl --user enable --now prefsd
EOF
}

fail() {
    echo "install.sh: $1" >&2
    exit "${2:-1}"
}

prefix=/usr/local
unit_dir=
configuration=release
while [ $# -gt 0 ]; do
    case "$1" in
    -h | --help)
        usage
        exit 0
        ;;
    --prefix=* | --unit-dir=* | --configuration=*)
        set -- "${1%%=*}" "${1#*=}" "${@:2}"
        ;;
    --prefix | --unit-dir | --configuration)
        [ $# -ge 2 ] && [ -n "$2" ] || fail "$1 needs a value (see --help)" 2
        case "$1" in
        --prefix) prefix=$2 ;;
        --unit-dir) unit_dir=$2 ;;
        --configuration) configuration=$2 ;;
        esac
        shift 2
        ;;
    *) fail "unknown option '$1' (see --help)" 2 ;;
    esac
done
case "$configuration" in
release) static=(--static-swift-stdlib) ;;
debug) static=() ;;
*) fail "--configuration is release or debug, not '$configuration'" 2 ;;
esac

# Absolute paths: the unit names the installed prefsd by its path. systemd would split a path
# with spaces and expand %, so such paths are refused rather than installed broken.
absolute() { case "$1" in /*) echo "$1" ;; *) echo "$PWD/$1" ;; esac }
prefix=$(absolute "$prefix")
unit_dir=$(absolute "${unit_dir:-$prefix/lib/systemd/user}")
for path in "$prefix" "$unit_dir"; do
    case "$path" in *[[:space:]%\$\\\"\']*) fail "'$path' has a space or one of % \$ \\ \" ': choose another" 2 ;; esac
done
for path in "$prefix" "$unit_dir"; do
    existing=$path
    while [ ! -e "$existing" ]; do existing=$(dirname "$existing"); done
    [ -d "$existing" ] || fail "$existing is not a folder"
    probe=$(mktemp -p "$existing" .prefsd-install-XXXXXX 2>/dev/null) ||
        fail "cannot write to $existing: run as root (sudo), or choose another --prefix"
    rm -f "$probe"
done

cd "$(dirname "$0")/.."
# PREFSCTL_STATIC (Package.swift) links prefsctl as a static executable, which needs
# --static-swift-stdlib on every build; the generate-manual plugin's build cannot take it.
unset PREFSCTL_STATIC
command -v swift >/dev/null || fail "swift is not on PATH: install Swift 6.1 or newer (README: Set up)"

# The man pages: the generate-manual plugin builds every product in the configuration and runs
# each executable's --experimental-dump-help. Then, for a release, prefsd and prefsctl are linked
# again with Swift's libraries in, so they run where no Swift is installed.
echo "install.sh: building ($configuration) and generating the man pages" >&2
swift package generate-manual --configuration "$configuration" >&2
manuals=.build/plugins/GenerateManual/outputs
for product in prefsd prefsctl; do
    swift build -c "$configuration" "${static[@]}" --product "$product" >&2
done
bin=$(swift build -c "$configuration" --show-bin-path)

staging=$(mktemp -d /tmp/prefsd-install-XXXXXX)
trap 'rm -rf "$staging"' EXIT
for shell in bash zsh fish; do
    "$bin/prefsctl" --generate-completion-script "$shell" >"$staging/prefsctl.$shell"
done
# generate-manual writes a blank line between a discussion's paragraphs, which mdoc warns about:
# its paragraph break is .Pp.
for page in prefsd prefsctl; do
    sed 's/^$/.Pp/' "$manuals/$page/$page.1" >"$staging/$page.1"
done
sed "s|^ExecStart=%h/.local/bin/prefsd |ExecStart=$prefix/bin/prefsd |" Scripts/prefsd.service >"$staging/prefsd.service"
grep -q "^ExecStart=$prefix/bin/prefsd " "$staging/prefsd.service" || fail "Scripts/prefsd.service has no ExecStart line to point at $prefix/bin/prefsd"

put() { # mode, source, destination
    install -D -m "$1" "$2" "$3"
    echo "$3"
}
put 755 "$bin/prefsd" "$prefix/bin/prefsd"
put 755 "$bin/prefsctl" "$prefix/bin/prefsctl"
put 644 "$staging/prefsctl.bash" "$prefix/share/bash-completion/completions/prefsctl"
put 644 "$staging/prefsctl.zsh" "$prefix/share/zsh/site-functions/_prefsctl"
put 644 "$staging/prefsctl.fish" "$prefix/share/fish/vendor_completions.d/prefsctl.fish"
put 644 "$staging/prefsctl.1" "$prefix/share/man/man1/prefsctl.1"
put 644 "$staging/prefsd.1" "$prefix/share/man/man1/prefsd.1"
put 644 "$staging/prefsd.service" "$unit_dir/prefsd.service"
