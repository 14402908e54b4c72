# SPDX-License-Identifier: BSD-3-Clause
# toru_add_module(<name> SOURCES ... [PUBLIC_DEPS ...] [PRIVATE_DEPS ...])
# Defines the library toru_<name>, aliased toru::<name>, with public headers in
# <name>/include (installed) and sources in <name>/src. The library is shared or static as
# BUILD_SHARED_LIBS says; toru_finish_library() (deferred to the end of the directory) gives each
# library its SONAME, its exported symbols and its internal archive.
function(toru_add_module name)
  # At the end of the module's directory, once its CMakeLists.txt has added every source and link.
  cmake_language(DEFER CALL toru_finish_directory)
  cmake_parse_arguments(arg "" "" "SOURCES;PUBLIC_DEPS;PRIVATE_DEPS" ${ARGN})
  set(target toru_${name})
  if(arg_SOURCES)
    add_library(${target} ${arg_SOURCES})
    set(scope PUBLIC)
    target_link_libraries(${target} PRIVATE toru_warnings ${arg_PRIVATE_DEPS})
  else()
    add_library(${target} INTERFACE)
    set(scope INTERFACE)
  endif()
  add_library(toru::${name} ALIAS ${target})
  set_target_properties(${target} PROPERTIES EXPORT_NAME ${name} OUTPUT_NAME toru_${name})
  target_include_directories(${target} ${scope}
    $<BUILD_INTERFACE:${CMAKE_CURRENT_SOURCE_DIR}/include>
    $<BUILD_INTERFACE:${PROJECT_BINARY_DIR}/generated>
    $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
  target_compile_features(${target} ${scope} cxx_std_20)
  target_link_libraries(${target} ${scope} ${arg_PUBLIC_DEPS})
  install(TARGETS ${target} EXPORT toruTargets
    ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
    LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
    RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
  install(DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR}/include/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
    PATTERN "*.in" EXCLUDE)
endfunction()

# toru_finish_library(<target>): for one of toru's installed libraries (toru_<module>, core_mpi,
# core_device, fft_fortran):
#  - VERSION / SOVERSION (libtoru_comm.so.0 -> libtoru_comm.so.0.1.0);
#  - shared: only the public API leaves the library. A linker version script, generated at link
#    time from the library's own objects (cmake/toru_exports.py), exports the C symbols toru_*
#    and the C++ symbols of namespace toru, less every toru::...::detail::; everything else (the
#    detail namespaces, std:: and fmt:: instantiations) is local. A script rather than
#    -fvisibility=hidden, so no header needs an export macro;
#  - the internal archive toru_<x>_internal (static, built only when something links it) from the
#    SAME objects, every symbol visible, with the library's private links made public: what tests
#    that call toru::...::detail link instead of toru::<x>. In a static build it is the library.
# Runs at the end of the library's directory (toru_add_module defers it): the objects are read at
# generation time, the links then.
function(toru_finish_library target)
  get_target_property(type ${target} TYPE)
  set(internal ${target}_internal)
  if(type STREQUAL "INTERFACE_LIBRARY")
    add_library(${internal} ALIAS ${target})
    return()
  endif()
  set_target_properties(${target} PROPERTIES VERSION ${PROJECT_VERSION} SOVERSION ${PROJECT_VERSION_MAJOR})
  if(NOT type STREQUAL "SHARED_LIBRARY")
    add_library(${internal} ALIAS ${target})
    return()
  endif()
  # No <target>_EXPORTS define: the objects compile exactly as in a static build (ccache shares
  # them), and nothing in toru reads it.
  set_target_properties(${target} PROPERTIES DEFINE_SYMBOL "")
  set(map ${CMAKE_CURRENT_BINARY_DIR}/${target}.map)
  # A library may name detail symbols that other toru libraries, or inline code in its public
  # headers, use (a regex over demangled names, property TORU_EXPORTED_DETAIL): they stay exported.
  get_target_property(keep ${target} TORU_EXPORTED_DETAIL)
  if(NOT keep)
    set(keep "")
  endif()
  # The library's objects: its own, and those of object libraries it takes in as sources
  # ($<TARGET_OBJECTS:...>, the CUDA kernels), which $<TARGET_OBJECTS:target> does not list.
  set(all_objects $<TARGET_OBJECTS:${target}>)
  get_target_property(sources ${target} SOURCES)
  foreach(source IN LISTS sources)
    if(source MATCHES "^\\$<TARGET_OBJECTS:[^>]+>$")
      list(APPEND all_objects ${source})
    endif()
  endforeach()
  set(objects ${CMAKE_CURRENT_BINARY_DIR}/${target}.objects)
  file(GENERATE OUTPUT ${objects} CONTENT "$<JOIN:${all_objects},\n>\n")
  add_custom_command(TARGET ${target} PRE_LINK
    COMMAND ${Python3_EXECUTABLE} ${PROJECT_SOURCE_DIR}/cmake/toru_exports.py ${objects} ${map}
            ${CMAKE_NM} "${keep}"
    VERBATIM)
  target_link_options(${target} PRIVATE "LINKER:--version-script=${map}")

  add_library(${internal} STATIC EXCLUDE_FROM_ALL ${all_objects})
  # Its CUDA kernel objects make the Makefile generator ask for a CUDA dialect: the library's own.
  get_target_property(cuda_standard ${target} CUDA_STANDARD)
  if(cuda_standard)
    set_target_properties(${internal} PROPERTIES CUDA_STANDARD ${cuda_standard})
  endif()
  foreach(property INCLUDE_DIRECTORIES COMPILE_DEFINITIONS COMPILE_FEATURES COMPILE_OPTIONS)
    get_target_property(value ${target} INTERFACE_${property})
    if(value)
      set_property(TARGET ${internal} PROPERTY INTERFACE_${property} "${value}")
    endif()
  endforeach()
  get_target_property(links ${target} LINK_LIBRARIES)
  list(REMOVE_ITEM links toru_warnings)
  if(links)
    target_link_libraries(${internal} PUBLIC ${links})
  endif()
endfunction()

# toru_finish_directory(): toru_finish_library for every installed library of the current directory.
function(toru_finish_directory)
  get_property(targets DIRECTORY PROPERTY BUILDSYSTEM_TARGETS)
  foreach(target IN LISTS targets)
    get_target_property(type ${target} TYPE)
    # The tuner's rules engine is static on purpose (linked into the tuner and the PMPI shim); the
    # shim is a preload library with its own visibility, not a link dependency.
    if(target MATCHES "^toru_" AND type MATCHES "^(SHARED|STATIC|INTERFACE)_LIBRARY$"
       AND NOT target MATCHES "^toru_(internal|tune_analysis|tune_preload|.*_internal)$")
      toru_finish_library(${target})
    endif()
  endforeach()
endfunction()
