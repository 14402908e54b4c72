// SPDX-License-Identifier: BSD-3-Clause
// ns-3 cross-check of toru-netmodel's TCP part: N TCP flows of `bytes` each, from nodes 1..N of a
// chain to node 0, every link shaped by a tbf queue disc as torus-netns.sh configures it (rate,
// burst, limit = rate x latency + burst), so all N flows share the last link 1 -> 0 and flow k
// also crosses k-1 upstream links, as in the ring that topology/bench/model_shared_link.cpp gives
// the packet model. Prints one JSON line: makespan, goodput, tbf drops per hop.
//
//   ns3_shared_link --flows=15 --bytes=262144 --rate=10Mbps --tcp=ns3::TcpBbr
//
// Built only when ns-3 (libns3-dev) is found.
#include <ns3/applications-module.h>
#include <ns3/core-module.h>
#include <ns3/internet-module.h>
#include <ns3/network-module.h>
#include <ns3/point-to-point-module.h>
#include <ns3/traffic-control-module.h>

#include <cstdio>
#include <string>
#include <vector>

using namespace ns3;

namespace {

struct tally {
  std::vector<double> finish;
  std::vector<uint64_t> received;
  uint64_t bytes = 0;
  uint64_t tbf_drops = 0, tbf_enqueued = 0;
};

tally g;

void on_rx(int flow, Ptr<const Packet> p, const Address&) {
  g.received[flow] += p->GetSize();
  if (g.received[flow] >= g.bytes && g.finish[flow] == 0) g.finish[flow] = Simulator::Now().GetSeconds();
}

void on_drop(Ptr<const QueueDiscItem>) { ++g.tbf_drops; }
void on_enqueue(Ptr<const QueueDiscItem>) { ++g.tbf_enqueued; }

}  // namespace

