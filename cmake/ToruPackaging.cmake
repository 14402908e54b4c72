# SPDX-License-Identifier: BSD-3-Clause
# Debian package: `cpack -G DEB` in a build tree makes toru_<version>_<arch>.deb with everything
# `cmake --install` puts in the prefix (libraries, headers, CMake and pkg-config files, programs),
# under /usr. Its Depends are the Debian -dev packages of what toru was built with: the installed
# toruConfig.cmake and .pc files find them (find_dependency, Requires), so a consumer needs their
# headers and CMake/pkg-config files, not only the runtime libraries that dpkg-shlibdeps would
# name. The CUDA toolkit, NCCL and cuDNN are not Debian packages (NVIDIA's repositories name them
# per version): a build with them makes a package for a machine that has them; a package for any
# Debian 12 machine is built with -DTORU_ENABLE_CUDA=OFF -DTORU_ENABLE_NCCL=OFF.
set(CPACK_PACKAGE_NAME toru)
set(CPACK_PACKAGE_VENDOR "the toru authors")
set(CPACK_PACKAGE_CONTACT "the toru authors <toru@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
  "Torus-aware MPI all-to-all, parallel FFT and large-model memory planning (libraries, headers, programs)")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_RESOURCE_FILE_LICENSE ${PROJECT_SOURCE_DIR}/LICENSE)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION libdevel)
set(CPACK_DEBIAN_PACKAGE_MAINTAINER "${CPACK_PACKAGE_CONTACT}")

set(toru_deb_depends libopenmpi-dev openmpi-bin libfftw3-dev libfftw3-mpi-dev libhwloc-dev libfmt-dev
    nlohmann-json3-dev zlib1g-dev pkg-config)
if(TORU_HAVE_FORTRAN)
  list(APPEND toru_deb_depends gfortran)
endif()
if(TARGET toru_train)
  list(APPEND toru_deb_depends libdnnl-dev)
endif()
if(TORU_ENABLE_ONNX)
  list(APPEND toru_deb_depends libonnx-dev libprotobuf-dev)
endif()
if(TORU_ENABLE_STREAM)
  list(APPEND toru_deb_depends libzstd-dev liblz4-dev libpng-dev)
endif()
if(TORU_HAVE_OTF2)
  list(APPEND toru_deb_depends libotf2-trace-dev)
endif()
list(JOIN toru_deb_depends ", " CPACK_DEBIAN_PACKAGE_DEPENDS)
set(CPACK_GENERATOR DEB)
include(CPack)
