#!/bin/bash
# Which folders of Sources/Courier refer to each other both ways (issue 33, part 4;
# Docs/Architecture.md, "Folder dependencies"). FolderDependenciesTests runs the same analysis
# and fails on a two-way pair that Architecture.md does not name.
#
#   Docs/bench/folder-deps.sh [SOURCES]        (default: Sources/Courier)
#
# A folder is a directory holding .swift files (a subfolder is its own folder: Downloads/Segmented).
# Its types are the names declared at the top level of its files (struct, class, enum, protocol,
# actor, typealias). Folder A uses folder B when a file of A names one of B's types as a whole word,
# string literals and comments removed. Output: "A <-> B  a_to_b b_to_a", one line per two-way pair, then the total.
set -euo pipefail
root=${1:-Sources/Courier}
work=$(mktemp -d /tmp/folder-deps.XXXXXX)
trap 'rm -rf "$work"' EXIT

folders=$(find "$root" -name '*.swift' -printf '%h\n' | sort -u)
name() { local f=${1#"$root"}; f=${f#/}; echo "${f:-.}"; }
key() { echo "$1" | tr './' '__'; }

for dir in $folders; do
    k=$(key "$(name "$dir")")
    # String literals (one-line; their \(…) interpolations kept) and "//" comments out.
    find "$dir" -maxdepth 1 -name '*.swift' -exec perl -pe '
        s{"((?:[^"\\]|\\.)*)"}{join " ", "\"\"", $1 =~ /\\\(((?:[^()]|\((?:[^()]|\([^()]*\))*\))*)\)/g}ge;
        s{(^|[^:])//.*}{$1};' {} + > "$work/$k.src"
    grep -hoE '^((public|package|internal|fileprivate|private|final|indirect|nonisolated|@[A-Za-z]+) +)*(struct|class|enum|protocol|actor|typealias) +[A-Za-z_][A-Za-z0-9_]*' \
        "$dir"/*.swift | awk '{print $NF}' | sort -u > "$work/$k.types" || true
done

count() { # count FROM TO: how many times FROM's files name TO's types
    [ -s "$work/$2.types" ] || { echo 0; return; }
    { grep -owFf "$work/$2.types" "$work/$1.src" || true; } | wc -l
}

pairs=0
for a in $folders; do
    for b in $folders; do
        na=$(name "$a") nb=$(name "$b")
        [[ "$na" < "$nb" ]] || continue
        ab=$(count "$(key "$na")" "$(key "$nb")")
        ba=$(count "$(key "$nb")" "$(key "$na")")
        if [ "$ab" -gt 0 ] && [ "$ba" -gt 0 ]; then
            printf '%-36s %5d %5d\n' "$na <-> $nb" "$ab" "$ba"
            pairs=$((pairs + 1))
        fi
    done
done
echo "two-way pairs: $pairs"
