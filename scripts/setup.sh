#!/usr/bin/env bash
# Installs what cohere2c needs (Debian packages; fast when all is there),
# then configures and builds it in build/ with CMake and Ninja. clang and
# its runtimes are for the fuzz build (.ci/run), libFuzzer being clang's.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)

packages=(cmake ninja-build g++ python3 nodejs curl
          llvm-22-dev libmlir-22-dev mlir-22-tools llvm-22-tools
          nlohmann-json3-dev libgtest-dev libcli11-dev libxxhash-dev
          libutf8proc-dev libpcre2-dev libbenchmark-dev libboost-dev python3-jinja2
          python3-numpy clang-22 libclang-rt-22-dev)
# npm comes with some builds of nodejs and is a package of its own in Debian's.
command -v npm > /dev/null 2>&1 || packages+=(npm)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo=sudo
  echo "setup: installing ${missing[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# The CUDA 13 toolkit (ptxas and libdevice for the cuda target, cuda.h and
# cublasLt.h for the runtime) is not a Debian package here: it must be present.
cuda="${CUDA_HOME:-/usr/local/cuda}"
if [ ! -x "$cuda/bin/ptxas" ] || [ ! -f "$cuda/include/cublasLt.h" ]; then
  echo "setup: the CUDA 13 toolkit is required (ptxas, cuda.h, cublasLt.h); none at $cuda (set CUDA_HOME)" >&2
  exit 1
fi

# The official OpenAI client, for the server's tests (test/serve). npm
# records what it installed in node_modules/.package-lock.json; while that
# is newer than package-lock.json, nothing needs fetching again.
serve="$root/test/serve"
if [ ! "$serve/node_modules/.package-lock.json" -nt "$serve/package-lock.json" ]; then
  (cd "$serve" && npm ci --no-audit --no-fund --loglevel=error)
fi

cmake -S "$root" -B "$root/build" -G Ninja -DCMAKE_BUILD_TYPE=Release
cmake --build "$root/build"
