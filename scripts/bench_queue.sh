#!/usr/bin/env bash
# Upload-to-ready time of a folder, before and after the job queue (issue 25), interleaved so both see the
# same load. Usage: scripts/bench_queue.sh BEFORE_TREE AFTER_TREE FOLDER ROUNDS OUT.tsv
# BEFORE_TREE / AFTER_TREE: source trees (each with .venv); the store is a fresh temp folder per run.
# Modes: before = `rag ingest` of the old code (extraction in the process); cli = `rag ingest` of the new code
# (queued, then run by the command's own worker, extraction contained); app = `rag ingest --no-wait` then
# `rag worker --idle-exit 1` as a separate process (what the app does), timed from the enqueue to the last ready.
set -u
before=$1; after=$2; folder=$3; rounds=$4; out=$5
echo -e "round\tmode\tseconds\tload1_start\tload1_end\tchunks" > "$out"
load() { cut -d' ' -f1 /proc/loadavg; }
run() {  # mode tree cmd...
  local mode=$1 tree=$2; shift 2
  local store; store=$(mktemp -d)
  local l0; l0=$(load)
  local t0; t0=$(date +%s.%N)
  (cd "$tree" && "$@" --store "$store/s" "$folder" >/dev/null 2>&1)
  if [ "$mode" = app ]; then (cd "$tree" && .venv/bin/python -m rag worker --store "$store/s" --idle-exit 1 >/dev/null 2>&1); fi
  local t1; t1=$(date +%s.%N)
  local chunks; chunks=$(cd "$tree" && .venv/bin/python -m rag status --store "$store/s" --json | .venv/bin/python -c "import json,sys; print(json.load(sys.stdin)['chunks'])")
  echo -e "$r\t$mode\t$(echo "$t1 - $t0" | bc)\t$l0\t$(load)\t$chunks" >> "$out"
  rm -rf "$store"
}
for r in $(seq 1 "$rounds"); do
  run before "$before" .venv/bin/python -m rag ingest
  run cli "$after" .venv/bin/python -m rag ingest
  run app "$after" .venv/bin/python -m rag ingest --no-wait
done
