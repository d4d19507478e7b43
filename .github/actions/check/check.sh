#!/usr/bin/env bash
# The gpumem check action's check step: expands the file globs, runs `gpumem check FILE ... --json`
# once per file and leaves each outcome in RESULTS_DIR (i.file, i.code, i.json, i.err) for summary.mjs,
# which writes the verdict table and decides the step's exit code.
#
#   check.sh GPUMEM RESULTS_DIR
#
# Inputs come from the environment (the action passes them there, never into this script's text):
#   INPUT_FILES          globs separated by spaces or newlines; ** matches across folders
#   INPUT_GPU, INPUT_NUM_GPUS, INPUT_GPUS_PER_NODE, INPUT_MODEL
#                        passed on as --gpu, --num-gpus, --gpus-per-node, --model when not empty
#   INPUT_ARGS           further arguments for gpumem check, split on whitespace (e.g. --seq-len 4096)
# A glob that matches nothing is a failure: a typo must not turn into a passing job with nothing checked.
set -uo pipefail

if [ $# -ne 2 ]; then
  echo "usage: check.sh GPUMEM RESULTS_DIR" >&2
  exit 2
fi
cli=$1
out=$2
mkdir -p "$out"

args=()
[ -z "${INPUT_GPU:-}" ] || args+=(--gpu "$INPUT_GPU")
[ -z "${INPUT_NUM_GPUS:-}" ] || args+=(--num-gpus "$INPUT_NUM_GPUS")
[ -z "${INPUT_GPUS_PER_NODE:-}" ] || args+=(--gpus-per-node "$INPUT_GPUS_PER_NODE")
[ -z "${INPUT_MODEL:-}" ] || args+=(--model "$INPUT_MODEL")
set -f  # split INPUT_ARGS and INPUT_FILES on whitespace without expanding anything yet
# shellcheck disable=SC2206
extra=(${INPUT_ARGS:-})
# shellcheck disable=SC2206
patterns=(${INPUT_FILES:-})
set +f
args+=("${extra[@]}")

if [ ${#patterns[@]} -eq 0 ]; then
  echo "gpumem check: the files input is empty" >&2
  exit 1
fi
[ -x "$cli" ] || { echo "gpumem check: no gpumem CLI at $cli" >&2; exit 1; }

shopt -s globstar nullglob
declare -A seen=()
files=()
unmatched=0
for p in "${patterns[@]}"; do
  # shellcheck disable=SC2206
  matches=($p)  # the glob expands here (nullglob: to nothing when it matches nothing)
  if [ ${#matches[@]} -eq 0 ]; then
    echo "gpumem check: no file matches '$p'" >&2
    unmatched=1
    continue
  fi
  found=0
  for f in "${matches[@]}"; do
    [ -f "$f" ] || continue
    found=1
    [ -z "${seen[$f]:-}" ] || continue
    seen[$f]=1
    files+=("$f")
  done
  if [ "$found" = 0 ]; then
    echo "gpumem check: '$p' matches no regular file (only folders?)" >&2
    unmatched=1
  fi
done
if [ "$unmatched" = 1 ]; then
  if [ -n "${GITHUB_STEP_SUMMARY:-}" ]; then
    printf '### gpumem check: failed\n\nA glob in the files input matched no file (see the log).\n' \
      >>"$GITHUB_STEP_SUMMARY"
  fi
  exit 1
fi

i=0
for f in "${files[@]}"; do
  i=$((i + 1))
  printf '%s' "$f" >"$out/$i.file"
  echo "gpumem check $f ${args[*]} --json"
  "$cli" check "$f" "${args[@]}" --json >"$out/$i.json" 2>"$out/$i.err"
  echo $? >"$out/$i.code"
done
exit 0
