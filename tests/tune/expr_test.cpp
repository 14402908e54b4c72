// SPDX-License-Identifier: BSD-3-Clause
#include <gtest/gtest.h>

#include <map>

#include "toru/core/error.hpp"
#include "toru/tune/expr.hpp"

namespace {

using toru::tune::expression;
using toru::tune::value;

toru::tune::metric_lookup metrics(std::map<std::string, value> m) {
  return [m](std::string_view n) -> std::optional<value> {
    auto it = m.find(std::string(n));
    if (it == m.end()) return std::nullopt;
    return it->second;
  };
}

double num(const std::string& text, const toru::tune::metric_lookup& look = metrics({})) {
  return std::get<double>(expression::parse(text).eval(look));
}

TEST(TuneExpr, ArithmeticPrecedenceAndAssociativity) {
  EXPECT_DOUBLE_EQ(num("1 + 2 * 3"), 7);
  EXPECT_DOUBLE_EQ(num("(1 + 2) * 3"), 9);
  EXPECT_DOUBLE_EQ(num("10 - 4 - 3"), 3);  // left associative
  EXPECT_DOUBLE_EQ(num("64 / 4 / 2"), 8);
  EXPECT_DOUBLE_EQ(num("-2 * -3"), 6);
  EXPECT_DOUBLE_EQ(num("1.5e3 / 3"), 500);
  EXPECT_DOUBLE_EQ(num("min(3, 2) + max(4, 7) + abs(-1)"), 10);
  EXPECT_DOUBLE_EQ(num("5 / 0"), 0);  // an empty denominator is a zero ratio
}

TEST(TuneExpr, LogicAndComparison) {
  EXPECT_DOUBLE_EQ(num("1 < 2 && 2 <= 2 && 3 > 2 && 3 >= 3 && 1 != 2 && 2 == 2"), 1);
  EXPECT_DOUBLE_EQ(num("1 > 2 || 0"), 0);
  EXPECT_DOUBLE_EQ(num("!0 && !(1 < 0)"), 1);
  EXPECT_DOUBLE_EQ(num("1 || 0 && 0"), 1);  // && binds tighter than ||
  EXPECT_DOUBLE_EQ(num("true && !false"), 1);
}

TEST(TuneExpr, MetricsStringsAndHas) {
  const auto look = metrics({{"calls", 5000.0}, {"avg_bytes", 8.0}, {"function", std::string("MPI_Send")}});
  EXPECT_TRUE(expression::parse("calls >= 2000 && avg_bytes < 1024").test(look));
  EXPECT_TRUE(expression::parse("function == 'MPI_Send' && function != \"MPI_Recv\"").test(look));
  EXPECT_TRUE(expression::parse("has(calls) && !has(papi_cycles)").test(look));
  // Short circuit: the missing metric on the right is never looked up.
  EXPECT_FALSE(expression::parse("has(papi_cycles) && papi_cycles > 1").test(look));
  EXPECT_THROW(expression::parse("papi_cycles > 1").test(look), toru::error);
  EXPECT_THROW(expression::parse("function + 1").test(look), toru::error);
}

TEST(TuneExpr, SyntaxErrorsNameThePosition) {
  for (const char* bad : {"1 +", "(1 + 2", "calls >", "foo(1)", "min(1)", "'open", "1 2", "has(1)", "&& 1", ""}) {
    try {
      (void)expression::parse(bad);
      ADD_FAILURE() << "accepted: " << bad;
    } catch (const toru::error& e) {
      EXPECT_EQ(e.code(), toru::errc::invalid_argument) << bad;
      EXPECT_NE(std::string(e.what()).find("position"), std::string::npos) << e.what();
    }
  }
}

}  // namespace