int main(int argc, char** argv) {
  int flows = 15;
  uint64_t bytes = 262144;
  std::string rate = "10Mbps", device_rate = "8Gbps", tcp = "ns3::TcpBbr";
  uint32_t burst = 65536, mss = 1448, del_ack = 1;
  double tbf_latency = 0.05, link_delay_us = 1, min_rto = 0.2;
  CommandLine cmd;
  cmd.AddValue("flows", "concurrent flows sharing the last link", flows);
  cmd.AddValue("bytes", "bytes per flow", bytes);
  cmd.AddValue("rate", "tbf rate of every link", rate);
  cmd.AddValue("device-rate", "link device rate (veth: line speed while tbf has tokens)", device_rate);
  cmd.AddValue("burst", "tbf bucket, bytes", burst);
  cmd.AddValue("tbf-latency", "tbf latency, seconds (limit = rate x latency + burst)", tbf_latency);
  cmd.AddValue("delay-us", "link propagation delay, microseconds", link_delay_us);
  cmd.AddValue("tcp", "ns-3 TCP congestion control TypeId (ns3::TcpBbr, ns3::TcpLinuxReno, ns3::TcpCubic)", tcp);
  cmd.AddValue("mss", "TCP segment size", mss);
  cmd.AddValue("del-ack", "segments per ACK (the packet model ACKs every segment)", del_ack);
  cmd.AddValue("min-rto", "minimum RTO, seconds (Linux: 0.2)", min_rto);
  cmd.Parse(argc, argv);
  if (flows < 1) {
    std::fprintf(stderr, "ns3_shared_link: --flows must be >= 1, got %d\n", flows);
    return 2;
  }
  g.bytes = bytes;
  g.finish.assign(static_cast<std::size_t>(flows), 0);
  g.received.assign(static_cast<std::size_t>(flows), 0);

  Config::SetDefault("ns3::TcpL4Protocol::SocketType", StringValue(tcp));
  Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(mss));
  Config::SetDefault("ns3::TcpSocket::InitialCwnd", UintegerValue(10));
  Config::SetDefault("ns3::TcpSocket::DelAckCount", UintegerValue(del_ack));
  Config::SetDefault("ns3::TcpSocket::SndBufSize", UintegerValue(4 << 20));
  Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue(6 << 20));
  Config::SetDefault("ns3::TcpSocketBase::MinRto", TimeValue(Seconds(min_rto)));
  Config::SetDefault("ns3::TcpSocketBase::Sack", BooleanValue(true));

  NodeContainer nodes;
  nodes.Create(static_cast<uint32_t>(flows) + 1);
  InternetStackHelper stack;
  stack.Install(nodes);

  PointToPointHelper p2p;
  p2p.SetDeviceAttribute("DataRate", StringValue(device_rate));
  p2p.SetChannelAttribute("Delay", TimeValue(MicroSeconds(link_delay_us)));
  p2p.SetQueue("ns3::DropTailQueue", "MaxSize", StringValue("1p"));  // veth: no device queue

  const double rate_bps = DataRate(rate).GetBitRate();
  const uint64_t limit = static_cast<uint64_t>(rate_bps / 8 * tbf_latency) + burst;
  TrafficControlHelper tch;
  const uint16_t handle = tch.SetRootQueueDisc("ns3::TbfQueueDisc", "Rate", DataRateValue(DataRate(rate)), "Burst",
                                               UintegerValue(burst), "Mtu", UintegerValue(mss + 66), "MaxSize",
                                               QueueSizeValue(QueueSize(QueueSizeUnit::BYTES, limit)));
  (void)handle;

  Ipv4AddressHelper addr;
  std::vector<Ipv4InterfaceContainer> ifs;
  for (int i = 0; i < flows; ++i) {
    NetDeviceContainer d = p2p.Install(nodes.Get(static_cast<uint32_t>(i)), nodes.Get(static_cast<uint32_t>(i) + 1));
    QueueDiscContainer q = tch.Install(d);
    for (uint32_t k = 0; k < q.GetN(); ++k) {
      q.Get(k)->TraceConnectWithoutContext("Drop", MakeCallback(&on_drop));
      q.Get(k)->TraceConnectWithoutContext("Enqueue", MakeCallback(&on_enqueue));
    }
    addr.SetBase(Ipv4Address(("10.1." + std::to_string(i + 1) + ".0").c_str()), "255.255.255.0");
    ifs.push_back(addr.Assign(d));
  }
  Ipv4GlobalRoutingHelper::PopulateRoutingTables();

  const Ipv4Address sink_addr = ifs[0].GetAddress(0);
  for (int f = 0; f < flows; ++f) {
    const uint16_t port = static_cast<uint16_t>(5000 + f);
    PacketSinkHelper sink("ns3::TcpSocketFactory", InetSocketAddress(Ipv4Address::GetAny(), port));
    ApplicationContainer sa = sink.Install(nodes.Get(0));
    sa.Start(Seconds(0));
    sa.Get(0)->TraceConnectWithoutContext("Rx", MakeBoundCallback(&on_rx, f));
    BulkSendHelper src("ns3::TcpSocketFactory", InetSocketAddress(sink_addr, port));
    src.SetAttribute("MaxBytes", UintegerValue(bytes));
    src.SetAttribute("SendSize", UintegerValue(mss));
    ApplicationContainer ca = src.Install(nodes.Get(static_cast<uint32_t>(f) + 1));
    ca.Start(Seconds(0));
  }
  Simulator::Stop(Seconds(600));
  Simulator::Run();
  double makespan = 0;
  int unfinished = 0;
  for (double t : g.finish) {
    if (t == 0) ++unfinished;
    makespan = std::max(makespan, t);
  }
  Simulator::Destroy();
  const double payload = static_cast<double>(bytes) * flows;
  // the bound: every flow's payload plus headers over the shared link's rate
  const double wire = payload * (1.0 + 54.0 / mss);  // PPP + IP + TCP with timestamps
  const double t_min = wire * 8 / rate_bps;
  std::printf(
      "{\"engine\": \"ns-3.37\", \"tcp\": \"%s\", \"flows\": %d, \"bytes\": %llu, \"rate_bps\": %.0f, "
      "\"makespan_s\": %.6f, \"goodput_bps\": %.0f, \"percent_of_bound\": %.2f, \"tbf_drops\": %llu, "
      "\"tbf_enqueued\": %llu, \"drop_percent\": %.3f, \"unfinished\": %d}\n",
      tcp.c_str(), flows, static_cast<unsigned long long>(bytes), rate_bps, makespan,
      makespan > 0 ? payload * 8 / makespan : 0, makespan > 0 ? 100 * t_min / makespan : 0,
      static_cast<unsigned long long>(g.tbf_drops), static_cast<unsigned long long>(g.tbf_enqueued),
      100.0 * static_cast<double>(g.tbf_drops) /
          static_cast<double>(std::max<uint64_t>(1, g.tbf_enqueued + g.tbf_drops)),
      unfinished);
  return unfinished == 0 ? 0 : 1;
}
