#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# toru-dns's command line: outputs, restart (bit-identical series on the same rank count; any
# rank count reads the checkpoint), and the exit codes and messages of bad input.
# usage: cli_test.sh TORU_DNS WORKDIR MPIEXEC [MPIEXEC FLAGS...]
set -u
dns=$1 work=$2 mpiexec=$3
shift 3
flags=("$@")
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 1
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
run() { local np=$1; shift; "$mpiexec" -n "$np" "${flags[@]}" "$dns" "$@"; }

# A run with every output.
run 2 --n 16 --re 100 --steps 6 --out a --checkpoint-every 3 --spectra-at 0.05 --json --quiet >a.json 2>a.err
[ $? -eq 0 ] || fail "plain run: exit $? ($(cat a.err))"
[ "$(wc -l <a.json)" -eq 1 ] || fail "--json: expected one line on stdout, got $(wc -l <a.json)"
for key in '"time_per_step"' '"fft_share"' '"pointwise_share"' '"peak_eps"' '"digest"'; do
  grep -q "$key" a.json || fail "--json: no $key in $(cat a.json)"
done
[ "$(wc -l <a/series.jsonl)" -eq 7 ] || fail "series.jsonl: expected 7 lines (steps 0-6), got $(wc -l <a/series.jsonl)"
for key in '"step"' '"t"' '"dt"' '"E"' '"eps"' '"umax"' '"divmax"'; do
  grep -q "$key" <(head -1 a/series.jsonl) || fail "series.jsonl: no $key"
done
for f in a/checkpoint-3.bin a/checkpoint-6.bin a/spectrum-0.0500.json a/dissipation.svg a/spectrum.svg a/energy.svg; do
  [ -s "$f" ] || fail "missing output $f"
done
ls a/*.tmp >/dev/null 2>&1 && fail "a temporary checkpoint was left behind"
grep -q '<polyline' a/dissipation.svg || fail "dissipation.svg has no curve"

# Restart on the same rank count: the series continues bit for bit.
run 2 --restart a/checkpoint-3.bin --steps 3 --out b --quiet >b.out 2>b.err || fail "restart: exit $? ($(cat b.err))"
sed -n '4,7p' a/series.jsonl >a.tail
cat b/series.jsonl >b.all
cmp -s a.tail b.all || fail "restart: series differ: $(diff a.tail b.all | head -4)"
# Restart in the same directory keeps the earlier lines and replaces the later ones.
cp -r a c && run 2 --restart c/checkpoint-3.bin --steps 3 --out c --quiet >/dev/null 2>&1
cmp -s a/series.jsonl c/series.jsonl || fail "restart in place: series.jsonl differs from the uninterrupted run"
# On other rank counts and decompositions it reads and runs.
run 3 --restart a/checkpoint-3.bin --steps 3 --out d --quiet --json >d.json 2>d.err || fail "restart on 3 ranks: $(cat d.err)"
run 1 --restart a/checkpoint-6.bin --steps 1 --out e --quiet --decomp pencil >/dev/null 2>e.err || fail "restart on 1 rank: $(cat e.err)"
run 2 --n 16 --re 100 --steps 2 --out f --fft fftw-mpi --quiet >/dev/null 2>f.err || fail "--fft fftw-mpi: $(cat f.err)"
# Batched vector transforms: the first run again, the same energy to round-off.
run 2 --n 16 --re 100 --steps 6 --out h --checkpoint-every 3 --spectra-at 0.05 --fft-batch --json --quiet >h.json 2>h.err || fail "--fft-batch: $(cat h.err)"
grep -q '"fft_batched":true' h.json || fail "--fft-batch: no \"fft_batched\":true in $(cat h.json)"
energy() { sed -n '$s/.*"E":\([^,}]*\).*/\1/p' "$1"; }
awk -v a="$(energy a/series.jsonl)" -v b="$(energy h/series.jsonl)" 'BEGIN { d = a - b; exit !(a > 0 && d * d < 1e-24 * a * a) }' ||
  fail "--fft-batch: E $(energy h/series.jsonl), unbatched $(energy a/series.jsonl)"

# expect_error CODE PATTERN ARGS...: the exit code and a "toru-dns (rank r): error:" message matching
# PATTERN (apps/common/cli.hpp's convention).
expect_error() {
  local code=$1 pattern=$2; shift 2
  run 2 "$@" >err.out 2>err.txt
  local rc=$?
  [ "$rc" -eq "$code" ] || fail "$*: exit $rc, expected $code ($(cat err.txt))"
  grep -q "^toru-dns (rank 0): error: .*$pattern" err.txt || fail "$*: no 'toru-dns (rank 0): error: ...$pattern' in: $(cat err.txt)"
}
expect_error 1 "no checkpoint file" --restart nowhere.bin --out g
# --n contradicts the checkpoint: an invalid argument (usage error), not a failed read.
expect_error 2 "holds a 16^3 field, expected 18^3" --restart a/checkpoint-3.bin --n 18 --out g
printf 'garbage' >bad.bin
expect_error 1 "not a toru-dns checkpoint" --restart bad.bin --out g
expect_error 2 "--n" --n abc
expect_error 2 "--n" --n 2
expect_error 2 "--cfl" --cfl 5
expect_error 2 "--ic" --ic vortex
expect_error 2 "--ic" --ic checkpoint
expect_error 2 "--decomp" --fft fftw-mpi --decomp pencil
expect_error 2 "--spectra-at" --spectra-at 1,x
expect_error 2 "--dealias: phase-shift dealiasing is not implemented" --dealias phase-shift

echo "$fails failure(s)"
[ "$fails" -eq 0 ]
