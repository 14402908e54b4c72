#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Benchmarks of stream/ on a shaped link between two network namespaces (docs/stream.md):
#
#   bench/stream_netns.sh overhead BUILD   toru-dns run time with streaming off and on (slice +
#                                          spectrum each step, recording, one TCP viewer kept
#                                          connected on a link 10x too slow), STREAM_RUNS rounds
#                                          alternating off/on (ABAB, order flipping each round);
#                                          median/min/max of on/off - 1 per pair, the noise floor
#                                          (off vs the next off), and publish_s (rank 0's time in
#                                          the streaming per step: the direct measure)
#   bench/stream_netns.sh steady BUILD     playout of a 20 frames/s stream (64 kB frames) on a
#                                          40 Mbit link shared with an iperf3 TCP flow: paced +
#                                          flow-controlled vs the baseline "send every frame";
#                                          the viewer's buffer level over time in WORK/*.csv
#
# Needs root (ip netns, tc tbf) and iperf3; netem is not available in this kernel, so links are
# shaped in bandwidth only. Knobs: STREAM_RUNS (rounds/runs: 3), STREAM_SECONDS (20), DNS_N (48),
# DNS_STEPS (60), DNS_RANKS (2), STREAM_SLOW_RATE (the slow viewer's link; default: calibrated
# to 10x below the stream's rate in a first, unreported round), STREAM_LATENCY (1 s: the live-latency target of the paced viewer), STREAM_NS
# (namespace prefix, "strv": use your own when others run netns testbeds), STREAM_CC (the stream
# server's TCP congestion control: toru-view's --tcp-congestion, cubic unless given, e.g. bbr), STREAM_WORK.
# Namespaces $STREAM_NS-a (producer) and $STREAM_NS-b (viewer) are removed at the end.
set -euo pipefail
export PATH="$PATH:/usr/sbin:/sbin"
MODE=${1:?usage: stream_netns.sh overhead|steady BUILD_DIR}
BUILD=$(cd "${2:?build dir}" && pwd)
RUNS=${STREAM_RUNS:-3} SECONDS_RUN=${STREAM_SECONDS:-20}
VIEW=$BUILD/apps/toru-view/toru-view DNS=$BUILD/apps/toru-dns/toru-dns
WORK=${STREAM_WORK:-/tmp/stream-bench}
NS=${STREAM_NS:-strv}
A=$NS-a B=$NS-b
if [ "$(id -u)" != 0 ] || ! command -v ip >/dev/null || ! command -v tc >/dev/null; then
  echo "SKIPPED: needs root, ip and tc"; exit 77
fi
rm -rf "$WORK"; mkdir -p "$WORK"
PIDS=()
cleanup() {
  for p in "${PIDS[@]}"; do pkill -P "$p" 2>/dev/null || true; kill "$p" 2>/dev/null || true; done
  ip netns del $A 2>/dev/null || true; ip netns del $B 2>/dev/null || true
}
trap cleanup EXIT
link() {  # rate
  ip netns del $A 2>/dev/null || true; ip netns del $B 2>/dev/null || true
  ip netns add $A; ip netns add $B
  ip link add va netns $A type veth peer name vb netns $B
  ip -n $A addr add 10.210.0.1/24 dev va; ip -n $B addr add 10.210.0.2/24 dev vb
  for ns in $A $B; do ip -n $ns link set lo up; done
  ip -n $A link set va up; ip -n $B link set vb up
  tc -n $A qdisc add dev va root tbf rate "$1" burst 32kb latency 400ms
  tc -n $B qdisc add dev vb root tbf rate "$1" burst 32kb latency 400ms
}
port_of() { for _ in $(seq 100); do [ -s "$1" ] && break; sleep 0.1; done; sed -n 's/.*"tcp_port":\([0-9]*\).*/\1/p' "$1" | head -1; }
median() { sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }

