// SPDX-License-Identifier: BSD-3-Clause
#include "toru/tune/expr.hpp"

#include <cctype>
#include <charconv>
#include <cmath>
#include <vector>

#include <fmt/format.h>

#include "toru/core/error.hpp"

namespace toru::tune {

struct expression::node {
  enum class op { number, string, name, call, neg, not_, and_, or_, add, sub, mul, div, lt, le, gt, ge, eq, ne };
  op kind;
  double number = 0;
  std::string text;  // string literal, metric or function name
  std::vector<std::shared_ptr<const node>> args;
};

namespace {

using node = expression::node;
using op = node::op;
using ptr = std::shared_ptr<const node>;

class parser {
 public:
  explicit parser(std::string_view s) : s_(s) {}

  ptr parse() {
    ptr e = parse_or();
    skip();
    if (i_ != s_.size()) fail("an operator or the end of the expression");
    return e;
  }

 private:
  [[noreturn]] void fail(std::string_view expected) const {
    throw error(errc::invalid_argument,
                fmt::format("rule condition '{}': at position {}: expected {}, got '{}'", s_, i_ + 1, expected,
                            i_ < s_.size() ? s_.substr(i_, 8) : std::string_view("end")));
  }
  void skip() {
    while (i_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[i_]))) ++i_;
  }
  bool eat(std::string_view tok) {
    skip();
    if (s_.substr(i_, tok.size()) != tok) return false;
    // "<" must not eat the start of "<=" (and so on).
    if (tok.size() == 1 && (tok == "<" || tok == ">" || tok == "!") && i_ + 1 < s_.size() && s_[i_ + 1] == '=')
      return false;
    i_ += tok.size();
    return true;
  }
  static ptr make(op k, std::vector<ptr> args = {}, double v = 0, std::string t = {}) {
    return std::make_shared<const node>(node{k, v, std::move(t), std::move(args)});
  }
  ptr parse_or() {
    ptr l = parse_and();
    while (eat("||")) l = make(op::or_, {l, parse_and()});
    return l;
  }
  ptr parse_and() {
    ptr l = parse_not();
    while (eat("&&")) l = make(op::and_, {l, parse_not()});
    return l;
  }
  ptr parse_not() {
    if (eat("!")) return make(op::not_, {parse_not()});
    return parse_cmp();
  }
  ptr parse_cmp() {
    ptr l = parse_sum();
    static const std::pair<const char*, op> ops[] = {{"<=", op::le}, {">=", op::ge}, {"==", op::eq},
                                                     {"!=", op::ne}, {"<", op::lt},  {">", op::gt}};
    for (const auto& [t, k] : ops)
      if (eat(t)) return make(k, {l, parse_sum()});
    return l;
  }
  ptr parse_sum() {
    ptr l = parse_term();
    for (;;) {
      if (eat("+"))
        l = make(op::add, {l, parse_term()});
      else if (eat("-"))
        l = make(op::sub, {l, parse_term()});
      else
        return l;
    }
  }
  ptr parse_term() {
    ptr l = parse_unary();
    for (;;) {
      if (eat("*"))
        l = make(op::mul, {l, parse_unary()});
      else if (eat("/"))
        l = make(op::div, {l, parse_unary()});
      else
        return l;
    }
  }
  ptr parse_unary() {
    if (eat("-")) return make(op::neg, {parse_unary()});
    return parse_primary();
  }
  ptr parse_primary() {
    skip();
    if (i_ >= s_.size()) fail("a number, a name, a string or '('");
    const char c = s_[i_];
    if (c == '(') {
      ++i_;
      ptr e = parse_or();
      if (!eat(")")) fail("')'");
      return e;
    }
    if (c == '\'' || c == '"') {
      const std::size_t end = s_.find(c, i_ + 1);
      if (end == std::string_view::npos) fail("a closing quote");
      std::string t(s_.substr(i_ + 1, end - i_ - 1));
      i_ = end + 1;
      return make(op::string, {}, 0, std::move(t));
    }
    if (std::isdigit(static_cast<unsigned char>(c)) || c == '.') {
      double v = 0;
      auto [p, ec] = std::from_chars(s_.data() + i_, s_.data() + s_.size(), v);
      if (ec != std::errc{}) fail("a number");
      i_ = static_cast<std::size_t>(p - s_.data());
      return make(op::number, {}, v);
    }
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      const std::size_t b = i_;
      while (i_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[i_])) || s_[i_] == '_' || s_[i_] == '.'))
        ++i_;
      std::string name(s_.substr(b, i_ - b));
      if (name == "true") return make(op::number, {}, 1);
      if (name == "false") return make(op::number, {}, 0);
      if (!eat("(")) return make(op::name, {}, 0, std::move(name));
      if (name != "min" && name != "max" && name != "abs" && name != "has") {
        i_ = b;
        fail("a known function (min, max, abs, has)");
      }
      std::vector<ptr> args;
      if (!eat(")")) {
        do args.push_back(parse_or());
        while (eat(","));
        if (!eat(")")) fail("',' or ')'");
      }
      const std::size_t want = name == "abs" || name == "has" ? 1 : 2;
      if (args.size() != want) {
        i_ = b;
        fail(fmt::format("{}() with {} argument(s)", name, want));
      }
      if (name == "has" && args[0]->kind != op::name) {
        i_ = b;
        fail("has(metric_name)");
      }
      return make(op::call, std::move(args), 0, std::move(name));
    }
    fail("a number, a name, a string or '('");
  }

  std::string_view s_;
  std::size_t i_ = 0;
};

