#!/usr/bin/env bash
# The benchmark, in one go on a machine with one NVIDIA H200 (builds nothing there):
# Hugging Face transformers (bf16, sdpa) and cohere2c (bf16 and fp8-rowwise) on the same random
# Command R7B-shaped model. Steps, each run by bench/bench.py or cohere2c-run:
#   checkpoint   a random bf16 checkpoint of the config's shapes (and its FP8-rowwise version)
#   hf           Hugging Face's figures and last-position logits (and, with --reference, the
#                float64 references, full and FP8-rowwise)
#   bf16         cohere2c-run --checkpoint on it, three runs: batch-1 cases, batch 16, batch 64
#   fp8-rowwise  the same with the fp8-rowwise artifact
#   report       checks (cohere2c bf16 against Hugging Face: cosine of the last-position logits
#                at least 0.999; prefix reuse served) and, last, the table
# Exits non-zero if a check fails or a step fails.
#
# Needs, on the GPU machine: the cuda artifacts command-r7b-{bf16,fp8-rowwise}.so, compiled on
# the build machine by test/gpu/build_artifacts.sh into build/gpu-artifacts; cohere2c-run
# (build/bin/cohere2c-run, or --run / $COHERE2C_RUN); python3 with torch, transformers (5.x),
# numpy and safetensors; about 26 GB of disk in the work folder (the checkpoints) and the GPU to
# itself. About 5 minutes on an H200 (each cohere2c-run loads the checkpoint: ~10 s).
#
#   bench/run.sh [--reference make_reference.py] [--markdown FILE] [--artifacts DIR]
#                [--run PATH] [--config CONFIG] [--work DIR] [--steps LIST] [--quantize-on-load]
#                [--commit TEXT]
#
#   --reference FILE    make_reference.py, whose reference_forward gives the float64 FP8-rowwise
#                       and full references; without it those comparisons are skipped
#   --markdown FILE     also write the table there (markdown, for bench/RESULTS.md)
#   --artifacts DIR     where the .so files are (default build/gpu-artifacts)
#   --config CONFIG     the model (default test/data/configs/command-r7b.config.json)
#   --work DIR          keep every input and output there (a checkpoint already there is reused);
#                       default: a temporary folder, removed at the end
#   --steps LIST        comma-separated subset of checkpoint,hf,bf16,fp8-rowwise,report (default
#                       all), e.g. to split the run over several commands with one --work
#   --quantize-on-load  fp8-rowwise loads the bf16 checkpoint and quantizes as it loads (about a
#                       minute more per cohere2c-run) instead of the FP8-rowwise checkpoint
#   --commit TEXT       the commit measured, for the table (default: git describe, if .git is here)
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
python=${PYTHON:-python3}
run=${COHERE2C_RUN:-$root/build/bin/cohere2c-run}
art=$root/build/gpu-artifacts
config=$root/test/data/configs/command-r7b.config.json
reference="" markdown="" work="" steps="checkpoint,hf,bf16,fp8-rowwise,report" quantize_on_load=0
commit=$(git -C "$root" describe --always --dirty 2>/dev/null || echo unknown)
while (($#)); do
  case $1 in
    --reference) reference=$(realpath -m "$2"); shift 2 ;;
    --markdown) markdown=$(realpath -m "$2"); shift 2 ;;
    --artifacts) art=$(realpath -m "$2"); shift 2 ;;
    --run) run=$(realpath -m "$2"); shift 2 ;;
    --config) config=$(realpath -m "$2"); shift 2 ;;
    --work) work=$(realpath -m "$2"); shift 2 ;;
    --steps) steps=$2; shift 2 ;;
    --quantize-on-load) quantize_on_load=1; shift ;;
    --commit) commit=$2; shift 2 ;;
    -h|--help) sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "run.sh: unknown argument '$1' (--help lists them)" >&2; exit 2 ;;
  esac
done
want() { [[ ",$steps," == *",$1,"* ]]; }
log() { printf '[%4ds] %s\n' "$SECONDS" "$*"; }
if [[ -z $work ]]; then
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
fi
mkdir -p "$work"
failures=0
device=$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1)
log "device: ${device:-none found}; commit $commit; work folder $work"

