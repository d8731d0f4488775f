# MfreeInstall.cmake -- what `cmake --install` puts under the prefix:
#   include/mfree.h                    the public header (it includes only <mpi.h>, the C library and its
#   include/mfree_newton.h             part on Newton's method, which it includes last)
#   lib/libmfree.a                     the library, with the CUDA backend's objects when built with it
#   lib/cmake/mfree/                   mfreeConfig.cmake, mfreeConfigVersion.cmake, the exported targets
#                                      (mfree::mfree) and FindP4EST.cmake, which the config uses to find
#                                      p4est again on the user's side
#   lib/pkgconfig/mfree.pc             the same flags for pkg-config users
#   bin/mfree-poisson, bin/mfree-bench
# The archive is static: a user's link line needs everything it calls (MPI, p4est/sc, OpenMP and,
# with CUDA, cudart, cuBLAS, cuSPARSE and the C++ runtime of nvcc's host compiler), so the exported targets and the
# .pc file's Libs carry all of it.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(_mfree_targets mfree)
set(_mfree_cxx_runtime)
if(MFREE_WITH_CUDA)
  # the backend's object library: no archive of its own, its link requirements in the export
  list(APPEND _mfree_targets mfree_cuda)
  # nvcc compiles the host side as C++: the build tree links with nvcc, a user's C program with the C
  # compiler, which then needs the host compiler's C++ runtime by name
  foreach(l IN LISTS CMAKE_CUDA_IMPLICIT_LINK_LIBRARIES)
    if(l MATCHES "^(stdc\\+\\+|c\\+\\+)$")
      list(APPEND _mfree_cxx_runtime ${l})
    endif()
  endforeach()
  target_link_libraries(mfree_cuda INTERFACE $<INSTALL_INTERFACE:${_mfree_cxx_runtime}>)
endif()
install(TARGETS ${_mfree_targets} EXPORT mfreeTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(FILES ${PROJECT_SOURCE_DIR}/lib/mfree.h ${PROJECT_SOURCE_DIR}/lib/mfree_newton.h
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(TARGETS mfree-poisson mfree-bench RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})

# ---- CMake package: find_package(mfree) gives mfree::mfree
set(MFREE_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/mfree)
install(EXPORT mfreeTargets NAMESPACE mfree:: DESTINATION ${MFREE_CMAKE_DIR})
set(MFREE_WITH_OPENMP ${OpenMP_C_FOUND})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/mfreeConfig.cmake.in
  ${PROJECT_BINARY_DIR}/mfreeConfig.cmake INSTALL_DESTINATION ${MFREE_CMAKE_DIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/mfreeConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion) # 0.x: a minor release may change the API
install(FILES ${PROJECT_BINARY_DIR}/mfreeConfig.cmake ${PROJECT_BINARY_DIR}/mfreeConfigVersion.cmake
  ${PROJECT_SOURCE_DIR}/cmake/FindP4EST.cmake DESTINATION ${MFREE_CMAKE_DIR})

# ---- pkg-config: paths of the dependencies as this build found them, mfree's own relative to the .pc
# file, so that `cmake --install --prefix P` (a prefix chosen after configuring) gives a working file.
set(_pc_cflags "-I\${includedir}")
foreach(d IN LISTS MPI_C_INCLUDE_DIRS)
  string(APPEND _pc_cflags " -I${d}")
endforeach()
foreach(d IN LISTS MPI_C_COMPILE_DEFINITIONS)
  string(APPEND _pc_cflags " -D${d}")
endforeach()
foreach(o IN LISTS MPI_C_COMPILE_OPTIONS)
  string(APPEND _pc_cflags " ${o}")
endforeach()
set(_pc_libs "-L\${libdir} -lmfree")
set(_pc_deps)
if(MFREE_WITH_CUDA)
  list(APPEND _pc_deps ${CUDA_cudart_LIBRARY} ${CUDA_cublas_LIBRARY} ${CUDA_cusparse_LIBRARY} ${CUDA_nvrtc_LIBRARY}
       ${_mfree_cxx_runtime})
endif()
if(MFREE_SCOTCH_INCLUDE AND MFREE_SCOTCH_LIB AND MFREE_SCOTCHERR_LIB) # lib/CMakeLists.txt: the simplex partition
  list(APPEND _pc_deps ${MFREE_SCOTCH_LIB} ${MFREE_SCOTCHERR_LIB})
endif()
list(APPEND _pc_deps ${P4EST_LIBRARY} ${SC_LIBRARY} ${CMAKE_DL_LIBS})
if(OpenMP_C_FOUND)
  list(APPEND _pc_deps ${OpenMP_C_LIBRARIES})
endif()
list(APPEND _pc_deps ${MPI_C_LIBRARIES} m)
foreach(l IN LISTS _pc_deps)
  if(IS_ABSOLUTE "${l}")
    string(APPEND _pc_libs " ${l}")
  else()
    string(APPEND _pc_libs " -l${l}")
  endif()
endforeach()
foreach(o IN LISTS MPI_C_LINK_FLAGS)
  string(APPEND _pc_libs " ${o}")
endforeach()
# prefix relative to the .pc file: one ".." per component of LIBDIR/pkgconfig
if(IS_ABSOLUTE "${CMAKE_INSTALL_LIBDIR}" OR IS_ABSOLUTE "${CMAKE_INSTALL_INCLUDEDIR}")
  message(FATAL_ERROR "mfree.pc: CMAKE_INSTALL_LIBDIR '${CMAKE_INSTALL_LIBDIR}' and CMAKE_INSTALL_INCLUDEDIR "
                      "'${CMAKE_INSTALL_INCLUDEDIR}' must be relative to the install prefix")
endif()
set(_pc_prefix "\${pcfiledir}")
string(REPLACE "/" ";" _pc_parts "${CMAKE_INSTALL_LIBDIR}/pkgconfig")
foreach(p IN LISTS _pc_parts)
  string(APPEND _pc_prefix "/..")
endforeach()
configure_file(${PROJECT_SOURCE_DIR}/cmake/mfree.pc.in ${PROJECT_BINARY_DIR}/mfree.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/mfree.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
