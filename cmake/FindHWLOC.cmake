# SPDX-License-Identifier: BSD-3-Clause
# Finds hwloc and defines the imported target HWLOC::hwloc.
find_path(HWLOC_INCLUDE_DIR hwloc.h)
find_library(HWLOC_LIBRARY hwloc)
include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(HWLOC REQUIRED_VARS HWLOC_INCLUDE_DIR HWLOC_LIBRARY)
if(HWLOC_FOUND AND NOT TARGET HWLOC::hwloc)
  add_library(HWLOC::hwloc UNKNOWN IMPORTED)
  set_target_properties(HWLOC::hwloc PROPERTIES
    IMPORTED_LOCATION ${HWLOC_LIBRARY}
    INTERFACE_INCLUDE_DIRECTORIES ${HWLOC_INCLUDE_DIR})
endif()
mark_as_advanced(HWLOC_INCLUDE_DIR HWLOC_LIBRARY)
