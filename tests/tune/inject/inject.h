/* SPDX-License-Identifier: BSD-3-Clause */
/* Shared by the validation programs: "compute" as a sleep, so that a rank's work does not depend on
 * how many other ranks share its core (the tests run oversubscribed on small machines). Each
 * program takes the directory for its files as argv[1]. The line of the injected bottleneck
 * carries a marker INJECT(rule) that the test driver looks for in the tool's findings. */
#pragma once
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static void work(double seconds) {
  struct timespec ts;
  ts.tv_sec = (time_t)seconds;
  ts.tv_nsec = (long)((seconds - (double)ts.tv_sec) * 1e9);
  nanosleep(&ts, NULL);
}

static const char* out_dir(int argc, char** argv) { return argc > 1 ? argv[1] : "."; }
