#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# One-shot device check of the CGDP engine (train/src/cgdp_*.cpp) for a machine with a GPU, under
# 10 minutes. The device machines of this workplace have CUDA, cuDNN (PyTorch's wheel), CMake and
# ninja but no MPI, FFTW, hwloc or oneDNN, and cannot reach a package registry, so the build's
# Debian packages travel with the tree:
#
#   scripts/gpu-check-cgdp.sh --prepare              # here: .gpu-debs/ (~20 MiB, git-ignored)
#   scripts/gpu-check-cgdp.sh --build [BUILD_DIR]    # there (carry .gpu-debs); default build-gpu
#
# --prepare copies the .deb files of the build's dependencies (list below) from apt's cache, or
# downloads them with apt-get, into .gpu-debs/ and adds it to the repository's info/exclude.
# On the device, when no mpiexec is on the PATH and .gpu-debs/ exists, they are unpacked with
# `dpkg -x` into /tmp/toru-sysroot (never into /) and Open MPI is relocated there (OPAL_PREFIX and
# its installation directories); cuDNN comes from the nvidia-cudnn wheel when the system has none.
# --build configures BUILD_DIR (Release, CUDA + cuDNN) if it is not, and builds the three targets
# it needs (toru-train, train_cgdp_test, train_cgdp_device_gpu_test) with -j$(nproc).
# Parts: (1) the device; (2) train_cgdp_device_gpu_test at 1 and 2 ranks: the device path (D2H into
# pinned window memory on a copy stream, host sum + update, H2D on a second stream, per-chunk events
# that the compute stream waits on when the forward reaches each chunk, the forward hook) against a
# serial host loop bitwise, with and without the hook, and the CPU engine to tolerance: must PASS,
# a skip is a failure here; (3) train_cgdp_test at 1 and 4 ranks (host engine); (4) toru-train
# --device cuda --engine cgdp against --device cpu (allreduce and cgdp) on fashion-cnn, median step
# times; (5) CGDP against the allreduce engine on the CPUs at 2 and 4 ranks with --explain (the cost
# model's error). Exit 0 only when every part ran as expected; logs in a printed directory.
# Written for a device, never run on one yet (none was lent when it was written).
set -u
cd "$(dirname "$0")/.." || exit 2
# The build's Debian 12 packages (headers, libraries and what they load at run time).
debs=(openmpi-bin openmpi-common libopenmpi3 libopenmpi-dev libpmix2 libevent-core-2.1-7 libevent-pthreads-2.1-7
  libhwloc15 libhwloc-dev libfabric1 libucx0 libibverbs1 librdmacm1 libnl-3-200 libnl-route-3-200 libpsm2-2
  libpsm-infinipath1 libnuma1 libmunge2 libfftw3-single3 libfftw3-double3 libfftw3-mpi3 libfftw3-dev
  libfftw3-mpi-dev libfmt9 libfmt-dev nlohmann-json3-dev libcli11-dev libgtest-dev libgmock-dev libdnnl2 libdnnl-dev
  ocl-icd-libopencl1 zlib1g zlib1g-dev)
if [[ ${1:-} == --prepare ]]; then
  mkdir -p .gpu-debs
  for p in "${debs[@]}"; do
    f=$(ls /var/cache/apt/archives/"${p}"_*.deb 2>/dev/null | head -n1)
    if [[ -n $f ]]; then
      cp "$f" .gpu-debs/
    else
      (cd .gpu-debs && apt-get download "$p" >/dev/null) || { echo "cannot get $p" >&2; exit 2; }
    fi
  done
  exclude="$(git rev-parse --git-common-dir)/info/exclude"
  grep -qx '/.gpu-debs/' "$exclude" 2>/dev/null || echo '/.gpu-debs/' >>"$exclude"
  echo "gpu-check-cgdp: $(ls .gpu-debs | wc -l) packages, $(du -sh .gpu-debs | cut -f1) in .gpu-debs/; on the device:" \
    "carry .gpu-debs and run scripts/gpu-check-cgdp.sh --build"
  exit 0
