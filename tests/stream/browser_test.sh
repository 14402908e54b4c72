#!/usr/bin/env bash
# A real headless browser (Debian's Chromium) loads toru-view's page from a demo stream, plays
# frames over the WebSocket, and: (1) the DOM it dumps shows frames received and played
# (the page writes its count into the title and the state line); (2) a screenshot shows the
# colour-mapped image in the canvas area (non-background pixels, many colours).
# Exit 77 (skipped) when Chromium is not installed.
set -euo pipefail
VIEW=$1 PROBE=$2 WORK=$3
BROWSER=$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)
if [ -z "$BROWSER" ]; then echo "SKIPPED: no chromium (apt-get install -y chromium)"; exit 77; fi
rm -rf "$WORK"; mkdir -p "$WORK"
"$VIEW" --demo --port 0 --address 127.0.0.1 --json --seconds 60 --size 48 --rate 20 >"$WORK/demo.out" 2>"$WORK/demo.err" &
DEMO=$!
trap 'kill $DEMO 2>/dev/null || true' EXIT
for _ in $(seq 50); do [ -s "$WORK/demo.out" ] && break; sleep 0.1; done
PORT=$(sed -n 's/.*"http_port":\([0-9]*\).*/\1/p' "$WORK/demo.out" | head -1)
[ -n "$PORT" ] || { echo "FAIL: toru-view printed no port"; cat "$WORK/demo.err"; exit 1; }
FLAGS=(--headless --no-sandbox --disable-gpu --disable-dev-shm-usage --user-data-dir="$WORK/profile")
# hold=N: the page loads a resource the server answers after N ms, so the load event (when
# Chromium dumps or shoots) comes after N ms of real playout.
timeout 90 "$BROWSER" "${FLAGS[@]}" --dump-dom "http://127.0.0.1:$PORT/?fps=20&hold=4000" >"$WORK/dom.html" 2>"$WORK/chromium.err" || true
PLAYED=$(sed -n 's/.*<title>toru-view: \([0-9]*\) frames<\/title>.*/\1/p' "$WORK/dom.html" | head -1)
RECEIVED=$(sed -n 's/.*id="count">\([0-9]*\)<.*/\1/p' "$WORK/dom.html" | head -1)
echo "browser: received ${RECEIVED:-?} frames, played ${PLAYED:-?}"
[ "${PLAYED:-0}" -ge 10 ] || { echo "FAIL: expected >= 10 frames played in 4 s at 20 fps"; head -c 2000 "$WORK/dom.html"; exit 1; }
[ "${RECEIVED:-0}" -ge "$PLAYED" ] || { echo "FAIL: played more than received"; exit 1; }
timeout 90 "$BROWSER" "${FLAGS[@]}" --window-size=1100,800 --screenshot="$WORK/shot.png" \
  "http://127.0.0.1:$PORT/?fps=20&hold=3000" >/dev/null 2>>"$WORK/chromium.err" || true
[ -s "$WORK/shot.png" ] || { echo "FAIL: no screenshot"; exit 1; }
# The image canvas is the first panel: 512x512 from about (17, 106).
read -r BUSY TOTAL COLOURS < <("$PROBE" "$WORK/shot.png" 40 130 500 600)
echo "screenshot: $BUSY of $TOTAL canvas pixels drawn, $COLOURS colours"
[ "$BUSY" -gt $((TOTAL * 8 / 10)) ] || { echo "FAIL: the canvas is mostly empty"; exit 1; }
[ "$COLOURS" -ge 20 ] || { echo "FAIL: expected a colour-mapped field (>= 20 colours)"; exit 1; }
echo "PASS"
