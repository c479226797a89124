#!/usr/bin/env bash
# Upload-to-ready time of a folder, before and after the job queue (issue 25), interleaved so both see the
# same load. Usage: scripts/bench_queue.sh BEFORE_TREE AFTER_TREE FOLDER ROUNDS OUT.tsv
# BEFORE_TREE / AFTER_TREE: source trees (each with .venv); the store is a fresh temp folder per run.
# Modes: before = `rag ingest` of the old code (extraction in the process); cli = `rag ingest` of the new code
# (queued, then run by the command's own worker, extraction contained); app = `rag ingest --no-wait` then
# `rag worker --idle-exit 1` as a separate process (what the app does), timed from the enqueue to the last ready.
# Columns: wall seconds, CPU seconds (user + system, the processes and their children), the 1-minute load
# average at the start and the end, the chunks indexed.
set -u
before=$1; after=$2; folder=$3; rounds=$4; out=$5
echo -e "round\tmode\twall_s\tcpu_s\tload1_start\tload1_end\tchunks" > "$out"
load() { cut -d' ' -f1 /proc/loadavg; }
timed() {  # tree cmd... -> appends "wall user sys" to $tfile
  (cd "$1" && shift && /usr/bin/time -a -o "$tfile" -f "%e %U %S" "$@" >/dev/null 2>&1)
}
run() {  # mode tree cmd...
  local mode=$1 tree=$2; shift 2
  local store; store=$(mktemp -d)
  tfile=$(mktemp)
  local l0; l0=$(load)
  local t0; t0=$(date +%s.%N)
  timed "$tree" "$@" --store "$store/s" "$folder"
  if [ "$mode" = app ]; then timed "$tree" .venv/bin/python -m rag worker --store "$store/s" --idle-exit 1; fi
  local t1; t1=$(date +%s.%N)
  local cpu; cpu=$(awk '{s += $2 + $3} END {print s}' "$tfile")
  local chunks; chunks=$(cd "$tree" && .venv/bin/python -m rag status --store "$store/s" --json | .venv/bin/python -c "import json,sys; print(json.load(sys.stdin)['chunks'])")
  echo -e "$r\t$mode\t$(echo "$t1 - $t0" | bc)\t$cpu\t$l0\t$(load)\t$chunks" >> "$out"
  rm -rf "$store" "$tfile"
}
for r in $(seq 1 "$rounds"); do
  run before "$before" .venv/bin/python -m rag ingest
  run cli "$after" .venv/bin/python -m rag ingest
  run app "$after" .venv/bin/python -m rag ingest --no-wait
done
