#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The packet model's TCP against ns-3.37 on one tbf-shaped link shared by N flows (issue 15).
# Usage: topology/bench/ns3_compare.sh BUILD_DIR [RATE_MBIT] [FLOWS...]  -> one JSON line per run
# ("unfinished" > 0: flows ns-3 did not complete in 600 simulated seconds; makespan then meaningless)
set -euo pipefail
build=${1:?usage: ns3_compare.sh BUILD_DIR [RATE_MBIT]}
rate=${2:-10}
shift $(( $# < 2 ? $# : 2 ))
flow_counts=${*:-1 4 15 45}
model=$build/topology/model_shared_link
ns3=$build/topology/ns3_shared_link
[ -x "$model" ] || { echo "ns3_compare.sh: $model not built" >&2; exit 2; }
[ -x "$ns3" ] || { echo "ns3_compare.sh: $ns3 not built (needs libns3-dev)" >&2; exit 2; }
for flows in $flow_counts; do
  for bytes in 1048576 4194304; do
    (( flows * bytes <= 64 * 1048576 )) || continue
    for tcp in bbr reno; do "$model" --flows "$flows" --bytes "$bytes" --rate "${rate}Mb/s" --tcp "$tcp"; done
    "$model" --flows "$flows" --bytes "$bytes" --rate "${rate}Mb/s" --tcp bbr --netmodel2 | sed 's/"tcp": "bbr"/"tcp": "bbr-netmodel2"/'
    for tcp in TcpBbr TcpLinuxReno TcpCubic; do
      "$ns3" --flows="$flows" --bytes="$bytes" --rate="${rate}Mbps" --tcp="ns3::$tcp" || true
    done
  done
done
