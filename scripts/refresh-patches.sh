#!/usr/bin/env bash
# After editing a chapter's code.ts, re-base its exercise solution patches on the new code.
# A patch whose hunks no longer apply is left alone and reported: fix that one by hand.
set -u
cd "$(dirname "$0")/.."
for p in s0*/exercises/*.patch; do
  ch=${p%%/*}
  out=$(mktemp)
  if patch -s -o "$out" "$ch/code.ts" "$p" >/dev/null 2>&1; then
    diff -u --label a/code.ts --label b/code.ts "$ch/code.ts" "$out" > "$p.new"; mv "$p.new" "$p"
    echo "refreshed  $p"
  else
    echo "CONFLICT   $p (apply it by hand, then: diff -u --label a/code.ts --label b/code.ts code.ts solved.ts)"
  fi
  rm -f "$out" "$out.rej" "$out.orig"
done
