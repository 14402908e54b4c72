// SPDX-License-Identifier: BSD-3-Clause
// Packet-level network simulator: what a flow model cannot show about an all-to-all on a torus.
//
// Every directed link of the torus transmits one packet at a time at its bandwidth, after which
// the packet flies for the axis latency. Two flow-control regimes:
//
//   transport::tcp     Ethernet/IP routers (the netns testbed): drop-tail output queues of
//                      `queue_bytes` per link (tc tbf's limit), one TCP connection per ordered
//                      node pair with slow start, AIMD, SACK-style loss detection (3 later packets
//                      acknowledged), retransmission timeouts with a floor and backoff, slow start
//                      after idle, an ACK per data packet on the reverse route. A sender's own
//                      first-hop queue pushes back instead of dropping (Linux's qdisc back-pressure).
//                      Congestion control is BBR v1 (pacing, bandwidth/RTT model; the testbed host's
//                      default) or Reno; tbf's token bucket lets `tbf_burst` bytes through at the
//                      device's speed before the rate applies (which fools BBR's bandwidth probe).
//   transport::credit  HPC routers: input buffers of `input_bytes` per port with credits, output
//                      buffers of `output_bytes`, round-robin arbitration, head-of-line blocking, a
//                      bounded injection FIFO per node filled round-robin from the posted messages.
//
// Routing is dimension order (axis 0 first) with the netns testbed's tie rule: half way round an
// even ring goes + from an even coordinate and - from an odd one. Switched axes are not modelled.
//
// Above the transport, an MPI-like layer runs a schedule: per node, operations that post sends and
// receives (all at once, like MPI_Ialltoallv / basic linear) and complete when all of them have;
// an operation starts `host_delay` after the operations it follows. Messages above `eager_limit`
// use the rendezvous protocol of Open MPI's ob1: the first `eager_limit` bytes, a control message
// back once the receive is posted, then the rest. Control messages ride the reverse connection,
// behind its data (TCP head-of-line).
//
//   auto t = toru::topology::torus::parse("2[bw=20Mb/s]x2[bw=20Mb/s]x4[bw=10Mb/s]");
//   auto s = toru::topology::alltoall_schedule(t, toru::topology::packet_schedule_kind::linear, 262144);
//   auto r = toru::topology::simulate_packets(t, s, {});   // r.seconds, r.drops, r.timeouts
//
// Pure and thread-safe; cost is proportional to packets x hops (about 10^6 events per second).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "toru/topology/torus.hpp"

