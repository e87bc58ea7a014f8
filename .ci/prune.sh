#!/usr/bin/env bash
# Keeps CI's cached target directories from growing without bound. Every change under src/
# gives each test, bench and example executable a new hash, and cargo never deletes the old
# ones: in the heavy workspace each was ~1 GB (DataFusion with full debug info; ~0.5 GB with
# line tables only), so a few dozen runs filled the disk and a CI run died linking ("No space
# left on device"). This deletes, in each <target>/<profile>/{deps,examples} directory given,
# every executable that a newer one of the same name has superseded, and the incremental caches (CI builds with CARGO_INCREMENTAL=0).
# Libraries (.rlib, .rmeta, .so) and the newest PRUNE_KEEP executables of each name stay, so
# the cache stays warm: 1 (the default) where every test, bench, example and binary name is
# unique in its workspace (the heavy one), 3 in the root workspace, where one name can be up
# to three current executables (the `rpcscan` library's tests, the CLI binary and its tests;
# several crates have a test named `spec` or `proxy`). Deleting a current one is only a cost
# (cargo rebuilds it), never a wrong result. Then it prints the free space, and warns loudly
# below 15 GB.
#
#   usage: [PRUNE_KEEP=N] .ci/prune.sh TARGET_DIR...
set -euo pipefail
keep="${PRUNE_KEEP:-1}"

for target in "$@"; do
  [ -d "$target" ] || continue
  before=$(du -sm "$target" | cut -f1)
  for dir in "$target"/*/deps "$target"/*/examples "$target"/*/*/deps "$target"/*/*/examples; do
    [ -d "$dir" ] || continue
    # Executables are the files without an extension named <name>-<16 hex>; list them newest
    # first and keep the first $keep of each <name>.
    find "$dir" -maxdepth 1 -type f -perm -u+x -regextype posix-extended \
      -regex '.*/[^/.]+-[0-9a-f]{16}' -printf '%T@ %p\n' |
      sort -rn | cut -d' ' -f2- |
      awk -v keep="$keep" '{ n = $0; sub(/.*\//, "", n); sub(/-[0-9a-f]+$/, "", n); if (++seen[n] > keep) print }' |
      xargs -r rm -f
  done
  rm -rf "$target"/*/incremental
  after=$(du -sm "$target" | cut -f1)
  echo "prune: $target: ${before} MB -> ${after} MB"
done

# The first directory may not exist yet (a cold cache): ask about the nearest one that does.
probe="${1:-.}"
while [ ! -e "$probe" ]; do probe=$(dirname "$probe"); done
free_gb=$(df -Pk "$probe" | awk 'NR == 2 { print int($4 / 1048576) }')
echo "prune: ${free_gb:-?} GB free"
if [ -n "${free_gb:-}" ] && [ "$free_gb" -lt 15 ]; then
  echo "!!! prune: only ${free_gb} GB free: the heavy build needs ~20 GB (DataFusion, Ballista)"
fi
