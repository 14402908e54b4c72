# SPDX-License-Identifier: BSD-3-Clause
# Warning flags every toru target gets (not its consumers).
add_library(toru_warnings INTERFACE)
target_compile_options(toru_warnings INTERFACE
  $<$<COMPILE_LANGUAGE:CXX,C>:-Wall -Wextra -Wpedantic -Wshadow>
  $<$<COMPILE_LANGUAGE:CXX>:-Wnon-virtual-dtor>
  $<$<AND:$<COMPILE_LANGUAGE:CXX,C>,$<BOOL:${TORU_WARNINGS_AS_ERRORS}>>:-Werror>)
install(TARGETS toru_warnings EXPORT toruTargets)