double num(const value& v, const node& n) {
  if (const double* d = std::get_if<double>(&v)) return *d;
  throw error(errc::invalid_argument,
              fmt::format("rule condition: '{}' is a string where a number is expected", std::get<std::string>(v)));
  (void)n;
}
bool truth(const value& v) {
  if (const double* d = std::get_if<double>(&v)) return *d != 0;
  return !std::get<std::string>(v).empty();
}

value eval(const node& n, const metric_lookup& look) {
  auto arg = [&](std::size_t i) { return eval(*n.args[i], look); };
  auto number = [&](std::size_t i) { return num(arg(i), n); };
  switch (n.kind) {
    case op::number:
      return n.number;
    case op::string:
      return n.text;
    case op::name: {
      auto v = look(n.text);
      if (!v) throw error(errc::invalid_argument, fmt::format("rule condition: unknown metric '{}'", n.text));
      return *v;
    }
    case op::call:
      if (n.text == "has") return look(n.args[0]->text) ? 1.0 : 0.0;
      if (n.text == "abs") return std::abs(number(0));
      if (n.text == "min") return std::min(number(0), number(1));
      return std::max(number(0), number(1));
    case op::neg:
      return -number(0);
    case op::not_:
      return truth(arg(0)) ? 0.0 : 1.0;
    case op::and_:
      return truth(arg(0)) && truth(arg(1)) ? 1.0 : 0.0;
    case op::or_:
      return truth(arg(0)) || truth(arg(1)) ? 1.0 : 0.0;
    case op::add:
      return number(0) + number(1);
    case op::sub:
      return number(0) - number(1);
    case op::mul:
      return number(0) * number(1);
    case op::div: {
      const double d = number(1);
      return d == 0 ? 0.0 : number(0) / d;  // a ratio over an empty quantity is 0, not inf
    }
    case op::eq:
    case op::ne: {
      const value a = arg(0), b = arg(1);
      const bool same = a == b;
      return (n.kind == op::eq) == same ? 1.0 : 0.0;
    }
    case op::lt:
      return number(0) < number(1) ? 1.0 : 0.0;
    case op::le:
      return number(0) <= number(1) ? 1.0 : 0.0;
    case op::gt:
      return number(0) > number(1) ? 1.0 : 0.0;
    case op::ge:
      return number(0) >= number(1) ? 1.0 : 0.0;
  }
  return 0.0;
}

}  // namespace

expression expression::parse(std::string_view text) {
  expression e;
  e.root_ = parser(text).parse();
  e.text_ = std::string(text);
  return e;
}

value expression::eval(const metric_lookup& lookup) const { return tune::eval(*root_, lookup); }

bool expression::test(const metric_lookup& lookup) const { return truth(eval(lookup)); }

}  // namespace toru::tune
