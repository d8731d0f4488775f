# FindP4EST.cmake -- p4est and libsc (Debian: libp4est-dev), built with MPI.
# Defines the imported target P4EST::P4EST.
find_path(P4EST_INCLUDE_DIR p8est_lnodes.h PATH_SUFFIXES p4est)
find_library(P4EST_LIBRARY NAMES p4est)
find_library(SC_LIBRARY NAMES sc)
include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(P4EST
  REQUIRED_VARS P4EST_LIBRARY SC_LIBRARY P4EST_INCLUDE_DIR
  FAIL_MESSAGE "p4est/libsc not found: install them with 'apt-get install libp4est-dev' (or set CMAKE_PREFIX_PATH)")
if(P4EST_FOUND AND NOT TARGET P4EST::P4EST)
  add_library(P4EST::P4EST INTERFACE IMPORTED)
  set_target_properties(P4EST::P4EST PROPERTIES
    INTERFACE_INCLUDE_DIRECTORIES "${P4EST_INCLUDE_DIR}"
    INTERFACE_LINK_LIBRARIES "${P4EST_LIBRARY};${SC_LIBRARY}")
endif()
mark_as_advanced(P4EST_INCLUDE_DIR P4EST_LIBRARY SC_LIBRARY)
