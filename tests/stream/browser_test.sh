#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# A real headless browser (Debian's Chromium) loads toru-view's page from a demo stream, plays
# frames over the WebSocket, and: (1) the DOM it dumps shows frames received and played
# (the page writes its count into the title and the state line); (2) a screenshot shows the
# colour-mapped image in the canvas area (non-background pixels, many colours). Twice: a PNG + raw
# stream, and a zstd + lz4 stream (the page's hello accepts raw and PNG only, so the server must
# send those frames as raw for the page to draw them).
# Exit 77 (skipped) when Chromium is not installed.
set -euo pipefail
VIEW=$1 PROBE=$2 WORK=$3
BROWSER=$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)
if [ -z "$BROWSER" ]; then echo "SKIPPED: no chromium (apt-get install -y chromium)"; exit 77; fi
rm -rf "$WORK"; mkdir -p "$WORK"
watch() {  # NAME DEMO-ARGS...
  local NAME=$1; shift
  local W="$WORK/$NAME"; mkdir -p "$W"
  "$VIEW" --demo --port 0 --address 127.0.0.1 --json --seconds 60 --size 48 --rate 20 "$@" >"$W/demo.out" 2>"$W/demo.err" &
  DEMO=$!
  for _ in $(seq 50); do [ -s "$W/demo.out" ] && break; sleep 0.1; done
  PORT=$(sed -n 's/.*"http_port":\([0-9]*\).*/\1/p' "$W/demo.out" | head -1)
  [ -n "$PORT" ] || { echo "FAIL ($NAME): toru-view printed no port"; cat "$W/demo.err"; exit 1; }
  FLAGS=(--headless --no-sandbox --disable-gpu --disable-dev-shm-usage --user-data-dir="$W/profile")
  # hold=N: the page loads a resource the server answers after N ms, so the load event (when
  # Chromium dumps or shoots) comes after N ms of real playout.
  timeout 90 "$BROWSER" "${FLAGS[@]}" --dump-dom "http://127.0.0.1:$PORT/?fps=20&latency=0.3&hold=4000" >"$W/dom.html" 2>"$W/chromium.err" || true
  PLAYED=$(sed -n 's/.*<title>toru-view: \([0-9]*\) frames<\/title>.*/\1/p' "$W/dom.html" | head -1)
  RECEIVED=$(sed -n 's/.*id="count">\([0-9]*\)<.*/\1/p' "$W/dom.html" | head -1)
  echo "browser ($NAME): received ${RECEIVED:-?} frames, played ${PLAYED:-?}"
  [ "${PLAYED:-0}" -ge 10 ] || { echo "FAIL ($NAME): expected >= 10 frames played in 4 s at 20 fps"; head -c 2000 "$W/dom.html"; exit 1; }
  [ "${RECEIVED:-0}" -ge "$PLAYED" ] || { echo "FAIL ($NAME): played more than received"; exit 1; }
  UNDRAWN=$(sed -n 's/.*id="undrawn">\([0-9]*\)<.*/\1/p' "$W/dom.html" | head -1)
  [ "${UNDRAWN:-x}" = 0 ] || { echo "FAIL ($NAME): the page got ${UNDRAWN:-?} frames it cannot draw"; exit 1; }
  timeout 90 "$BROWSER" "${FLAGS[@]}" --window-size=1100,800 --screenshot="$W/shot.png" \
    "http://127.0.0.1:$PORT/?fps=20&latency=0.3&hold=3000" >/dev/null 2>>"$W/chromium.err" || true
  [ -s "$W/shot.png" ] || { echo "FAIL ($NAME): no screenshot"; exit 1; }
  # The image canvas is the first panel: 512x512 from about (17, 106).
  read -r BUSY TOTAL COLOURS < <("$PROBE" "$W/shot.png" 40 130 500 600)
  echo "screenshot ($NAME): $BUSY of $TOTAL canvas pixels drawn, $COLOURS colours"
  [ "$BUSY" -gt $((TOTAL * 8 / 10)) ] || { echo "FAIL ($NAME): the canvas is mostly empty"; exit 1; }
  [ "$COLOURS" -ge 20 ] || { echo "FAIL ($NAME): expected a colour-mapped field (>= 20 colours)"; exit 1; }
  kill $DEMO 2>/dev/null || true; wait $DEMO 2>/dev/null || true
}
DEMO=
trap '[ -n "$DEMO" ] && kill $DEMO 2>/dev/null || true' EXIT
watch png                                     # PNG images, raw spectra: sent as recorded
watch zstd --image-codec zstd --codec lz4     # transcoded to raw for the page
echo "PASS"