namespace toru::topology {

struct packet_params {
  enum class transport { tcp, credit };
  transport mode = transport::tcp;
  double mss = 1448;   // payload bytes per packet
  double header = 66;  // bytes per packet on the wire besides payload (Ethernet + IP + TCP)
  double ack_bytes = 66;
  // tcp: drop-tail limit of each link's output queue; <= 0 derives tc tbf's limit from the link
  // rate: rate * tbf_latency + tbf_burst (torus-netns.sh: 50 ms, 64 kB).
  double queue_bytes = 0;
  double tbf_latency = 0.05;
  double tbf_burst = 65536;
  // tbf's bucket when the schedule starts: empty, as in a timed repetition that follows the
  // previous one after only a barrier (the bucket refills at the link rate, ~1 kB per ms here).
  double tbf_initial_tokens = 0;
  // credit: per-port input buffer (the upstream link's credits), output buffer, injection FIFO.
  double input_bytes = 16384;
  double output_bytes = 8192;
  double injection_bytes = 65536;
  // host: reaction time per protocol step (progress, matching, wake-up of a waiting thread) and
  // software cost per posted message.
  double host_delay = 100e-6;
  double post_overhead = 10e-6;
  // host CPUs shared by the ranks (the netns testbed runs every rank on one host). 0: every node
  // has a CPU of its own. Otherwise the ranks take turns, ceil(P / host_cores) of them per core,
  // `host_slice` seconds each (the scheduler's time slice), and a rank acts (posts, answers a
  // rendezvous, refills its sockets) only during its turn. Between turns the kernel sends what the
  // rank left in each connection's socket buffer, at most `socket_buffer` bytes (0: unlimited).
  int host_cores = 0;
  double host_slice = 1.5e-3;  // CFS: 0.75 ms x (1 + log2 cores) when more tasks than sched_nr_latency
  double socket_buffer = 0;
  // Open MPI's eager limit counts the ob1 match header, so a payload of eager_limit bytes is
  // already a rendezvous message.
  double match_header = 14;
  double eager_limit = 65536;  // Open MPI btl_tcp_eager_limit
  double control_bytes = 64;   // rendezvous control message
  // tcp: TCP connections per node pair. Open MPI's tcp BTL opens one module per interface that
  // btl_tcp_if_include names, and every module its own connection to each peer (`ss` on a 2x2x4
  // testbed node: 60 connections = 15 peers x its 4 torus links). 0: one per torus link of the
  // node, as there; 1: a single connection (the default: toru-netmodel 3, which the calibration
  // and the fitted tier use; docs/history/benchmarks-2026-12.md has what 0 does to calibration). ob1 sends each
  // eager message, rendezvous start and control message on the next connection in turn (per
  // peer) and splits a rendezvous message's rest over up to `stripe_connections` of them
  // (pml_ob1_max_send_per_range and max_rdma_per_request: 4) as mca_pml_ob1_calc_weighted_length
  // does; the message is complete when every part is delivered.
  int connections_per_peer = 1;
  int stripe_connections = 4;
  // tcp
  enum class congestion_control { reno, bbr };
  congestion_control congestion = congestion_control::bbr;  // the testbed host's default (sysctl)
  double device_rate = 1e9;  // bytes/s a link end moves while tbf's bucket has tokens (veth)
  // BBR's cwnd = gain x BDP + this many packets (Linux tcp_bbr.c bbr_quantization_budget: 3 TSO
  // bursts of 2 segments at these pacing rates; 2 more while probing for bandwidth). With a
  // millisecond RTT the BDP is under one packet, so this floor is most of each flow's window.
  double bbr_quantization = 6;
  // true: the budget follows the pacing rate as in Linux (3 x bbr_tso_segs_goal, 6 at the testbed's
  // link rates, 135 once a bucket-speed sample inflates the bandwidth estimate); false: the fixed
  // `bbr_quantization` above (toru-netmodel 2).
  bool bbr_tso_autosize = true;
  // tcp, BBR: new data leaves as TSO/GSO bursts of bbr_tso_segs_goal segments (one third of the budget
  // above: 2 at these link rates, 45 at Gbit/s pacing), paced as one; tbf segments a burst longer
  // than its bucket (max_size) and drops the segments that do not fit, while TCP counts them as
  // sent (tbf_segment). false: one segment at a time (toru-netmodel 3).
  bool gso = false;
  // A sender's own segment that finds its first-hop queue full: true, Linux (tbf drops it, TCP
  // retries at the next ACK or after an RTO-long probe timer); false, it waits for room.
  bool local_drop = true;
  // BBR's cwnd: true, Linux's rule (grows by the bytes acknowledged toward the target, never shrinks
  // in STARTUP); false, set to the target on every ACK (toru-netmodel 1).
  bool bbr_linux_cwnd = true;
  // BBR's Linux state machine around the model (toru-netmodel 3): app-limited rate samples (they
  // neither end STARTUP nor lower the bandwidth filter), rate intervals as tcp_rate_gen (the longer
  // of send and ACK interval, none under the minimum RTT), packet conservation on entering recovery
  // and the saved cwnd restored when recovery or the loss state after a timeout ends.
  bool bbr_linux_state = true;
  // With bbr_linux_state: Linux's state at the socket's writes too: a write to a socket with nothing
  // unsent marks it app-limited (tcp_rate_check_app_limited from tcp_sendmsg), and until STARTUP
  // ends the pacing rate only rises from high_gain x IW / 1 ms (bbr_set_pacing_rate). false:
  // toru-netmodel 3, where a few-byte sample can pace the flow's next message at its rate.
  bool bbr_write_state = false;
  int initial_window = 10;  // packets (Linux IW10)
  double min_rto = 0.2;     // Linux TCP_RTO_MIN: RTO = srtt + max(min_rto, 4 rttvar)
  double initial_rtt = 1e-3;
  // Linux's tail loss probe (tcp_early_retrans = 3): 2 x srtt + tlp_min (2 jiffies) after the last
  // transmission, the last segment again, so a lost tail is repaired by SACK, not by an RTO
  // (false: toru-netmodel 3, none).
  bool tail_loss_probe = false;
  double tlp_min = 0.008;
  // The receiver's ACKs (tcp). false: one per arriving segment (toru-netmodel 3). true: Linux's
  // delayed ACK (__tcp_ack_snd_check): an ACK once more than one full segment is unacknowledged, at
  // once for out-of-order data, a sub-MSS segment (a write's tail, acknowledged when the rank reads
  // it: its next turn on a shared core) and the first `quickacks` segments of a connection or after
  // it idled an RTO; otherwise after `delack_timeout` (TCP_DELACK_MIN). Halves the ACKs that share
  // the saturated links with the data.
  bool delayed_ack = false;
  // TCP small queues (tcp, Linux tcp_small_queue_check): a connection stops handing segments to its
  // first-hop qdisc while it has more than max(2 skbs, pacing rate x 2^-10 s) there (with at least
  // two segments unacknowledged) and resumes as each of them leaves tbf (veth orphans the skb), not
  // at its next ACK. false: toru-netmodel 3, where only a full qdisc stops a sender.
  bool small_queues = false;
  double skb_overhead = 768;     // bytes of skb->truesize besides the packet (2 x truesize: the floor)
  int quickacks = 16;            // TCP_MAX_QUICKACKS
  double delack_timeout = 0.04;  // TCP_DELACK_MIN / TCP_ATO_MIN: HZ / 25
  bool slow_start_after_idle = true;
  // Times the schedule runs back to back, each after a barrier (the last is reported). A timed
  // repetition on the testbed follows warm-up calls: its connections carry their congestion state
  // (BBR keeps its bandwidth and RTT model over idle periods), the tbf buckets what the gap refilled.
  int repetitions = 1;
  // Seed of the host's timing noise (0: none, the deterministic model). With a seed, each host
  // reaction takes host_delay x (1 +- jitter) and the ranks take their turns on the shared cores in
  // a seeded order instead of by rank: the testbed's calls differ by where the scheduler puts each
  // rank, and schedules that end on a few timeouts move by tens of points with that (a seeded run
  // samples that spread; simulate_packets_median reports its median).
  std::uint64_t seed = 0;
  double jitter = 0.5;
  double time_limit = 1e5;  // simulated seconds; beyond is an error (a schedule that deadlocks)
};

/// One point-to-point message of a schedule: sent by operation `send_op`, received by `recv_op`.
struct packet_message {
  int src = 0, dst = 0;
  double bytes = 0;
  int send_op = -1, recv_op = -1;
};

/// One nonblocking step of one node: posts its sends and receives, completes when all have.
/// `after` lists operations (of any node, in practice the same one) that must complete first.
struct packet_op {
  int node = 0;
  std::vector<int> after;
  std::string label;
};

struct packet_schedule {
  std::vector<packet_op> ops;
  std::vector<packet_message> messages;

