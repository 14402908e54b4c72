// SPDX-License-Identifier: BSD-3-Clause
/* Compiled as C, without MPI: toru/core.h stands alone, and the library reports the version its
 * headers were generated with (TORU_VERSION_*, from the CMake project version). */
#include <stdio.h>
#include <string.h>

#include "toru/core.h"

int main(void) {
  int major = -1, minor = -1, patch = -1;
  if (toru_get_version(&major, &minor, &patch) != TORU_SUCCESS) return 1;
  if (major != TORU_VERSION_MAJOR || minor != TORU_VERSION_MINOR || patch != TORU_VERSION_PATCH) {
    fprintf(stderr, "toru_get_version: %d.%d.%d, headers say %s\n", major, minor, patch, TORU_VERSION_STRING);
    return 1;
  }
  char expect[64];
  snprintf(expect, sizeof expect, "%d.%d.%d", major, minor, patch);
  if (strcmp(toru_version_string(), expect) != 0 || strcmp(TORU_VERSION_STRING, expect) != 0) {
    fprintf(stderr, "toru_version_string: '%s', expected '%s'\n", toru_version_string(), expect);
    return 1;
  }
  if (toru_get_version(NULL, NULL, NULL) != TORU_SUCCESS) return 1;
  printf("toru %s\n", toru_version_string());
  return 0;
}
