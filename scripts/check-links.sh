#!/usr/bin/env bash
# Checks every relative markdown link in README.md and docs/*.md, with no network: `[text](path)` and
# `![alt](path)` must name a file or folder that exists (relative to the file the link is in), and
# `[text](path#anchor)` or `[text](#anchor)` a heading of that markdown file, by GitHub's anchor
# rules (lowercase; spaces become '-'; punctuation other than '-' and '_' is dropped; a repeated
# heading gets -1, -2, ...). Links to http(s) and mailto are not checked, nor anything inside fenced
# code blocks or inline code spans. Reference-style links (`[text]: path`) are not used here and not
# read.
#
#   scripts/check-links.sh [FILE.md ...]      (default: README.md docs/*.md)
#
# Prints each broken link as FILE:LINE: TARGET: why, then a count; exits 1 when any is broken.
set -euo pipefail
cd "$(dirname "$0")/.."
export LC_ALL=C.UTF-8

# Files a later build step generates, so a link to them may come before they exist. Keep this list
# to what is really generated: each entry is a path from the repository's root. (None today.)
generated=()

if [[ $# -gt 0 ]]; then files=("$@"); else files=(README.md docs/*.md); fi

# The anchors of a markdown file's headings, one a line, outside fenced code blocks.
anchors() {
    local file=$1 line text slug fence=""
    declare -A seen=()
    while IFS= read -r line || [[ -n $line ]]; do
        if [[ $line =~ ^[[:space:]]{0,3}(\`\`\`|~~~) ]]; then
            if [[ -z $fence ]]; then fence=${BASH_REMATCH[1]}; elif [[ ${BASH_REMATCH[1]} == "$fence" ]]; then fence=""; fi
            continue
        fi
        [[ -n $fence ]] && continue
        [[ $line =~ ^[[:space:]]{0,3}#{1,6}[[:space:]]+(.*)$ ]] || continue
        text=${BASH_REMATCH[1]}
        slug=$(printf '%s\n' "$text" | sed -E \
            -e 's/[[:space:]]+#+[[:space:]]*$//' \
            -e 's/!?\[([^]]*)\]\([^)]*\)/\1/g' \
            -e 's/<[^>]*>//g' \
            -e 's/.*/\L&/' \
            -e 's/[^[:alnum:] _-]//g' \
            -e 's/ /-/g')
        if [[ -n ${seen[$slug]+set} ]]; then
            seen[$slug]=$((seen[$slug] + 1))
            printf '%s-%s\n' "$slug" "${seen[$slug]}"
        else
            seen[$slug]=0
            printf '%s\n' "$slug"
        fi
    done <"$file"
}

declare -A anchor_cache=()
has_anchor() {
    local file=$1 anchor=$2
    if [[ -z ${anchor_cache[$file]+set} ]]; then
        anchor_cache[$file]=$'\n'"$(anchors "$file")"$'\n'
    fi
    [[ ${anchor_cache[$file]} == *$'\n'"$anchor"$'\n'* ]]
}

is_generated() {
    local path=$1 entry
    for entry in "${generated[@]}"; do [[ $path == "$entry" ]] && return 0; done
    return 1
}

checked=0
broken=0
report() {
    printf '%s:%s: %s: %s\n' "$1" "$2" "$3" "$4"
    broken=$((broken + 1))
}

for file in "${files[@]}"; do
    dir=$(dirname "$file")
    number=0
    fence=""
    while IFS= read -r line || [[ -n $line ]]; do
        number=$((number + 1))
        if [[ $line =~ ^[[:space:]]{0,3}(\`\`\`|~~~) ]]; then
            if [[ -z $fence ]]; then fence=${BASH_REMATCH[1]}; elif [[ ${BASH_REMATCH[1]} == "$fence" ]]; then fence=""; fi
            continue
        fi
        [[ -n $fence ]] && continue
        [[ $line == *"]("* ]] || continue
        # Inline code spans may hold brackets and parentheses that are no link; drop them first.
        stripped=$(printf '%s\n' "$line" | sed -E 's/`[^`]*`//g')
        while IFS= read -r target; do
            [[ -z $target ]] && continue
            target=${target#](}
            target=${target%)}
            target=${target%% *} # a title after the path ("...") is not part of it
            target=${target#<}
            target=${target%>}
            case $target in
                http://* | https://* | mailto:*) continue ;;
            esac
            checked=$((checked + 1))
            path=${target%%#*}
            anchor=""
            [[ $target == *"#"* ]] && anchor=${target#*#}
            if [[ -z $path ]]; then
                resolved=$file
            else
                resolved=$(realpath -m --relative-to=. "$dir/$path")
            fi
            if [[ ! -e $resolved ]]; then
                if is_generated "$resolved"; then continue; fi
                report "$file" "$number" "$target" "no such file ($resolved)"
                continue
            fi
            if [[ -n $anchor ]]; then
                if [[ $resolved != *.md ]]; then
                    report "$file" "$number" "$target" "an anchor into a file that is not markdown"
                elif ! has_anchor "$resolved" "$anchor"; then
                    report "$file" "$number" "$target" "no heading with anchor #$anchor in $resolved"
                fi
            fi
        done < <(printf '%s\n' "$stripped" | grep -o '](\(<[^>]*>\|[^)]*\))' || true)
    done <"$file"
done

printf 'check-links: %d relative links checked in %d files, %d broken\n' "$checked" "${#files[@]}" "$broken"
[[ $broken -eq 0 ]]