  int add_op(int node, std::vector<int> after = {}, std::string label = {});
  void add_message(int src, int dst, double bytes, int send_op, int recv_op);
};

struct packet_result {
  double seconds = 0;                      // the last repetition: its last operation's completion after the barrier
  double first_seconds = 0;                // the first repetition (cold connections, empty buckets)
  std::vector<double> repetition_seconds;  // every repetition, barrier to barrier (a benchmark's reps)
  std::uint64_t packets = 0, drops = 0, retransmits = 0, timeouts = 0, events = 0;
  std::uint64_t local_drops = 0;    // segments a sender's full first-hop queue refused (tc counts them as drops too)
  std::uint64_t acks = 0;           // tcp: ACK segments the receivers sent
  double payload_bytes = 0;         // application bytes delivered
  double max_link_utilisation = 0;  // busiest link: busy time / makespan
  std::vector<double> axis_utilisation;  // per axis: mean busy fraction of its links over the makespan
};

/// Runs `s` on `t`. Nodes are numbered as torus nodes (axis 0 fastest). Throws toru::error:
/// invalid_argument for a bad schedule (node out of range, an op following a later or missing op,
/// a message whose ops are on the wrong nodes, a schedule that stalls or runs past `time_limit`),
/// unsupported for switched axes.
packet_result simulate_packets(const torus& t, const packet_schedule& s, const packet_params& p = {});

/// Runs `calls` back to back on the same connections and links, each call after a barrier (as a
/// benchmark times different schedules one after another: each inherits the congestion state and
/// tbf buckets the one before left). `repetition_seconds` holds each call's time, barrier to
/// barrier; `seconds` the last call's, `first_seconds` the first's; the counters cover all calls.
/// p.repetitions must be 1 (the sequence is `calls`). Throws as simulate_packets, and
/// invalid_argument for an empty sequence.
packet_result simulate_packet_calls(const torus& t, const std::vector<packet_schedule>& calls,
                                    const packet_params& p = {});

/// `seeds` runs of `s`: one run of `p` as given when seeds = 1 (with p.seed = 0 the deterministic
/// one), else seeds p.seed * 1000 + 1 .. + seeds (1..seeds for p.seed = 0).
std::vector<packet_result> simulate_packets_seeded(const torus& t, const packet_schedule& s, packet_params p,
                                                   int seeds);
/// The median (by `seconds`; of an even count, the mean of the middle two) of
/// simulate_packets_seeded's runs; `runs`, if given, receives every run's result.
packet_result simulate_packets_median(const torus& t, const packet_schedule& s, const packet_params& p, int seeds,
                                      std::vector<packet_result>* runs = nullptr);

/// What a benchmark reports from seeded runs (simulate_packets_seeded): each run's median over its
/// last `timed` repetitions (its timed calls after the warm-ups; 1: the last alone), then the
/// median over the runs (of an even count, the mean of the middle two). Throws invalid_argument
/// when `runs` is empty or `timed` is outside 1..repetitions.
double timed_median_seconds(const std::vector<packet_result>& runs, int timed);

/// The testbed's tie-aware dimension-order next hop: the directed link index
/// (node * 2 * ndims + axis * 2 + (dir < 0)) that a packet at `node` bound for `dst` takes, or -1.
std::int64_t packet_next_link(const torus& t, std::int64_t node, std::int64_t dst);

}  // namespace toru::topology
