#!/bin/sh
# The crate's module import graph, roughly: for every file under src/, the crate modules it
# names (`crate::x`, and `super::x` from the files of a directory), outside the
# `#[cfg(test)] mod tests` block at its end. Comment lines are left out; string contents
# are not. tests/layers.rs is the exact check (run it with `-- --nocapture` for its graph).
#
#   scripts/layers.sh            every file
#   scripts/layers.sh simd scan  the files of these modules
set -u
cd "$(dirname "$0")/../src"
if [ "$#" -eq 0 ]; then set -- $(ls -d */ *.rs | sed 's#/$##; s#\.rs$##'); fi
for module in "$@"; do
    for file in $( (ls "$module.rs" 2>/dev/null; find "$module" -name '*.rs' 2>/dev/null) | sort -u); do
        names=$(awk '
            /^#\[cfg\(test\)\]$/ { pending = 1; next }
            pending && /^(pub(\(crate\))? )?mod tests/ { exit }
            { pending = 0 }
            /^[[:space:]]*\/\// { next }
            { print }
        ' "$file" | grep -o 'crate::[A-Za-z_0-9]*\|super::{[^}]*}\|super::[A-Za-z_0-9]*' | sort -u | tr '\n' ' ')
        printf '%-24s %s\n' "$file" "$names"
    done
done
