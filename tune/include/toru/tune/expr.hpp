// SPDX-License-Identifier: BSD-3-Clause
// The rule condition language: a small, safe expression language over named metrics, parsed by a
// recursive-descent parser into a tree (no eval, no side effects, no loops).
//
//   expr    := or
//   or      := and ( "||" and )*
//   and     := not ( "&&" not )*
//   not     := "!" not | cmp
//   cmp     := sum ( ("<" | "<=" | ">" | ">=" | "==" | "!=") sum )?
//   sum     := term ( ("+" | "-") term )*
//   term    := unary ( ("*" | "/") unary )*
//   unary   := "-" unary | primary
//   primary := number | 'string' | "string" | name | name "(" args ")" | "(" expr ")"
//   names   := [A-Za-z_][A-Za-z0-9_.]*     functions: min, max, abs, has(name)
//
// Values are numbers or strings; booleans are 1 and 0; == and != compare strings too. A metric the
// scope does not have is an error at evaluation (errc::invalid_argument naming it), except inside
// has(), which tests for it, and on the right of a false && or a true || (short circuit).
//
//   auto e = toru::tune::expression::parse("late_sender_fraction > 0.1 && calls >= 2");
//   bool fire = e.test([&](std::string_view n) -> std::optional<toru::tune::value> {...});
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

namespace toru::tune {

using value = std::variant<double, std::string>;
/// Looks a metric up by name; nullopt when the scope does not have it.
using metric_lookup = std::function<std::optional<value>(std::string_view)>;

class expression {
 public:
  /// Parses `text`; throws toru::error(invalid_argument) with the position and what was expected.
  static expression parse(std::string_view text);
  value eval(const metric_lookup& lookup) const;
  /// eval() as a condition: a number is true when non-zero, a string when non-empty.
  bool test(const metric_lookup& lookup) const;
  const std::string& text() const { return text_; }

  struct node;

 private:
  std::shared_ptr<const node> root_;
  std::string text_;
};

}  // namespace toru::tune
