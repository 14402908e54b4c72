// SPDX-License-Identifier: BSD-3-Clause
// Escaping text for XML/HTML/SVG output (swap's timeline, tune's report, toru-dns's plots).
#pragma once

#include <string>
#include <string_view>

namespace toru {

/// `s` with <, >, & and " replaced by their entities: safe as element text and in a quoted attribute.
inline std::string xml_escape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '&':
        out += "&amp;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

}  // namespace toru
