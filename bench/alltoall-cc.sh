#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The all-to-all algorithms on the emulated torus (../shared/testbeds/torus-netns.sh) under each TCP
# congestion control the kernel offers, so that the packet model (which has BBR v1 and Reno) can be
# checked against the testbed with the same sender on both sides. For each entry of ALLTOALL_CC_LIST
# the torus is brought up, every namespace's net.ipv4.tcp_congestion_control is set, then
# toru-alltoall-bench runs once per block size (one mpirun each) and its JSON is kept. At the end a
# table of % of T_min (median of the timed calls, and their range) per congestion control, block and
# algorithm, and one of what the links and the kernels' TCP did during each run (qdisc packets and
# drops, segments, retransmissions, timeouts, tail loss probes). Not a test.
#
#   bench/alltoall-cc.sh BUILD_DIR
#
# Environment: ALLTOALL_CC_LIST="bbr reno" (each must be in tcp_available_congestion_control),
# ALLTOALL_CC_SIZES="64KiB 256KiB", ALLTOALL_CC_ALGORITHMS="mpi pairwise indirect",
# ALLTOALL_CC_REPS=5, ALLTOALL_CC_WARMUP=1, ALLTOALL_CC_ARGS (more bench arguments, e.g. --chunks 64),
# ALLTOALL_CC_OUT=DIR (JSON kept there), TORUS_DIMS="2 2 4", RATE_X/RATE_Y/RATE_Z (20mbit/20mbit/
# 10mbit: 1/10 of the testbed's defaults, so that the links and not the 2-core host are the limit),
# TORUS_PREFIX=a2cc. Every run holds /tmp/toru-bench.lock (flock); do not wrap the script in it.
set -euo pipefail
if [[ ${1:-} == -h || ${1:-} == --help || $# -lt 1 ]]; then
  sed -n '2,18p' "$0" | sed 's/^# \{0,1\}//'
  [[ $# -lt 1 ]] && exit 2 || exit 0
fi
build=$1
exe=$build/apps/toru-alltoall-bench/toru-alltoall-bench
[[ -x $exe ]] || { echo "alltoall-cc.sh: $exe: not found or not executable (build target toru-alltoall-bench)" >&2; exit 2; }
exe=$(realpath "$exe")
here=$(cd "$(dirname "$0")" && pwd)
testbed=${TORUS_NETNS:-$here/../../shared/testbeds/torus-netns.sh}
[[ -f $testbed ]] || { echo "alltoall-cc.sh: torus-netns.sh not found (set TORUS_NETNS)" >&2; exit 2; }

export TORUS_DIMS=${TORUS_DIMS:-"2 2 4"} TORUS_PREFIX=${TORUS_PREFIX:-a2cc}
export RATE_X=${RATE_X:-20mbit} RATE_Y=${RATE_Y:-20mbit} RATE_Z=${RATE_Z:-10mbit}
export TORUS_IPERF=0 TORUS_MPI_TIMEOUT=${TORUS_MPI_TIMEOUT:-1500}
ccs=${ALLTOALL_CC_LIST:-"bbr reno"} sizes=${ALLTOALL_CC_SIZES:-"64KiB 256KiB"}
algorithms=${ALLTOALL_CC_ALGORITHMS:-"mpi pairwise indirect"}
reps=${ALLTOALL_CC_REPS:-5} warmup=${ALLTOALL_CC_WARMUP:-1}
out=${ALLTOALL_CC_OUT:-$(mktemp -d /tmp/alltoall-cc.XXXXXX)}
mkdir -p "$out"

available=$(sysctl -n net.ipv4.tcp_available_congestion_control)
for cc in $ccs; do
  [[ " $available " == *" $cc "* ]] ||
    { echo "alltoall-cc.sh: congestion control '$cc' is not available (kernel offers: $available)" >&2; exit 2; }
done

read -r -a dims <<<"$TORUS_DIMS"
rates=("$RATE_X" "$RATE_Y" "$RATE_Z")
spec=""
for i in 0 1 2; do spec+="${spec:+x}${dims[$i]}[bw=${rates[$i]%mbit}Mb/s]"; done
echo "alltoall-cc.sh: torus $spec, $(date -u +%FT%TZ), load: $(cut -d' ' -f1-3 /proc/loadavg), out $out"

# A namespace other than the host's may only pick a congestion control the host allows
# (net.ipv4.tcp_allowed_congestion_control; Linux returns EPERM otherwise): allow the ones asked for
# for the run's length, and restore the host's list afterwards.
allowed=$(sysctl -n net.ipv4.tcp_allowed_congestion_control)
wanted=$allowed
for cc in $ccs; do [[ " $wanted " == *" $cc "* ]] || wanted+=" $cc"; done
[[ $wanted == "$allowed" ]] || sysctl -qw net.ipv4.tcp_allowed_congestion_control="$wanted"
cleanup() {
  bash "$testbed" down >/dev/null 2>&1 || true
  [[ $wanted == "$allowed" ]] || sysctl -qw net.ipv4.tcp_allowed_congestion_control="$allowed"
}
trap cleanup EXIT
# Totals over the torus's namespaces: packets its qdiscs sent and dropped (tc: a sender's own refused
# segments count as drops too), and the kernels' TCP counters (segments sent and retransmitted,
# retransmission timeouts, tail loss probes). The run's share is after minus before.
counters() {
  local ns
  for ns in $(ip netns list | awk -v p="$TORUS_PREFIX-" 'index($1, p) == 1 && $1 != p "head" {print $1}'); do
    ip netns exec "$ns" tc -s qdisc show | awk '/^ Sent/ {s += $4; gsub(",", "", $7); d += $7} END {print "qdisc_sent", s + 0; print "qdisc_dropped", d + 0}'
    ip netns exec "$ns" nstat -asz TcpOutSegs TcpRetransSegs TcpExtTCPTimeouts TcpExtTCPLossProbes | awk 'NF >= 2 && $1 !~ /^#/ {print $1, $2}'
  done | awk '{t[$1] += $2} END {for (k in t) print k, t[k]}' | sort
}

for cc in $ccs; do
  # A fresh torus per congestion control: no connection or qdisc state carried over.
  bash "$testbed" up >/dev/null
  for ns in $(ip netns list | awk -v p="$TORUS_PREFIX-" 'index($1, p) == 1 {print $1}'); do
    ip netns exec "$ns" sysctl -qw net.ipv4.tcp_congestion_control="$cc"
  done
  for size in $sizes; do
    name=$cc-$size
    echo "alltoall-cc.sh: $name: start $(date -u +%T), load $(cut -d' ' -f1-3 /proc/loadavg)"
    counters >"$out/$name.before"
    # shellcheck disable=SC2086
    flock /tmp/toru-bench.lock bash "$testbed" run "$exe" --torus "$spec" --min-bytes "$size" --max-bytes "$size" \
      --reps "$reps" --warmup "$warmup" --algorithms $algorithms --json ${ALLTOALL_CC_ARGS:-} >"$out/$name.raw"
    counters >"$out/$name.after"
    sed -n '/^{/,/^}/p' "$out/$name.raw" >"$out/$name.json"
    echo "alltoall-cc.sh: $name: end $(date -u +%T), load $(cut -d' ' -f1-3 /proc/loadavg)"
  done
  bash "$testbed" down >/dev/null
done

# shellcheck disable=SC2086  # one argument per congestion control and per size
python3 - "$out" $ccs -- $sizes <<'EOF'
import json, sys, os
out = sys.argv[1]
args = sys.argv[2:]
ccs, sizes = args[:args.index('--')], args[args.index('--') + 1:]
print('| congestion control | block | algorithm | % of T_min, median (range of the timed calls) | median s |')
print('|---|---|---|---|---|')
for cc in ccs:
    for size in sizes:
        path = os.path.join(out, f'{cc}-{size}.json')
        rows = json.load(open(path))['rows']
        for r in rows:
            pct = r['percent_of_bound']
            lo = pct * r['median_s'] / max(r['times_s'])
            hi = pct * r['median_s'] / min(r['times_s'])
            print(f"| {cc} | {size} | {r['algorithm']} ({r['chunks']}) | {pct:.1f} ({lo:.1f}-{hi:.1f}) | {r['median_s']:.3f} |")

def read(path):
    return {k: float(v) for k, v in (line.split() for line in open(path) if line.strip())}
print()
print('whole run (every algorithm, every call, check and warm-ups included), summed over the namespaces:')
print('| congestion control | block | qdisc packets | qdisc drops (%) | TCP segments | retransmitted (%) | timeouts | loss probes |')
print('|---|---|---|---|---|---|---|---|')
for cc in ccs:
    for size in sizes:
        b, a = read(os.path.join(out, f'{cc}-{size}.before')), read(os.path.join(out, f'{cc}-{size}.after'))
        d = {k: a.get(k, 0) - b.get(k, 0) for k in a}
        sent, drop, segs, rexmit = d['qdisc_sent'], d['qdisc_dropped'], d['TcpOutSegs'], d['TcpRetransSegs']
        print(f"| {cc} | {size} | {sent:.0f} | {drop:.0f} ({100 * drop / max(sent + drop, 1):.1f}) | {segs:.0f} | "
              f"{rexmit:.0f} ({100 * rexmit / max(segs, 1):.1f}) | {d['TcpExtTCPTimeouts']:.0f} | {d['TcpExtTCPLossProbes']:.0f} |")
EOF
