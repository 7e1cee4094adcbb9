#!/usr/bin/env bash
# ctest's entry for the GPU checks: skipped, loudly, where no NVIDIA GPU is
# usable (CI); elsewhere compiles the cuda artifacts and runs run_all.sh.
here=$(cd "$(dirname "$0")" && pwd)
if ! nvidia-smi -L > /dev/null 2>&1; then
  echo "SKIPPED: no usable NVIDIA GPU here; the GPU checks (test/gpu/run_all.sh) need one"
  exit 77
fi
"$here/build_artifacts.sh" && "$here/run_all.sh"
