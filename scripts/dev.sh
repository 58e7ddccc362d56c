#!/usr/bin/env bash
# One entry point for a fresh machine: creates .venv, installs the project with everything it
# needs, then runs the demo or the whole test suite.
#   bash scripts/dev.sh demo [shoe demo options]
#   bash scripts/dev.sh test [pytest options]
set -euo pipefail
cd "$(dirname "$0")/.."

what="${1:-}"; shift || true
case "$what" in demo|test) ;; *) echo "usage: bash scripts/dev.sh demo|test [args...]" >&2; exit 2;; esac

python=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
    "$python" -m venv .venv
fi
.venv/bin/python -m pip install --quiet --upgrade pip
.venv/bin/python -m pip install --quiet -e '.[test]'

if [ "$what" = demo ]; then
    exec .venv/bin/shoe demo "$@"
fi

# Debian packages the tests need (browser, card decks, SVG renderer): install what is missing.
mapfile -t wanted < <(sed -e 's/#.*//' -e '/^[[:space:]]*$/d' scripts/debian-packages.txt)
missing=()
for package in "${wanted[@]}"; do
    dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" \
        || missing+=("$package")
done
if [ ${#missing[@]} -gt 0 ]; then
    sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

export PATH="$PWD/.venv/bin:$PATH"
# Two workers, each test file on one (its module fixtures made once), in the order
# tests/conftest.py gives them (files with a slow test first), not by their count of tests.
exec .venv/bin/python -m pytest -n 2 --dist loadscope --no-loadscope-reorder "$@"