fi
do_build=0
if [[ ${1:-} == --build ]]; then
  do_build=1
  shift
fi
build=${1:-build-gpu}
cmake_extra=()
mpiexec_bin=mpiexec
if ! command -v mpiexec >/dev/null && [[ -d .gpu-debs ]]; then
  echo "== unpacking .gpu-debs into /tmp/toru-sysroot (no MPI on this machine)"
  root=/tmp/toru-sysroot
  arch=x86_64-linux-gnu
  for f in .gpu-debs/*.deb; do dpkg -x "$f" "$root" || { echo "dpkg -x $f failed" >&2; exit 2; }; done
  export PATH=$root/usr/bin:$PATH
  export LD_LIBRARY_PATH=$root/usr/lib/$arch:$root/usr/lib/$arch/openmpi/lib:${LD_LIBRARY_PATH:-}
  # Debian's Open MPI, relocated: every installation directory it derives at run time.
  export OPAL_PREFIX=$root/usr OPAL_EXEC_PREFIX=$root/usr OPAL_BINDIR=$root/usr/bin OPAL_DATADIR=$root/usr/share
  export OPAL_LIBDIR=$root/usr/lib/$arch/openmpi/lib OPAL_INCLUDEDIR=$root/usr/lib/$arch/openmpi/include
  export OPAL_PKGDATADIR=$root/usr/share/openmpi OPAL_PKGLIBDIR=$root/usr/lib/$arch/openmpi/lib/openmpi3
  export OPAL_SYSCONFDIR=$root/etc/openmpi
  mpiexec_bin=$root/usr/bin/mpiexec.openmpi
  cmake_extra+=(-DCMAKE_PREFIX_PATH="$root/usr" -DMPI_C_COMPILER="$root/usr/bin/mpicc.openmpi"
    -DMPI_CXX_COMPILER="$root/usr/bin/mpicxx.openmpi" -DMPIEXEC_EXECUTABLE="$mpiexec_bin")
fi
if ! ldconfig -p 2>/dev/null | grep -q libcudnn.so; then
  # PyTorch's cuDNN wheel (headers and libraries) when the system has none.
  cudnn=$(python3 -c 'import nvidia.cudnn as c; print(list(c.__path__)[0])' 2>/dev/null)
  lib=$(ls "$cudnn"/lib/libcudnn.so* 2>/dev/null | head -n1)
  if [[ -n $cudnn && -n $lib && -f $cudnn/include/cudnn.h ]]; then
    cmake_extra+=(-DTORU_CUDNN_LIBRARY="$lib" -DTORU_CUDNN_INCLUDE_DIR="$cudnn/include")
    export LD_LIBRARY_PATH=$cudnn/lib:${LD_LIBRARY_PATH:-}
  fi
fi
log_dir=$(mktemp -d /tmp/gpu-check-cgdp.XXXXXX)
declare -a summary
status=0
note() { summary+=("$1"); }
mpirun=("$mpiexec_bin" --oversubscribe)
[[ $(id -u) -eq 0 ]] && mpirun+=(--allow-run-as-root)
export OMPI_MCA_btl_vader_single_copy_mechanism=none

echo "== device"
if command -v nvidia-smi >/dev/null; then
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$log_dir/device.txt"
else
  echo "no nvidia-smi: the device parts will fail" | tee "$log_dir/device.txt"
fi

if ((do_build)); then
  echo "== build ($build)"
  [[ -f $build/CMakeCache.txt ]] ||
    cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DTORU_BUILD_EXAMPLES=OFF -DTORU_ENABLE_CUDA=ON \
      -DTORU_ENABLE_CUDNN=ON -DCMAKE_CUDA_ARCHITECTURES=90 "${cmake_extra[@]}" >"$log_dir/configure.txt" 2>&1 ||
    { echo "configure failed: $log_dir/configure.txt" >&2; exit 2; }
  cmake --build "$build" -j"$(nproc)" --target toru-train train_cgdp_test train_cgdp_device_gpu_test \
    >"$log_dir/build.txt" 2>&1 || { echo "build failed: $(tail -20 "$log_dir/build.txt")" >&2; exit 2; }
fi

find_bin() { find "$build" -type f -name "$1" -perm -u+x 2>/dev/null | head -n1; }
train=$(find_bin toru-train)
test_bin=$(find_bin train_cgdp_test)
gpu_bin=$(find_bin train_cgdp_device_gpu_test)
if [[ -z $train || -z $test_bin || -z $gpu_bin ]]; then
  echo "gpu-check-cgdp: build toru-train, train_cgdp_test and train_cgdp_device_gpu_test in '$build' first" \
    "(or pass --build; train_cgdp_device_gpu_test exists only when CUDA and cuDNN were found)" >&2
  exit 2
fi

echo "== train_cgdp_device_gpu_test (device path)"
for n in 1 2; do
  log="$log_dir/gpu_test_np$n.txt"
  timeout 180 "${mpirun[@]}" -n $n "$gpu_bin" >"$log" 2>&1
  rc=$?
  if grep -q "SKIPPED" "$log"; then
    note "train_cgdp_device_gpu_test np$n: SKIPPED (no device seen; log $log)"
    status=1
  elif ((rc == 0)); then
    note "train_cgdp_device_gpu_test np$n: passed"
  else
    note "train_cgdp_device_gpu_test np$n: FAILED rc=$rc (log $log)"
    status=1
  fi
done

echo "== train_cgdp_test (host engine)"
for n in 1 4; do
  if timeout 150 "${mpirun[@]}" -n $n "$test_bin" >"$log_dir/test_np$n.txt" 2>&1; then
    note "train_cgdp_test np$n: passed"
  else
    note "train_cgdp_test np$n: FAILED (log $log_dir/test_np$n.txt)"
    status=1
  fi
done

median_of() { python3 -c 'import json,sys
for l in open(sys.argv[1]):
    if "\"summary\"" in l: j=json.loads(l); print(f"{1e3*j[\"step_s_median\"]:.2f} ms (min {1e3*j[\"step_s_min\"]:.2f}, max {1e3*j[\"step_s_max\"]:.2f})")' "$1"; }

echo "== toru-train: --device cuda --engine cgdp against the CPU engines (fashion-cnn, 30 steps)"
args=(--model fashion-cnn --data synthetic --image 28 --batch 64 --steps 30 --no-eval --json --seed 3)
for n in 1 2; do
  for run in "cuda cgdp" "cpu cgdp" "cpu allreduce"; do
    read -r dev eng <<<"$run"
    out="$log_dir/train-$dev-$eng-np$n.jsonl"
    if timeout 150 "${mpirun[@]}" -n $n "$train" "${args[@]}" --device "$dev" --engine "$eng" --chunk-layers 2 \
         >"$out" 2>&1; then
      note "fashion-cnn np$n --device $dev --engine $eng: step $(median_of "$out")"
    else
      note "fashion-cnn np$n --device $dev --engine $eng: FAILED (log $out)"
      status=1
    fi
  done
done

echo "== CGDP vs allreduce on this machine's CPUs (--explain)"
for model in fashion-cnn vgg-small; do
  case $model in
    fashion-cnn) margs=(--model fashion-cnn --data synthetic --image 28 --batch 64) ;;
    vgg-small) margs=(--model vgg16 --data synthetic --image 32 --batch 16) ;;
  esac
  for n in 2 4; do
    for engine in allreduce cgdp; do
      out="$log_dir/$model-$engine-np$n.txt"
      if timeout 120 "${mpirun[@]}" -n $n "$train" "${margs[@]}" --steps 15 --no-eval --threads 2 --engine $engine \
           --chunk-layers 2 --explain >"$out" 2>&1; then
        note "$model np$n $engine: $(grep -o 'measured ([a-z-]*): [0-9.]* ms, error [-+0-9.]*%' "$out")"
      else
        note "$model np$n $engine: FAILED (log $out)"
        status=1
      fi
    done
  done
done

echo
echo "== summary (logs in $log_dir)"
printf '  %s\n' "${summary[@]}"
exit $status
