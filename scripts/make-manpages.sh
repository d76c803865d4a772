#!/usr/bin/env bash
# wallctl(1) and wallnode(1), made from the binaries' own help: the overview, then every
# subcommand's --help as the program prints it, so the pages say what that build does.
#   scripts/make-manpages.sh BIN_DIR OUT_DIR      (install.sh runs it; writes OUT_DIR/wallctl.1 ...)
# The subcommands are read from --experimental-dump-help (swift-argument-parser's command tree).
set -euo pipefail

bin=${1:?usage: make-manpages.sh BIN_DIR OUT_DIR}
outdir=${2:?usage: make-manpages.sh BIN_DIR OUT_DIR}
checkout=$(cd "$(dirname "$0")/.." && pwd)
date=$(git -C "$checkout" log -1 --format=%cs 2>/dev/null || date +%F)
mkdir -p "$outdir"

# roff: text as it is, in no-fill mode: backslashes escaped, '-' a minus (options are typed), and
# a line that would read as a request (leading . or ') made plain.
escape() { sed -e 's/\\/\\e/g' -e 's/-/\\-/g' -e "s/^\\([.']\\)/\\\\\\&\\1/"; }

for program in wallctl wallnode; do
    tree=$("$bin/$program" --experimental-dump-help)
    abstract=$(jq -r '.command.abstract' <<<"$tree")
    version=$("$bin/$program" --version)
    # Every command path below the program, depth first, but the generated `help`.
    mapfile -t commands < <(jq -r '
        def paths_of(prefix): (prefix + [.commandName]) as $p
            | ($p | join(" ")), (.subcommands[]? | paths_of($p));
        .command | .subcommands[]? | paths_of([])' <<<"$tree" | grep -vx 'help')
    {
        printf '.TH %s 1 "%s" "Lockstep %s" "User Commands"\n' "${program^^}" "$date" "$version"
        printf '.SH NAME\n%s \\- %s\n' "$program" "$(escape <<<"${abstract%.}")"
        printf '.SH SYNOPSIS\n.B %s\n.I subcommand\n.RI [ options ]\n' "$program"
        printf '.SH DESCRIPTION\n.nf\n'
        "$bin/$program" --help | escape
        printf '.fi\n.SH SUBCOMMANDS\n'
        for command in "${commands[@]}"; do
            # shellcheck disable=SC2086 # the path's words are the subcommand's arguments
            printf '.SS "%s %s"\n.nf\n' "$program" "$command"
            "$bin/$program" $command --help | escape
            printf '.fi\n'
        done
        printf '.SH FILES\n'
        printf '.TP\n.I /etc/lockstep/wall.yaml\nThe wall'"'"'s config, the same on every machine.\n'
        printf '.TP\n.I /etc/default/wallnode\nWALLNODE_ID, which node of the config wallnode.service runs.\n'
        printf '.TP\n.I /var/lib/lockstep\nThe timeline a node keeps across restarts.\n'
        printf '.SH SEE ALSO\n'
        printf '/usr/share/doc/lockstep/ (README.md, docs/, the example configs in configs/).\n'
    } >"$outdir/$program.1"
done