if [ "$MODE" = overhead ]; then
  N=${DNS_N:-48} STEPS=${DNS_STEPS:-60} NP=${DNS_RANKS:-2}
  link "${STREAM_SLOW_RATE:-100kbit}"
  MPI=(mpirun --allow-run-as-root --oversubscribe -np "$NP" --mca btl self,vader --mca btl_vader_single_copy_mechanism none)
  dns() {  # output file, extra arguments
    local out=$1; shift
    ip netns exec $A "${MPI[@]}" "$DNS" --n "$N" --steps "$STEPS" --ic random --json --quiet --out "$WORK/dns" "$@" >"$out"
  }
  # The slow viewer stays connected the whole benchmark: it reconnects within 50 ms of each
  # streaming run's server coming up (before its first step) and is cut off when that run ends.
  ( while :; do
      ip netns exec $B "$VIEW" --connect 10.210.0.1:9100 --seconds 600 --json 2>/dev/null || true
      sleep 0.05
    done ) >>"$WORK/viewer.jsonl" &
  PIDS+=($!)
  on() { rm -rf "$WORK/rec"; dns "$1" --stream-tcp-port 9100 --stream-record "$WORK/rec"; }
  # Round 0 calibrates: the link is set 10x below what streaming needs at the measured step rate
  # (recorded bytes per step x steps per second), unless STREAM_SLOW_RATE is given.
  dns "$WORK/cal-off.json"; on "$WORK/cal-on.json"
  if [ -z "${STREAM_SLOW_RATE:-}" ]; then
    RATE=$(python3 -c "import json,os,sys; j=json.load(open('$WORK/cal-off.json')); b=sum(os.path.getsize(os.path.join('$WORK/rec',f)) for f in os.listdir('$WORK/rec'))/$STEPS; print(max(8, int(b*8/j['time_per_step']/10/1000)))")
    for ns_dev in "$A va" "$B vb"; do set -- $ns_dev; tc -n "$1" qdisc change dev "$2" root tbf rate "${RATE}kbit" burst 32kb latency 400ms; done
    echo "slow link: ${RATE} kbit/s (10x below the stream's rate at the calibrated step rate)"
  fi
  # ABAB...: off and on alternate, the order flipping every round, so drift and load changes hit
  # both; each ratio pairs a run with its neighbour; the noise floor pairs two off runs the same way.
  for r in $(seq "$RUNS"); do
    if [ $((r % 2)) = 1 ]; then dns "$WORK/off-$r.json"; on "$WORK/on-$r.json"
    else on "$WORK/on-$r.json"; dns "$WORK/off-$r.json"; fi
    echo "round $r/$RUNS done, load $(cut -d' ' -f1-3 /proc/loadavg)"
  done
  python3 - "$WORK" "$RUNS" "$NP" "$N" "$STEPS" "$(cut -d' ' -f1-3 /proc/loadavg)" <<'PY'
import json, statistics, sys
work, runs, np_, n, steps, load = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], int(sys.argv[5]), sys.argv[6]
off = [json.load(open(f"{work}/off-{r}.json")) for r in range(1, runs + 1)]
on = [json.load(open(f"{work}/on-{r}.json")) for r in range(1, runs + 1)]
def summary(xs): return {"median": round(statistics.median(xs), 2), "min": round(min(xs), 2), "max": round(max(xs), 2)}
def pct(a, b): return 100 * (a / b - 1)
# Run time = the solver's steps (time_per_step_mean x steps) and the whole wall time (start-up included).
step_s = lambda j: j["time_per_step_mean"] * steps
over_steps = [pct(step_s(a), step_s(b)) for a, b in zip(on, off)]
over_wall = [pct(a["wall_s"], b["wall_s"]) for a, b in zip(on, off)]
noise_steps = [pct(step_s(off[i + 1]), step_s(off[i])) for i in range(runs - 1)]
noise_wall = [pct(off[i + 1]["wall_s"], off[i]["wall_s"]) for i in range(runs - 1)]
pub = [100 * j["stream"]["publish_s"] / step_s(j) for j in on]
views = [json.loads(l) for l in open(f"{work}/viewer.jsonl") if l.strip().startswith("{")]
print(json.dumps({
    "benchmark": "stream overhead on toru-dns", "n": n, "steps": steps, "ranks": np_, "rounds": runs,
    "overhead_steps_pct": summary(over_steps), "overhead_wall_pct": summary(over_wall),
    "noise_floor_steps_pct": summary(noise_steps) if noise_steps else None,
    "noise_floor_abs_steps_pct_median": round(statistics.median(abs(x) for x in noise_steps), 2) if noise_steps else None,
    "noise_floor_wall_pct": summary(noise_wall) if noise_wall else None,
    "publish_share_pct": summary(pub),
    "publish_ms_per_step": summary([1000 * j["stream"]["publish_s"] / steps for j in on]),
    # Where rank 0's streaming time goes, per streamed step (toru-dns's JSON).
    "parts_ms_per_step": {k: summary([1000 * j["stream"].get(k, 0) / steps for j in on])
                          for k in ("tap_start_s", "tap_collect_s", "queue_s", "blocked_s")},
    "step_ms_off": summary([1000 * j["time_per_step_mean"] for j in off]),
    "step_ms_on": summary([1000 * j["time_per_step_mean"] for j in on]),
    "frames_offered_encoded_dropped": [[j["stream"].get("offered"), j["stream"].get("encoded"), j["stream"].get("dropped")] for j in on],
    "slow_viewer_sessions": len(views), "slow_viewer_played": [v.get("played") for v in views],
    "load_after": load}, indent=1))
