# SPDX-License-Identifier: BSD-3-Clause
# TORU_SANITIZE=address builds with ASan+UBSan, TORU_SANITIZE=thread with TSan.
# Applied globally so that tests and apps are instrumented with the library.
# TORU_SANITIZER_LINK_FLAG is what a program linking the installed libraries needs too (the
# sanitizer runtime must come first): ToruInstall.cmake puts it in the installed targets' link
# interface and the .pc files' Libs.
set(TORU_SANITIZER_LINK_FLAG "")
if(TORU_SANITIZE STREQUAL "address")
  add_compile_options(-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined)
  set(TORU_SANITIZER_LINK_FLAG -fsanitize=address,undefined)
  add_link_options(${TORU_SANITIZER_LINK_FLAG})
elseif(TORU_SANITIZE STREQUAL "thread")
  add_compile_options(-fsanitize=thread -fno-omit-frame-pointer)
  set(TORU_SANITIZER_LINK_FLAG -fsanitize=thread)
  add_link_options(${TORU_SANITIZER_LINK_FLAG})
elseif(NOT TORU_SANITIZE STREQUAL "")
  message(FATAL_ERROR "TORU_SANITIZE='${TORU_SANITIZE}': expected '', 'address' or 'thread'")
endif()
