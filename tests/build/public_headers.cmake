# SPDX-License-Identifier: BSD-3-Clause
# Every public header compiles alone: one generated translation unit per header includes only it
# (C headers also as C). None may bring in nlohmann/json.hpp, which costs every includer its compile
# time: declarations need only <nlohmann/json_fwd.hpp>. tune's headers are the exception: its calls
# take and return JSON documents (toru::tune::config is an nlohmann::json held by value).
set(json_headers_allowed "^toru/tune/")
set(check_dir ${CMAKE_CURRENT_BINARY_DIR}/public_headers)
set(check_sources)
foreach(module IN LISTS TORU_MODULES)
  set(include_dir ${PROJECT_SOURCE_DIR}/${module}/include)
  file(GLOB_RECURSE headers RELATIVE ${include_dir} ${include_dir}/toru/*.hpp ${include_dir}/toru/*.h)
  foreach(header IN LISTS headers)
    string(MAKE_C_IDENTIFIER "${header}" stem)
    set(json_check "")
    if(NOT header MATCHES "${json_headers_allowed}")
      set(json_check "#ifdef INCLUDE_NLOHMANN_JSON_HPP_\n#error \"${header} includes nlohmann/json.hpp: use <nlohmann/json_fwd.hpp>, or move the JSON (de)serialisation to a separate *_json.hpp\"\n#endif\n")
    endif()
    set(text "#include \"${header}\"\n${json_check}")
    file(CONFIGURE OUTPUT ${check_dir}/${stem}.cpp CONTENT "${text}")
    list(APPEND check_sources ${check_dir}/${stem}.cpp)
    if(header MATCHES "\\.h$")
      file(CONFIGURE OUTPUT ${check_dir}/${stem}.c CONTENT "${text}")
      list(APPEND check_sources ${check_dir}/${stem}.c)
    endif()
  endforeach()
endforeach()
# Built by the test, not by default: a header that fails fails the test, not everyone's build.
add_library(toru_public_header_check OBJECT EXCLUDE_FROM_ALL ${check_sources})
target_link_libraries(toru_public_header_check PRIVATE toru::toru toru_warnings)
add_test(NAME build_public_headers
  COMMAND ${CMAKE_COMMAND} --build ${PROJECT_BINARY_DIR} --target toru_public_header_check)
set_tests_properties(build_public_headers PROPERTIES LABELS "unit;build" TIMEOUT 900)
