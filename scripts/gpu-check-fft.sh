#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Device check of toru's cuFFT backend (docs/fft.md, "GPU"), in two halves, because the GPU
# machines this project borrows have CUDA, cuFFT, CMake and a compiler but neither MPI nor FFTW
# and no package registry:
#
#   scripts/gpu-check-fft.sh --prepare BUILD_DIR [BUNDLE]   # here, after building with CUDA
#   scripts/gpu-check-fft.sh [BUNDLE]                       # there, in the repository root
#
# --prepare (on the build machine, BUNDLE defaults to .gpu-fft, which it adds to
# .git/info/exclude): copies fft_gpu_test, fft_gpu_nodevice_test and fft_gpu_bench from BUILD_DIR
# (configured with TORU_ENABLE_CUDA, built: `ninja -C BUILD_DIR fft_gpu_test fft_gpu_nodevice_test
# fft_gpu_bench`), stripped, into BUNDLE/bin, and downloads (apt-get download) the Debian packages
# of every shared library they load that is not the C/C++ runtime or CUDA's, plus Open MPI's
# launcher and plugins, into BUNDLE/deb. Carry BUNDLE (the device tool's `carry`; under its 64 MiB).
#
# The run (on the GPU machine, under 10 minutes, exit status 0 only if every check passed):
#  0. dpkg -x every carried package into /tmp/gpu-fft-deps (never into /) and points
#     LD_LIBRARY_PATH, PATH and OPAL_PREFIX there; CUDA's own libraries come from the machine;
#  1. fft_gpu_test on 1, 2 and 3 ranks (all on the one GPU): the cufft plans against the FFTW
#     plans on the same input, round trips, device-buffer validation (a skipped test counts as a
#     failure here: the machine has a GPU);
#  2. fft_gpu_nodevice_test with CUDA_VISIBLE_DEVICES empty: errc::no_device on every rank;
#  3. fft_gpu_bench: 3D 256^3 and 512^3 and 1D 2^26, complex double, toru's cufft plan against
#     bare cuFFT in the same run, median time, GFlop/s and % of the device's measured copy
#     bandwidth (32 N bytes per transform: one read and one write of the array), and the largest
#     difference between the two outputs.
# Logs in $OUT (when the device tool sets it) or /tmp/gpu-check-fft.*.
set -u
libs_skip='^(linux-vdso|ld-linux|libc\.|libm\.|libdl\.|librt\.|libpthread\.|libstdc\+\+|libgcc_s|libcuda\.|libcudart|libcufft|libnvJitLink|libcublas)'

if [[ ${1:-} == --prepare ]]; then
  build=${2:?usage: gpu-check-fft.sh --prepare BUILD_DIR [BUNDLE]}
  bundle=${3:-.gpu-fft}
  mkdir -p "$bundle/bin" "$bundle/deb"
  grep -qx "/$bundle/" .git/info/exclude 2>/dev/null || echo "/$bundle/" >>.git/info/exclude
  bins=()
  for t in fft_gpu_test fft_gpu_nodevice_test fft_gpu_bench; do
    f=$(find "$build" -type f -name "$t" -perm -u+x | head -n1)
    [[ -n $f ]] || { echo "gpu-check-fft: $t not built in $build (configure with CUDA, build it)" >&2; exit 2; }
    strip -o "$bundle/bin/$t" "$f"
    bins+=("$bundle/bin/$t")
  done
  # The packages behind every non-runtime library the programs load, and Open MPI's launcher
  # (mpiexec, its daemon) and plugins (loaded at run time, so ldd does not list them).
  mapfile -t files < <(ldd "${bins[@]}" | awk '/=> \//{print $1" "$3}' | grep -Ev "$libs_skip" | awk '{print $2}' | sort -u)
  mapfile -t pkgs < <(for f in "${files[@]}"; do dpkg -S "$(readlink -f "$f")" 2>/dev/null || dpkg -S "$f" 2>/dev/null; done |
    cut -d: -f1 | sort -u)
  pkgs+=(openmpi-bin openmpi-common libopenmpi3 libpmix2 libevent-core-2.1-7 libevent-pthreads-2.1-7 libhwloc15 libhwloc-plugins)
  mapfile -t pkgs < <(printf '%s\n' "${pkgs[@]}" | sort -u)
  echo "gpu-check-fft: packages: ${pkgs[*]}"
  (cd "$bundle/deb" && apt-get download "${pkgs[@]}") || { echo "gpu-check-fft: apt-get download failed" >&2; exit 2; }
  du -sh "$bundle"
  echo "gpu-check-fft: carry '$bundle' and run: bash scripts/gpu-check-fft.sh $bundle"
  exit 0
