#!/usr/bin/env bash
# Benchmarks of stream/ on a shaped link between two network namespaces (docs/stream.md):
#
#   bench/stream_netns.sh overhead BUILD   toru-dns run time with streaming off, and on with a TCP
#                                          viewer whose link is 10x too slow (tbf 100 kbit)
#   bench/stream_netns.sh steady BUILD     playout of a 20 frames/s stream (64 kB frames) on a
#                                          40 Mbit link shared with an iperf3 TCP flow: paced +
#                                          flow-controlled vs the baseline "send every frame"
#
# Needs root (ip netns, tc tbf) and iperf3; netem is not available in this kernel, so links are
# shaped in bandwidth only. Knobs: STREAM_RUNS (3), STREAM_SECONDS (20), DNS_N (48), DNS_STEPS (150),
# DNS_RANKS (2). Namespaces strv-a (producer) and strv-b (viewer) are removed at the end.
set -euo pipefail
export PATH="$PATH:/usr/sbin:/sbin"
MODE=${1:?usage: stream_netns.sh overhead|steady BUILD_DIR}
BUILD=$(cd "${2:?build dir}" && pwd)
RUNS=${STREAM_RUNS:-3} SECONDS_RUN=${STREAM_SECONDS:-20}
VIEW=$BUILD/apps/toru-view/toru-view DNS=$BUILD/apps/toru-dns/toru-dns
WORK=${STREAM_WORK:-/tmp/stream-bench}
A=strv-a B=strv-b
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
  link 100kbit
  MPI=(mpirun --allow-run-as-root --oversubscribe -np "$NP" --mca btl self,vader --mca btl_vader_single_copy_mechanism none)
  for r in $(seq "$RUNS"); do
    ip netns exec $A "${MPI[@]}" "$DNS" --n "$N" --steps "$STEPS" --ic random --json --quiet --out "$WORK/off" \
      >"$WORK/off-$r.json"
    # Streaming on, recording on, one TCP viewer at the far end of a 100 kbit link: the slice
    # (PNG, ~3 kB) and spectrum (~0.7 kB) per step need ~10x that at this step rate.
    rm -rf "$WORK/rec"
    ip netns exec $A "${MPI[@]}" "$DNS" --n "$N" --steps "$STEPS" --ic random --json --quiet --out "$WORK/on" \
      --stream-tcp-port 9100 --stream-record "$WORK/rec" >"$WORK/on-$r.json" &
    DNSPID=$!
    sleep 1.5
    ip netns exec $B "$VIEW" --connect 10.210.0.1:9100 --seconds 120 --json >"$WORK/viewer-$r.json" 2>/dev/null &
    VPID=$!; PIDS+=("$VPID")
    wait $DNSPID
    kill "$VPID" 2>/dev/null || true
  done
  # The publishing sits between toru-dns's timed intervals, so the whole run's wall time is compared.
  python3 - "$WORK" "$RUNS" <<'PY'
import json, statistics, sys
work, runs = sys.argv[1], int(sys.argv[2])
def load(kind): return [json.load(open(f"{work}/{kind}-{r}.json")) for r in range(1, runs + 1)]
off, on = load("off"), load("on")
w_off, w_on = statistics.median(j["wall_s"] for j in off), statistics.median(j["wall_s"] for j in on)
views = []
for r in range(1, runs + 1):
    try: views.append(json.loads(open(f"{work}/viewer-{r}.json").read().strip().splitlines()[-1]))
    except Exception: views.append(None)
print(json.dumps({"benchmark": "stream overhead on toru-dns", "wall_s_off": [j["wall_s"] for j in off],
                  "wall_s_on": [j["wall_s"] for j in on], "median_wall_off_s": w_off, "median_wall_on_s": w_on,
                  "overhead_pct": 100 * (w_on - w_off) / w_off,
                  "stream_counters": [j.get("stream") for j in on], "slow_viewer": views}))
PY
  exit 0
fi

if [ "$MODE" = steady ]; then
  command -v iperf3 >/dev/null || { echo "SKIPPED: no iperf3"; exit 77; }
  link 40mbit
  for variant in paced baseline; do
    for r in $(seq "$RUNS"); do
      EXTRA=(); VEXTRA=()
      [ $variant = baseline ] && EXTRA=(--unpaced) && VEXTRA=(--no-playout)
      # 20 frames/s of a 128x128 f32 field (raw, 64 kB): ~10.5 Mbit/s on a 40 Mbit link shared with iperf3.
      ip netns exec $A "$VIEW" --demo --field-only --address 10.210.0.1 --port -1 --tcp-port 0 --json --rate 20 \
        --size 128 --image-codec raw --fps 20 --low-water 6 --high-water 20 --seconds $((SECONDS_RUN + 8)) "${EXTRA[@]}" \
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
      ip netns exec $B "$VIEW" --connect 10.210.0.1:"$PORT" --fps 20 --low-water 6 --high-water 20 \
        --seconds "$SECONDS_RUN" --json "${VEXTRA[@]}" >"$WORK/$variant-$r.json"
      echo "$variant run $r: $(cat "$WORK/$variant-$r.json")"
      sleep 4
    done
  done
  exit 0
fi
echo "unknown mode $MODE"; exit 2
