# SPDX-License-Identifier: BSD-3-Clause
# TORU_SANITIZE=address builds with ASan+UBSan, TORU_SANITIZE=thread with TSan.
# Applied globally so that tests and apps are instrumented with the library.
if(TORU_SANITIZE STREQUAL "address")
  add_compile_options(-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined)
  add_link_options(-fsanitize=address,undefined)
elseif(TORU_SANITIZE STREQUAL "thread")
  add_compile_options(-fsanitize=thread -fno-omit-frame-pointer)
  add_link_options(-fsanitize=thread)
elseif(NOT TORU_SANITIZE STREQUAL "")
  message(FATAL_ERROR "TORU_SANITIZE='${TORU_SANITIZE}': expected '', 'address' or 'thread'")
endif()
