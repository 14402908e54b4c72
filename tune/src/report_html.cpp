// SPDX-License-Identifier: BSD-3-Clause
#include <algorithm>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "toru/core/xml.hpp"
#include "toru/tune/report.hpp"

namespace toru::tune {

using json = nlohmann::json;

namespace {

double total(const json& j) {
  if (j.is_number()) return j.get<double>();
  double s = 0;
  if (j.is_array())
    for (const auto& x : j) s += x.get<double>();
  return s;
}

struct cat {
  const char* name;
  const char* color;
};
const cat categories[] = {{"compute", "#4e79a7"},
                          {"MPI point-to-point", "#f28e2b"},
                          {"MPI collective", "#59a14f"},
                          {"waiting (late partner, collective)", "#e15759"},
                          {"I/O", "#b07aa1"}};

// Stacked horizontal bars: time per category per rank.
std::string categories_svg(const json& p) {
  const auto& ranks = p["ranks"];
  const double wall = std::max(1e-12, p.value("wall", 0.0));
  const int W = 720, row = 22, left = 70;
  const int H = static_cast<int>(ranks.size()) * row + 40;
  std::string s =
      fmt::format("<svg xmlns='http://www.w3.org/2000/svg' width='{}' height='{}' font-size='11'>", W + 20, H);
  int y = 10;
  for (const auto& r : ranks) {
    const double wait = r.value("late_sender", 0.0) + r.value("late_receiver", 0.0) + r.value("wait_collective", 0.0);
    const double p2p =
        std::max(0.0, r.value("mpi_p2p", 0.0) - r.value("late_sender", 0.0) - r.value("late_receiver", 0.0));
    const double coll = std::max(0.0, r.value("mpi_coll", 0.0) - r.value("wait_collective", 0.0));
    const double vals[] = {r.value("compute", 0.0), p2p, coll, wait, r.value("io", 0.0)};
    s += fmt::format("<text x='0' y='{}'>rank {}</text>", y + 14, r.value("rank", 0));
    double x = left;
    for (int c = 0; c < 5; ++c) {
      const double w = vals[c] / wall * (W - left);
      if (w > 0.2)
        s += fmt::format(
            "<rect x='{:.1f}' y='{}' width='{:.1f}' height='{}' fill='{}'><title>{}: {:.4f} s</title></rect>", x, y, w,
            row - 4, categories[c].color, categories[c].name, vals[c]);
      x += w;
    }
    y += row;
  }
  int lx = left;
  for (const auto& c : categories) {
    s += fmt::format("<rect x='{}' y='{}' width='10' height='10' fill='{}'/><text x='{}' y='{}'>{}</text>", lx, y + 6,
                     c.color, lx + 14, y + 15, c.name);
    lx += 40 + static_cast<int>(std::string(c.name).size()) * 6;
  }
  return s + "</svg>";
}

// Compute per rank against the mean: the imbalance at a glance.
std::string imbalance_svg(const json& p) {
  const auto& ranks = p["ranks"];
  std::vector<double> c;
  for (const auto& r : ranks) c.push_back(r.value("compute", 0.0));
  const double mx = std::max(1e-12, *std::max_element(c.begin(), c.end()));
  double mean = 0;
  for (double x : c) mean += x;
  mean /= static_cast<double>(c.size());
  const int bw = std::max(8, std::min(60, 600 / static_cast<int>(c.size()))), H = 160;
  const int W = static_cast<int>(c.size()) * (bw + 4) + 80;
  std::string s =
      fmt::format("<svg xmlns='http://www.w3.org/2000/svg' width='{}' height='{}' font-size='11'>", W, H + 30);
  for (std::size_t i = 0; i < c.size(); ++i) {
    const double h = c[i] / mx * H;
    s += fmt::format(
        "<rect x='{}' y='{:.1f}' width='{}' height='{:.1f}' fill='#4e79a7'><title>rank {}: {:.4f} s</title></rect>",
        40 + static_cast<int>(i) * (bw + 4), H - h + 5, bw, h, i, c[i]);
    s += fmt::format("<text x='{}' y='{}'>{}</text>", 40 + static_cast<int>(i) * (bw + 4), H + 20, i);
  }
  const double my = H - mean / mx * H + 5;
  s += fmt::format("<line x1='35' x2='{}' y1='{:.1f}' y2='{:.1f}' stroke='#e15759' stroke-dasharray='4'/>", W - 40, my,
                   my);
  s += fmt::format("<text x='{}' y='{:.1f}'>mean {:.3f} s</text><text x='0' y='12'>{:.3f} s</text>", W - 38, my + 4,
                   mean, mx);
  return s + "</svg>";
}

std::string timeline_svg(const json& p) {
  if (!p.contains("timeline")) return "";
  const json& t = p["timeline"];
  const double t0 = t.value("t0", 0.0), t1 = std::max(t.value("t1", 0.0), t0 + 1e-9);
  const int W = 720, row = 18, left = 60;
  const int H = static_cast<int>(t["ranks"].size()) * row + 30;
  auto color = [](const std::string& c) {
    if (c == "p2p") return "#f28e2b";
    if (c == "collective") return "#59a14f";
    if (c == "io") return "#b07aa1";
    if (c == "toru") return "#9c755f";
    return "#bab0ac";
  };
  std::string s =
      fmt::format("<svg xmlns='http://www.w3.org/2000/svg' width='{}' height='{}' font-size='11'>", W + 20, H);
  s += fmt::format("<rect x='{}' y='0' width='{}' height='{}' fill='#dfe8f3'/>", left, W - left, H - 25);
  int y = 2;
  for (std::size_t r = 0; r < t["ranks"].size(); ++r) {
    s += fmt::format("<text x='0' y='{}'>rank {}</text>", y + 12, r);
    for (const auto& e : t["ranks"][r]) {
      const double a = std::max(t0, e[0].get<double>()), b = std::min(t1, e[1].get<double>());
      const double x = left + (a - t0) / (t1 - t0) * (W - left), w = std::max(0.5, (b - a) / (t1 - t0) * (W - left));
      const std::string c = e[2];
      const int inset = c == "toru" ? 0 : 3;
      s += fmt::format(
          "<rect x='{:.1f}' y='{}' width='{:.1f}' height='{}' fill='{}'><title>{} {:.6f}-{:.6f} s</title></rect>", x,
          y + inset, w, row - 3 - 2 * inset, color(c), xml_escape(e[3].get<std::string>()), a, b);
    }
    y += row;
  }
  s += fmt::format("<text x='{}' y='{}'>{:.4f} s</text><text x='{}' y='{}' text-anchor='end'>{:.4f} s</text>", left,
                   H - 8, t0, W, H - 8, t1);
  s += fmt::format(
      "<text x='{}' y='{}'>blue: compute; orange: point-to-point; green: collective; purple: I/O; brown: toru "
      "phase</text>",
      left + 120, H - 8);
  return s + "</svg>";
}

std::string sites_table(const json& sites, const char* title, std::size_t top) {
  std::vector<const json*> v;
  for (const auto& s : sites) v.push_back(&s);
  std::sort(v.begin(), v.end(), [](const json* a, const json* b) { return total((*a)["time"]) > total((*b)["time"]); });
  double mx = v.empty() ? 1 : std::max(1e-12, total((*v.front())["time"]));
  std::string h = fmt::format(
      "<h2>{}</h2><table><tr><th>call site</th><th>function</th><th>calls</th><th>time (s, all ranks)</th>"
      "<th></th><th>bytes</th><th>late sender</th><th>late receiver</th><th>wait at collective</th></tr>",
      title);
  for (std::size_t i = 0; i < std::min(top, v.size()); ++i) {
    const json& s = *v[i];
    const double t = total(s["time"]);
    h += fmt::format(
        "<tr><td>{} <small>{}</small></td><td>{}</td><td>{:.0f}</td><td>{:.4f}</td>"
        "<td><svg width='120' height='10'><rect width='{:.1f}' height='10' fill='#4e79a7'/></svg></td>"
        "<td>{:.3g}</td><td>{:.4f}</td><td>{:.4f}</td><td>{:.4f}</td></tr>",
        xml_escape(s.value("location", std::string("?"))), xml_escape(s.value("symbol", std::string())),
        xml_escape(s.value("function", std::string())), total(s["calls"]), t, t / mx * 120, total(s["bytes"]),
        total(s.value("late_sender", json(0))), total(s.value("late_receiver", json(0))),
        total(s.value("wait_collective", json(0))));
  }
  if (v.size() > top) h += fmt::format("<tr><td colspan='9'>... {} more in profile.json</td></tr>", v.size() - top);
  return h + "</table>";
}

}  // namespace

std::string html_report(const json& p, const std::vector<finding>& findings) {
  std::string h =
      "<!DOCTYPE html><html><head><meta charset='utf-8'><title>toru-tune report</title><style>"
      "body{font-family:sans-serif;max-width:1000px;margin:1em auto;color:#222}"
      "table{border-collapse:collapse;font-size:12px}td,th{border:1px solid #ccc;padding:2px 6px;text-align:left}"
      ".f{border-left:4px solid #e15759;padding:4px 10px;margin:8px 0;background:#fbf3f3}"
      ".ok{border-left:4px solid #59a14f;padding:4px 10px;background:#f3fbf3}</style></head><body>";
  h += fmt::format("<h1>toru-tune report</h1><p>{} &middot; {} ranks &middot; {:.3f} s (MPI_Init to MPI_Finalize)</p>",
                   xml_escape(p.value("program", std::string("?"))), p.value("nranks", 0), p.value("wall", 0.0));
  const json& papi = p.value("papi", json::object());
  if (!papi.value("available", false))
    h += fmt::format("<p><small>Hardware counters: none ({}).</small></p>",
                     xml_escape(papi.value("note", std::string())));
  if (p.contains("trace") && p["trace"].value("truncated", false))
    h += "<p><small>The event buffer filled up: wait states and the trace cover the beginning of the run only "
         "(TORU_TUNE_MAX_EVENTS raises the limit).</small></p>";
  h += "<h2>Diagnosis</h2>";
  if (findings.empty()) h += "<div class='ok'>No rule of the database matched this run.</div>";
  for (const auto& f : findings) {
    h += fmt::format("<div class='f'><b>{}</b> <small>[{} / {}; severity {:.3g}]</small> at <code>{}</code><br>{}",
                     xml_escape(f.title), xml_escape(f.category), xml_escape(f.rule), f.severity,
                     xml_escape(f.location), xml_escape(f.diagnosis));
    if (!f.suggestion.empty()) h += "<br><i>Mitigation:</i> " + xml_escape(f.suggestion);
    if (!f.action.empty()) h += " <code>" + xml_escape(f.action.dump()) + "</code>";
    h += "</div>";
  }
  h += "<h2>Time per category per rank</h2>" + categories_svg(p);
  h += "<h2>Compute per rank (imbalance)</h2>" + imbalance_svg(p);
  h += sites_table(p["sites"], "Top MPI call sites", 15);
  if (!p["io_sites"].empty()) h += sites_table(p["io_sites"], "I/O call sites", 10);
  h += "<h2>Timeline (a window from the middle of the run)</h2>" + timeline_svg(p);
  if (!p["regions"].empty()) {
    h += "<h2>toru phases</h2><table><tr><th>phase</th><th>detail</th><th>count</th><th>time (s, all "
         "ranks)</th><th>bytes</th><th>model bound (s)</th></tr>";
    for (const auto& r : p["regions"])
      h += fmt::format("<tr><td>{}</td><td>{}</td><td>{}</td><td>{:.4f}</td><td>{:.3g}</td><td>{:.3g}</td></tr>",
                       xml_escape(r.value("name", std::string())), xml_escape(r.value("detail", std::string())),
                       r.value("count", 0), total(r["time"]), r.value("bytes", 0.0), r.value("value", 0.0));
    h += "</table>";
  }
  return h +
         "<p><small>Written by libtoru_tune_pmpi (toru). Trace: trace/traces.otf2 (OTF2; Vampir, "
         "otf2-print).</small></p></body></html>\n";
}

}  // namespace toru::tune
