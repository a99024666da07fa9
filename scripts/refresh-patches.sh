#!/usr/bin/env bash
# After editing a chapter's files, re-base its exercise solution patches on the new code.
# A patch may touch several files of its chapter, one section a file, named from the repo root
# (--- a/s02_tools/tools.ts / +++ b/s02_tools/tools.ts; /dev/null on one side for a new or a
# deleted file), so that `git apply s02_tools/exercises/01-list-dir.patch` works there. Each is
# applied, with the fuzz `patch` allows, to a copy of the chapter's .ts files and written again
# against them, so its context lines and line numbers are the current ones. A patch that no longer
# applies is left alone and reported: apply it by hand to a copy of the chapter's .ts files, then
# write it with
#
#   scripts/refresh-patches.sh --from <folder with the solved .ts files> <the patch>
set -u
cd "$(dirname "$0")/.."

# write_patch <chapter> <solved folder>: the unified diff from the chapter's top-level .ts files
# to those in the solved folder, one section per file that differs, on stdout.
write_patch() {
  local chapter=$1 solved=$2 f
  for f in $( (cd "$chapter" && ls -- *.ts; cd "$solved" && ls -- *.ts) 2>/dev/null | sort -u); do
    if [ ! -e "$solved/$f" ]; then
      diff -u --label "a/$chapter/$f" --label /dev/null "$chapter/$f" /dev/null
    elif [ ! -e "$chapter/$f" ]; then
      diff -u --label /dev/null --label "b/$chapter/$f" /dev/null "$solved/$f"
    else
      diff -u --label "a/$chapter/$f" --label "b/$chapter/$f" "$chapter/$f" "$solved/$f"
    fi
    [ $? -le 1 ] || return 2 # diff exits 1 when the files differ: the usual case here
  done
}

if [ "${1:-}" = --from ]; then
  if [ $# -ne 3 ] || [ ! -d "$2" ] || [ ! -f "$3" ]; then
    echo "Usage: scripts/refresh-patches.sh --from <solved folder> <chapter>/exercises/<patch>" >&2
    exit 2
  fi
  solved=$(cd "$2" && pwd)
  write_patch "${3%%/*}" "$solved" > "$3.new" && mv "$3.new" "$3" && echo "wrote      $3"
  exit
fi

for p in s0*/exercises/*.patch; do
  ch=${p%%/*}
  work=$(mktemp -d)
  cp "$ch"/*.ts "$work"/ # the glob leaves out dotfiles (an applied solution) and exercises/
  if patch -s -p2 -d "$work" --no-backup-if-mismatch < "$p" >/dev/null 2>&1; then
    write_patch "$ch" "$work" > "$p.new" && mv "$p.new" "$p"
    echo "refreshed  $p"
  else
    echo "CONFLICT   $p (apply it by hand, then: scripts/refresh-patches.sh --from <folder> $p)"
  fi
  rm -rf "$work"
done