# Fail now rather than minutes in: what the steps asked for need.
problems=()
if want bf16 || want fp8-rowwise; then
  if ! "$run" --help 2>/dev/null | grep -q logits_from; then
    problems+=("$run: not found, or a cohere2c-run without logits_from in --requests (rebuild it)")
  fi
  for precision in bf16 fp8-rowwise; do
    want "$precision" && [[ ! -f $art/command-r7b-$precision.so ]] &&
      problems+=("$art/command-r7b-$precision.so: missing (test/gpu/build_artifacts.sh makes it)")
  done
fi
if want checkpoint || want hf; then
  "$python" -c "import torch, transformers, numpy, safetensors" 2>/dev/null ||
    problems+=("$python cannot import torch, transformers, numpy and safetensors")
fi
[[ -n $reference && ! -f $reference ]] && problems+=("--reference $reference: no such file")
if ! want checkpoint && [[ ! -f $work/checkpoint/config.json ]] &&
    { want hf || want bf16 || want fp8-rowwise; }; then
  problems+=("$work/checkpoint: no checkpoint there; add the checkpoint step")
fi
if ((${#problems[@]})); then
  printf 'run.sh: %s\n' "${problems[@]}" >&2
  exit 1
fi

"$python" "$here/bench.py" cases --config "$config" --work "$work" || exit 1

if want checkpoint; then
  if [[ -f $work/checkpoint/config.json && -f $work/checkpoint-fp8/config.json ]]; then
    log "checkpoint: reusing $work/checkpoint"
  else
    log "checkpoint"
    rm -rf "$work/checkpoint" "$work/checkpoint-fp8"
    "$python" "$here/bench.py" checkpoint --config "$config" --out "$work/checkpoint" \
      --fp8-out "$work/checkpoint-fp8" || { echo "FAIL: checkpoint"; exit 1; }
  fi
fi

if want hf; then
  log "hf: Hugging Face transformers"
  "$python" "$here/bench.py" hf --checkpoint "$work/checkpoint" --work "$work" \
    ${reference:+--reference "$reference"} || { echo "FAIL: hf"; failures=$((failures + 1)); }
fi

for precision in bf16 fp8-rowwise; do
  want "$precision" || continue
  checkpoint=$work/checkpoint
  [[ $precision == fp8-rowwise && $quantize_on_load == 0 ]] && checkpoint=$work/checkpoint-fp8
  # runs.tsv (from bench.py cases): name, requests file, --max-batch, --kv-blocks,
  # --max-num-batched-tokens (0: the default), logits or -.
  while IFS=$'\t' read -r name requests batch blocks step_tokens logits; do
    out=$work/c2c-$precision-$name
    options=(--max-batch "$batch" --ignore-eos)
    [[ $blocks != 0 ]] && options+=(--kv-blocks "$blocks")
    [[ $step_tokens != 0 ]] && options+=(--max-num-batched-tokens "$step_tokens")
    if [[ $logits == logits ]]; then
      rm -rf "$out-logits" && mkdir -p "$out-logits"
      options+=(--logits-dir "$out-logits")
    fi
    log "cohere2c $precision $name: $requests ${options[*]}"
    if "$run" "$art/command-r7b-$precision.so" --checkpoint "$checkpoint" \
        --requests "$work/$requests" "${options[@]}" > "$out.jsonl" 2> "$out.err"; then
      grep -E '^(device|prefill|kv cache):' "$out.err"
    else
      echo "FAIL: cohere2c $precision $name"
      tail -5 "$out.err"
      failures=$((failures + 1))
    fi
  done < "$work/runs.tsv"
done

log "steps done, $failures failed"
if want report; then  # last: the report ends with the table
  "$python" "$here/bench.py" report --config "$config" --work "$work" \
    ${markdown:+--markdown "$markdown"} --device "${device:-unknown device}" --commit "$commit" ||
    failures=$((failures + 1))
fi
exit $((failures > 0))
