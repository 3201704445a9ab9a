#!/usr/bin/env bash
# The main job on samples/, the way a user meets Decant: build a bundle-ready default store from CSV, seed it into an
# app folder, seed an older Notes store and migrate it to the current model, and convert a legacy archive.
# Usage: samples/demo.sh [path/to/decant]   (run from the repository root; writes only under .build/demo)
set -euo pipefail
DECANT="${1:-.build/release/decant}"
OUT=.build/demo
rm -rf "$OUT"
mkdir -p "$OUT/App"
step() { printf '\n== %s\n' "$*"; }
run() { printf '$ decant %s\n' "$*"; "$DECANT" "$@" --quiet 2>&1 | sed 's/^/  /'; }

step "1. Build the default store an app ships, from CSV (one self-contained file, no -wal to forget)"
run convert samples/books "$OUT/Books.sqlite" --model samples/Books.xcdatamodeld --journal delete
run inspect "$OUT/Books.sqlite" --model samples/Books.xcdatamodeld

step "2. First run: seed it into the app's folder; the second run changes nothing"
run seed --default "$OUT/Books.sqlite" --store "$OUT/App/Books.sqlite" --model samples/Books.xcdatamodeld
run seed --default "$OUT/Books.sqlite" --store "$OUT/App/Books.sqlite" --model samples/Books.xcdatamodeld

step "3. An older Notes store (model version 1) meets the current model (v3: content renamed to text, Folder added)"
run convert samples/notes-v1 "$OUT/NotesV1.sqlite" --model samples/Notes.xcdatamodeld --model-version Notes --journal delete
run plan "$OUT/NotesV1.sqlite" --model samples/Notes.xcdatamodeld
run seed --default "$OUT/NotesV1.sqlite" --store "$OUT/App/Notes.sqlite" --model samples/Notes.xcdatamodeld
run seed --default "$OUT/NotesV1.sqlite" --store "$OUT/App/Notes.sqlite" --model samples/Notes.xcdatamodeld
run convert "$OUT/App/Notes.sqlite" "$OUT/notes.ndjson" --model samples/Notes.xcdatamodeld
sed 's/^/  /' "$OUT/notes.ndjson" | tail -n +2 | head -4

step "4. Legacy data: objects an old version saved with NSKeyedArchiver, into the Notes model"
run inspect samples/LegacyNotes.archive
run convert samples/LegacyNotes.archive "$OUT/Legacy.sqlite" --model samples/Notes.xcdatamodeld --model-version Notes --class LegacyNote=Note
run migrate "$OUT/Legacy.sqlite" --model samples/Notes.xcdatamodeld --output "$OUT/App/LegacyNotes.sqlite"

step "5. What the Notes model looks like (Mermaid, for a pull request)"
run inspect samples/Notes.xcdatamodeld --diagram mermaid
printf '\nEverything the demo wrote is in %s.\n' "$OUT"