fi

bundle=${1:-.gpu-fft}
log=${OUT:-$(mktemp -d /tmp/gpu-check-fft.XXXXXX)}
deps=/tmp/gpu-fft-deps
status=0
declare -a summary
note() { summary+=("$1"); }
[[ -d $bundle/bin ]] || { echo "gpu-check-fft: $bundle/bin missing (run --prepare where toru was built)" >&2; exit 2; }

echo "== 0. device and carried packages"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1 | tee "$log/device.txt"
mkdir -p "$deps"
for f in "$bundle"/deb/*.deb; do dpkg -x "$f" "$deps" || { echo "dpkg -x $f failed" >&2; exit 2; }; done
multi=$deps/usr/lib/x86_64-linux-gnu
export LD_LIBRARY_PATH=$multi:$multi/openmpi/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export PATH=$deps/usr/bin:$PATH
# Debian's Open MPI finds its plugins and help files relative to its prefix; its mpiexec is an
# alternatives link that dpkg -x does not make, so the launcher is called by its own name.
export OPAL_PREFIX=$deps/usr
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl_vader_single_copy_mechanism=none
mpi=("$deps/usr/bin/orterun" --oversubscribe --bind-to none)
"${mpi[@]}" -n 1 true 2>&1 | tail -n3 || true

echo "== 1. fft_gpu_test (cufft against fftw) on 1, 2, 3 ranks"
for n in 1 2 3; do
  timeout 150 "${mpi[@]}" -n "$n" "$bundle/bin/fft_gpu_test" >"$log/gpu_test_np$n.txt" 2>&1
  rc=$?
  tail -n 4 "$log/gpu_test_np$n.txt"
  if [[ $rc -ne 0 ]]; then
    note "1 fft_gpu_test np$n: FAILED (rc $rc, $log/gpu_test_np$n.txt)"
    status=1
  elif grep -q "SKIPPED" "$log/gpu_test_np$n.txt"; then
    note "1 fft_gpu_test np$n: SKIPPED (no device seen: $log/gpu_test_np$n.txt)"
    status=1
  else
    note "1 fft_gpu_test np$n: passed"
  fi
done

echo "== 2. fft_gpu_nodevice_test (every device hidden)"
CUDA_VISIBLE_DEVICES= timeout 60 "${mpi[@]}" -n 2 "$bundle/bin/fft_gpu_nodevice_test" >"$log/nodevice.txt" 2>&1
rc=$?
tail -n 2 "$log/nodevice.txt"
if [[ $rc -eq 0 ]]; then note "2 fft_gpu_nodevice_test np2: passed"; else note "2 fft_gpu_nodevice_test np2: FAILED (rc $rc)"; status=1; fi

echo "== 3. fft_gpu_bench (3D 256^3, 512^3, 1D 2^26; toru cufft against bare cuFFT)"
timeout 240 "${mpi[@]}" -n 1 "$bundle/bin/fft_gpu_bench" --n3 256,512 --n1 67108864 --reps 10 2>&1 | tee "$log/bench.txt"
rc=${PIPESTATUS[0]}
if [[ $rc -ne 0 ]]; then
  note "3 fft_gpu_bench: FAILED (rc $rc)"
  status=1
elif awk '/max rel diff/ {if ($NF + 0 > 1e-9) bad = 1} END {exit !bad}' "$log/bench.txt"; then
  note "3 fft_gpu_bench: toru's output differs from cuFFT's by more than 1e-9 (see $log/bench.txt)"
  status=1
else
  note "3 fft_gpu_bench: ran (figures above; outputs agree with cuFFT)"
fi

echo "== summary"
printf '%s\n' "${summary[@]}"
exit $status
