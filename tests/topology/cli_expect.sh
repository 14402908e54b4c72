#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# cli_expect.sh ok|fail|STATUS REGEX [MIN_LINES] -- COMMAND...
# Runs COMMAND; passes when its exit status is zero (ok), non-zero (fail) or exactly STATUS (a number:
# 2 for a usage error, 1 for a runtime error) and its combined output matches the extended REGEX at
# least MIN_LINES times (default 1; e.g. once per rank).
want=$1; regex=$2; shift 2
min=1
if [ "$1" != "--" ]; then min=$1; shift; fi
shift
out=$("$@" 2>&1); rc=$?
printf '%s\n' "$out"
if [ "$want" = ok ] && [ $rc -ne 0 ]; then echo "FAIL: expected exit status 0, got $rc"; exit 1; fi
if [ "$want" = fail ] && [ $rc -eq 0 ]; then echo "FAIL: expected a non-zero exit status"; exit 1; fi
case $want in
  ok | fail) ;;
  *) if [ "$rc" -ne "$want" ]; then echo "FAIL: expected exit status $want, got $rc"; exit 1; fi ;;
esac
n=$(printf '%s\n' "$out" | grep -cE -- "$regex")
if [ "$n" -lt "$min" ]; then echo "FAIL: expected $min line(s) matching '$regex', got $n"; exit 1; fi
exit 0
