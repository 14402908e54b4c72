// SPDX-License-Identifier: BSD-3-Clause
/* A C code linking the installed toru: the C API is callable and links. */
#include <stdio.h>
#include <string.h>

#include <toru/toru.h>

int main(void) {
  const char* text = toru_error_string(TORU_SUCCESS);
  printf("toru C API: TORU_SUCCESS is '%s'\n", text);
  return text != NULL && strlen(text) > 0 ? 0 : 1;
}
