#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# toru-view's command line: exit codes (0 help, 2 usage, 1 runtime), a demo stream recorded to
# disk and watched live by the dump client, then the recording served by --store and replayed
# from the start: every frame, in order, written to files.
set -uo pipefail
VIEW=$1 WORK=$2
rm -rf "$WORK"; mkdir -p "$WORK"
fail() { echo "FAIL: $*"; exit 1; }
expect_rc() {  # expected-rc message-regex args...
  local want=$1 re=$2; shift 2
  "$VIEW" "$@" >"$WORK/out" 2>"$WORK/err"; local rc=$?
  [ $rc -eq "$want" ] || fail "toru-view $* exited $rc, expected $want: $(cat "$WORK/err")"
  [ -z "$re" ] || grep -Eq "$re" "$WORK/err" "$WORK/out" || fail "toru-view $*: no '$re' in: $(cat "$WORK/err")"
}
expect_rc 0 "Usage" --help
expect_rc 2 "" --bogus
expect_rc 2 "expected one of --store" --port 0
expect_rc 2 "low-water" --demo --low-water 5 --high-water 3
expect_rc 2 "HOST:PORT" --connect localhost
expect_rc 2 "" --policy sometimes --demo
expect_rc 1 "toru-view: error: .*cannot connect" --connect 127.0.0.1:1
expect_rc 1 "toru-view: error: .*store" --store "$WORK/does-not-exist" --port -1

# A demo of 40 steps (2 frames each) recorded, watched live by a TCP viewer that dumps frames.
"$VIEW" --demo --port -1 --tcp-port 0 --address 127.0.0.1 --json --rate 20 --frames 40 --seconds 6 \
  --record "$WORK/rec" >"$WORK/demo.out" 2>"$WORK/demo.err" &
DEMO=$!
for _ in $(seq 50); do [ -s "$WORK/demo.out" ] && break; sleep 0.1; done
PORT=$(sed -n 's/.*"tcp_port":\([0-9]*\).*/\1/p' "$WORK/demo.out" | head -1)
[ -n "$PORT" ] || fail "no port from the demo: $(cat "$WORK/demo.err")"
"$VIEW" --connect 127.0.0.1:$PORT --dump "$WORK/live" --frames 10 --fps 40 --json >"$WORK/live.json" \
  || fail "live dump: $(cat "$WORK/live.json")"
grep -q '"played":10' "$WORK/live.json" || fail "live dump played: $(cat "$WORK/live.json")"
[ "$(wc -l <"$WORK/live/frames.jsonl")" -eq 10 ] || fail "live frames.jsonl"
ls "$WORK/live"/*-field.png >/dev/null 2>&1 || fail "no PNG field frames dumped"
ls "$WORK/live"/*-energy_spectrum.bin >/dev/null 2>&1 || fail "no spectrum frames dumped"
wait $DEMO || fail "the demo failed: $(cat "$WORK/demo.err")"
grep -q '"recorded":80' "$WORK/demo.out" || fail "the demo did not record 80 frames: $(cat "$WORK/demo.out")"
# A recorded stream blocks rather than drops when its encoder falls behind (under a loaded ctest -j).
grep -q '"dropped":0,' "$WORK/demo.out" || fail "the demo dropped frames: $(cat "$WORK/demo.out")"

# The recording, served by --store, replayed from frame 0 without loss.
"$VIEW" --store "$WORK/rec" --port -1 --tcp-port 0 --address 127.0.0.1 --json --seconds 20 \
  >"$WORK/store.out" 2>"$WORK/store.err" &
STORE=$!
trap 'kill $STORE 2>/dev/null || true' EXIT
for _ in $(seq 50); do [ -s "$WORK/store.out" ] && break; sleep 0.1; done
PORT=$(sed -n 's/.*"tcp_port":\([0-9]*\).*/\1/p' "$WORK/store.out" | head -1)
"$VIEW" --connect 127.0.0.1:$PORT --dump "$WORK/replay" --from 0 --policy catch-up --frames 80 --fps 200 --json \
  >"$WORK/replay.json" || fail "replay: $(cat "$WORK/replay.json")"
grep -q '"played":80' "$WORK/replay.json" || fail "replay played: $(cat "$WORK/replay.json")"
SEQS=$(sed -n 's/.*"seq":\([0-9]*\).*/\1/p' "$WORK/replay/frames.jsonl" | tr '\n' ' ')
[ "$SEQS" = "$(seq -s ' ' 0 79) " ] || fail "replay not every frame in order: $SEQS"
# A step's spectrum is E(k) = (1 + sin(t)/2) k^-5/3 as f64: check frame 1's first value (k = 1, t = 0).
python3 - "$WORK/replay/00000001-energy_spectrum.bin" <<'PY' || fail "spectrum values"
import struct, sys
v = struct.unpack('<d', open(sys.argv[1], 'rb').read(8))[0]
assert abs(v - 1.0) < 1e-12, v
PY
echo PASS
