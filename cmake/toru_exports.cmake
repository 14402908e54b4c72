# cmake -DOBJECTS=<file listing object files> -DMAP=<version script> -DNM=<nm> [-DKEEP=<regex>]
#       -P toru_exports.cmake
#
# Writes the linker version script of one shared toru library (cmake/ToruModule.cmake): the
# symbols its objects define that are public API are listed by name under global, everything else
# is local. Public API: C symbols toru_* (and gfortran's __toru_*_MOD_* module procedures); C++
# symbols of namespace toru with their type info, vtables and thunks, unless the name (template
# arguments included) lies in a detail namespace and does not match KEEP. Exceptions thrown across
# libraries need their typeinfo exported; std:: and fmt:: instantiations stay local (each library
# keeps its own copy).
file(STRINGS ${OBJECTS} objects)
if(NOT NM)
  set(NM nm)
endif()
execute_process(COMMAND ${NM} -g -P --defined-only ${objects}
  OUTPUT_VARIABLE listing RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "toru_exports: ${NM} failed: ${err}")
endif()
# nm -P: "<name> <type> [value size]"; object headers ("file.o:") have no type.
string(REGEX MATCHALL "(^|\n)[^ \n]+ [A-Za-z]" entries "${listing}")
set(names "")
foreach(entry IN LISTS entries)
  string(REGEX REPLACE "^\n?([^ ]+) ([A-Za-z])$" "\\1;\\2" parts "${entry}")
  list(GET parts 0 name)
  list(APPEND names "${name}")
endforeach()
list(REMOVE_DUPLICATES names)

# Demangle all at once (one c++filt run rather than one per symbol).
list(JOIN names "\n" text)
file(WRITE ${MAP}.names "${text}\n")
find_program(CXXFILT NAMES c++filt)
execute_process(COMMAND ${CXXFILT} INPUT_FILE ${MAP}.names OUTPUT_VARIABLE demangled RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "toru_exports: c++filt failed")
endif()
string(REPLACE ";" "\\;" demangled "${demangled}")
string(REPLACE "\n" ";" demangled "${demangled}")

set(exported "")
foreach(name pretty IN ZIP_LISTS names demangled)
  if(name MATCHES "^(toru_|__toru_.*_MOD_)")
    list(APPEND exported "${name}")
  elseif(pretty MATCHES "^((typeinfo|typeinfo name|vtable|VTT|construction vtable|guard variable) for |(non-)?virtual thunk to )?toru::"
         AND (NOT pretty MATCHES "detail::" OR (KEEP AND pretty MATCHES "${KEEP}")))
    list(APPEND exported "${name}")
  endif()
endforeach()
list(JOIN exported ";\n    " body)
if(body)
  set(body "    ${body};\n")
endif()
file(WRITE ${MAP}.tmp "{\n  global:\n${body}  local:\n    *;\n};\n")
# Leave the file untouched when nothing changed, so the link is not redone for nothing.
execute_process(COMMAND ${CMAKE_COMMAND} -E copy_if_different ${MAP}.tmp ${MAP})