PY
  exit 0
fi

if [ "$MODE" = steady ]; then
  command -v iperf3 >/dev/null || { echo "SKIPPED: no iperf3"; exit 77; }
  link 40mbit
  for variant in paced baseline; do
    for r in $(seq "$RUNS"); do
      EXTRA=(); VEXTRA=(--latency "${STREAM_LATENCY:-1}" --buffer-log "$WORK/$variant-$r.csv")
      [ $variant = baseline ] && EXTRA=(--unpaced) && VEXTRA=(--no-playout)
      [ -n "${STREAM_CC:-}" ] && EXTRA+=(--tcp-congestion "$STREAM_CC")
      # 20 frames/s of a 128x128 f32 field (raw, 64 kB): ~10.5 Mbit/s on a 40 Mbit link shared with iperf3.
      ip netns exec $A "$VIEW" --demo --field-only --address 10.210.0.1 --port -1 --tcp-port 0 --json --rate 20 \
        --size 128 --image-codec raw --fps 20 --low-water 6 --high-water 40 --seconds $((SECONDS_RUN + 8)) "${EXTRA[@]}" \
        >"$WORK/demo-$variant-$r.out" 2>/dev/null &
      PIDS+=($!)
      PORT=$(port_of "$WORK/demo-$variant-$r.out")
      ip netns exec $A iperf3 -s -1 -p 5301 >/dev/null 2>&1 &
      PIDS+=($!)
      sleep 0.3
      # Competing traffic in the same direction as the frames (iperf3 -R: the server in A sends).
      ip netns exec $B iperf3 -c 10.210.0.1 -p 5301 -R -t $((SECONDS_RUN + 4)) >/dev/null 2>&1 &
      PIDS+=($!)
      sleep 1
      # The sender's TCP state (congestion control, cwnd, pacing and delivery rate) of both flows
      # twice a second: what the link gives the stream when the competing flow takes its share.
      ( while sleep 0.5; do echo "t $(date +%s.%N)"; ip netns exec $A ss -tin state established; done ) \
        >"$WORK/ss-$variant-$r.txt" 2>/dev/null &
      SSPID=$!; PIDS+=($SSPID)
      ip netns exec $B "$VIEW" --connect 10.210.0.1:"$PORT" --fps 20 --low-water 6 --high-water 40 \
        --seconds "$SECONDS_RUN" --json "${VEXTRA[@]}" >"$WORK/$variant-$r.json"
      kill $SSPID 2>/dev/null || true
      echo "$variant run $r: $(cat "$WORK/$variant-$r.json") load: $(cut -d' ' -f1-3 /proc/loadavg)"
      sleep 4
    done
  done
  # Per variant over the runs: median / min / max of stalls, skipped frames and jitter.
  python3 - "$WORK" "$RUNS" "$(cut -d' ' -f1-3 /proc/loadavg)" <<'PY'
import json, statistics, sys
work, runs, load = sys.argv[1], int(sys.argv[2]), sys.argv[3]
def summary(xs): return {"median": statistics.median(xs), "min": min(xs), "max": max(xs)}
out = {"benchmark": "stream steadiness", "runs": runs, "load_after": load}
for v in ("paced", "baseline"):
    js = [json.loads(open(f"{work}/{v}-{r}.json").read().strip().splitlines()[-1]) for r in range(1, runs + 1)]
    out[v] = {k: summary([j[k] for j in js]) for k in
              ("stalls", "skipped", "played", "jitter_mean_ms", "jitter_max_ms", "interval_mean_ms", "min_buffer")}
    out[v]["runs_without_stall"] = sum(j["stalls"] == 0 for j in js)
print(json.dumps(out, indent=1))
PY
  exit 0
fi
echo "unknown mode $MODE"; exit 2
