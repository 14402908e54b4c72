#!/usr/bin/env bash
# Benchmarks of stream/ on a shaped link between two network namespaces (docs/stream.md):
#
#   bench/stream_netns.sh overhead BUILD   toru-dns run time with streaming off, and on with a TCP
#                                          viewer whose link is 10x too slow (tbf 100 kbit); per
#                                          round: off, on, on, off (ABBA), so drift cancels; the
#                                          two off runs of a round give the noise floor
#   bench/stream_netns.sh steady BUILD     playout of a 20 frames/s stream (64 kB frames) on a
#                                          40 Mbit link shared with an iperf3 TCP flow: paced +
#                                          flow-controlled vs the baseline "send every frame";
#                                          the viewer's buffer level over time in WORK/*.csv
#
# Needs root (ip netns, tc tbf) and iperf3; netem is not available in this kernel, so links are
# shaped in bandwidth only. Knobs: STREAM_RUNS (3), STREAM_SECONDS (20), DNS_N (48), DNS_STEPS (150),
# DNS_RANKS (2), STREAM_SLOW_RATE (100kbit: the slow viewer's link; make it 10x below what a step
# streams at the step rate you get), STREAM_LATENCY (1 s: the live-latency target of the paced viewer), STREAM_NS
# (namespace prefix, "strv": use your own when others run netns testbeds), STREAM_WORK.
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
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
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
  N=${DNS_N:-48} STEPS=${DNS_STEPS:-150} NP=${DNS_RANKS:-2}
  link "${STREAM_SLOW_RATE:-100kbit}"
  MPI=(mpirun --allow-run-as-root --oversubscribe -np "$NP" --mca btl self,vader --mca btl_vader_single_copy_mechanism none)
  off() {
    ip netns exec $A "${MPI[@]}" "$DNS" --n "$N" --steps "$STEPS" --ic random --json --quiet --out "$WORK/off" >"$1"
  }
  on() {
    # Streaming on, recording on, one TCP viewer at the far end of a 100 kbit link: the slice
    # (PNG, ~3 kB) and spectrum (~0.7 kB) per step need ~10x that at this step rate.
    rm -rf "$WORK/rec"
    ip netns exec $A "${MPI[@]}" "$DNS" --n "$N" --steps "$STEPS" --ic random --json --quiet --out "$WORK/on" \
      --stream-tcp-port 9100 --stream-record "$WORK/rec" >"$1" &
    DNSPID=$!
    sleep 1.5
    ip netns exec $B "$VIEW" --connect 10.210.0.1:9100 --seconds 300 --json >"$2" 2>/dev/null &
    VPID=$!; PIDS+=("$VPID")
    wait $DNSPID
    kill "$VPID" 2>/dev/null || true
  }
  for r in $(seq "$RUNS"); do
    off "$WORK/off-$r.json"
    on "$WORK/on-$r.json" "$WORK/viewer-$r.json"
    on "$WORK/on2-$r.json" "$WORK/viewer2-$r.json"
    off "$WORK/off2-$r.json"
  done
  # The publishing sits between toru-dns's timed intervals, so the whole run's wall time is compared:
  # per round, (on + on2) / (off + off2) - 1; the noise floor is |off2 / off - 1| (the same run twice).
  python3 - "$WORK" "$RUNS" "$NP" "$(uptime)" <<'PY'
import json, statistics, sys
work, runs, np_, load = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
def load_runs(kind): return [json.load(open(f"{work}/{kind}-{r}.json")) for r in range(1, runs + 1)]
off, off2, on, on2 = (load_runs(k) for k in ("off", "off2", "on", "on2"))
w = lambda js: [j["wall_s"] for j in js]
pct = [100 * ((a["wall_s"] + b["wall_s"]) / (c["wall_s"] + d["wall_s"]) - 1) for a, b, c, d in zip(on, on2, off, off2)]
noise = [100 * abs(b["wall_s"] / a["wall_s"] - 1) for a, b in zip(off, off2)]
views = []
for r in range(1, runs + 1):
    for k in ("viewer", "viewer2"):
        try: views.append(json.loads(open(f"{work}/{k}-{r}.json").read().strip().splitlines()[-1]))
        except Exception: views.append(None)
print(json.dumps({"benchmark": "stream overhead on toru-dns", "ranks": np_, "wall_s_off": w(off) + w(off2),
                  "wall_s_on": w(on) + w(on2), "overhead_pct_per_round": pct,
                  "overhead_pct_median": statistics.median(pct), "overhead_pct_range": [min(pct), max(pct)],
                  "noise_floor_pct_per_round": noise, "noise_floor_pct_median": statistics.median(noise),
                  "publish_s": [j.get("stream", {}).get("publish_s") for j in on + on2],
                  "time_per_step_off": [j["time_per_step"] for j in off + off2],
                  "time_per_step_on": [j["time_per_step"] for j in on + on2],
                  "stream_counters": [j.get("stream") for j in on + on2], "slow_viewer": views, "load_after": load}))
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
      ip netns exec $B "$VIEW" --connect 10.210.0.1:"$PORT" --fps 20 --low-water 6 --high-water 40 \
        --seconds "$SECONDS_RUN" --json "${VEXTRA[@]}" >"$WORK/$variant-$r.json"
      echo "$variant run $r: $(cat "$WORK/$variant-$r.json") load: $(cut -d' ' -f1-3 /proc/loadavg)"
      sleep 4
    done
  done
  exit 0
fi
echo "unknown mode $MODE"; exit 2
