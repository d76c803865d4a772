#!/usr/bin/env bash
# The runtime package list the documentation gives names every package of scripts/runtime-packages,
# the list the .deb depends on and check-install holds the binaries' libraries to:
#   scripts/check-runtime-list.sh [DOC...]      (make check-runtime-list; check-release runs it)
# It passes when one of the documents (README.md and docs/OPERATIONS.md by default, whichever
# exist) names them all, each spelt in full as apt takes it; else it names what each one lacks and
# prints the line that would complete it.
set -euo pipefail
cd "$(dirname "$0")/.."

docs=("$@")
[[ ${#docs[@]} -gt 0 ]] || docs=(README.md docs/OPERATIONS.md)
mapfile -t packages < <(grep -vE '^[[:space:]]*(#|$)' scripts/runtime-packages)

checked=0
report=()
for doc in "${docs[@]}"; do
    [[ -f "$doc" ]] || continue
    checked=$((checked + 1))
    # The document's words: split at spaces and markdown punctuation, a sentence's last dot dropped.
    words=$(tr -s ' \t`,;:()[]*"|' '\n' <"$doc" | sed 's/\.$//' | sort -u)
    missing=()
    for package in "${packages[@]}"; do
        grep -qxF -- "$package" <<<"$words" || missing+=("$package")
    done
    if [[ ${#missing[@]} -eq 0 ]]; then
        echo "check-runtime-list: $doc names all ${#packages[@]} packages of scripts/runtime-packages"
        exit 0
    fi
    report+=("$doc lacks ${#missing[@]} of the ${#packages[@]}: ${missing[*]}")
done

if [[ $checked -eq 0 ]]; then
    echo "check-runtime-list: none of ${docs[*]} exists" >&2
    exit 1
fi
for line in "${report[@]}"; do echo "check-runtime-list: $line" >&2; done
echo "check-runtime-list: the full list, as scripts/runtime-packages has it:" >&2
echo "  ${packages[*]}" >&2
exit 1
