#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Installs toru's build and test dependencies from Debian 12 packages.
# Idempotent: installs only what is missing, and runs apt-get update only when
# something must be installed. Used by both README commands and by .ci/run.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config git python3 ccache
  openmpi-bin libopenmpi-dev
  libfftw3-dev libfftw3-mpi-dev
  libhwloc-dev libudev-dev  # hwloc.pc names -ludev for static links (pkg-config --static)
  libgtest-dev libgmock-dev libbenchmark-dev
  nlohmann-json3-dev libcli11-dev libfmt-dev
  gfortran
  libonnx-dev libprotobuf-dev protobuf-compiler
  # the job tests' local Slurm (tests/jobs/slurm-local.sh) and its PBS-style qsub
  slurmctld slurmd slurm-client munge slurm-wlm-torque
  # train/: oneDNN kernels, the Fashion-MNIST data, PyTorch as the tests' reference and the peer
  libdnnl-dev dataset-fashion-mnist zlib1g-dev python3-torch python3-torchvision python3-onnx python3-numpy
  # PyTorch's and NumPy's BLAS: with Debian's reference libblas3 alone (what --no-install-recommends
  # leaves) PyTorch's Linear/MatMul run at ~4 GFLOP/s, and the trainer's peer is not a peer
  libopenblas0-pthread
  # bench/fft-compare.sh: mpi4py-fft as a peer of toru's 3D FFTs
  python3-mpi4py-fft
  # python/: the toru Python package (pybind11 bindings, mpi4py's C API)
  pybind11-dev python3-pybind11 python3-dev python3-mpi4py
  # tune/: OTF2 traces (Score-P's format) and PAPI counters where the machine has them
  libotf2-trace-dev otf2-tools libpapi-dev
  # stream/: WebSocket/HTTP server (websocketpp on standalone asio), compression, the browser test
  libwebsocketpp-dev libasio-dev libzstd-dev liblz4-dev libpng-dev chromium
  # topology/bench: ns-3 for the cross-check of the packet model's TCP (optional in CMake)
  libns3-dev
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if ((${#missing[@]} == 0)); then
  echo "install-deps: all ${#packages[@]} packages present"
  exit 0
fi

echo "install-deps: installing ${missing[*]}"
sudo=""
if [[ $(id -u) -ne 0 ]]; then sudo="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
