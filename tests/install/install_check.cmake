# install_check.cmake -- the installed package, as a user meets it.
#   MODE=install   : `cmake --install BUILD_DIR --prefix PREFIX` into an emptied PREFIX; the expected files
#                    are there, include/ holds mfree.h and its part mfree_newton.h alone, and the installed mfree-poisson runs
#   MODE=cmake     : the outside project in SOURCE_DIR (find_package(mfree), mfree::mfree) builds EXAMPLE
#                    against PREFIX; the program runs
#   MODE=pkgconfig : EXAMPLE compiled by C_COMPILER with `pkg-config --cflags --libs mfree` from PREFIX;
#                    the program runs (no pkg-config: prints "pkg-config not found", which the test skips on)
# Variables: MODE, BUILD_DIR, PREFIX, LIBDIR (relative to PREFIX), WORK (scratch folder), SOURCE_DIR,
# EXAMPLE, GENERATOR, C_COMPILER, WITH_CUDA.
cmake_minimum_required(VERSION 3.20)
unset(ENV{DESTDIR}) # the files must land in PREFIX itself

# run a program built from the README's example: it prints "converged after N CG iterations"
function(run_example exe)
  execute_process(COMMAND ${exe} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0 OR NOT out MATCHES "^converged after [0-9]+ CG iterations")
    message(FATAL_ERROR "${exe} (exit ${rc}) did not report a converged solve:\n${out}\n${err}")
  endif()
endfunction()

function(run_step what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${what} failed (exit ${rc}):\n${ARGN}\n${out}\n${err}")
  endif()
endfunction()

if(MODE STREQUAL "install")
  file(REMOVE_RECURSE "${PREFIX}")
  run_step("cmake --install" ${CMAKE_COMMAND} --install "${BUILD_DIR}" --prefix "${PREFIX}")
  set(expected include/mfree.h include/mfree_newton.h ${LIBDIR}/libmfree.a ${LIBDIR}/cmake/mfree/mfreeConfig.cmake
      ${LIBDIR}/cmake/mfree/mfreeConfigVersion.cmake ${LIBDIR}/cmake/mfree/mfreeTargets.cmake
      ${LIBDIR}/cmake/mfree/FindP4EST.cmake ${LIBDIR}/pkgconfig/mfree.pc bin/mfree-poisson bin/mfree-bench)
  foreach(f IN LISTS expected)
    if(NOT EXISTS "${PREFIX}/${f}")
      message(FATAL_ERROR "not installed: ${PREFIX}/${f}")
    endif()
  endforeach()
  # mfree.h (with its part mfree_newton.h) is the whole public interface: it must compile without any other header
  file(GLOB headers RELATIVE "${PREFIX}/include" "${PREFIX}/include/*")
  list(SORT headers)
  if(NOT headers STREQUAL "mfree.h;mfree_newton.h")
    message(FATAL_ERROR "include/ should hold mfree.h and mfree_newton.h alone, holds: ${headers}")
  endif()
  execute_process(COMMAND "${PREFIX}/bin/mfree-poisson" --dim 2 --degree 2 --refine 2 --backend cpu
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0 OR NOT out MATCHES "L2 error")
    message(FATAL_ERROR "the installed mfree-poisson failed (exit ${rc}):\n${out}\n${err}")
  endif()
elseif(MODE STREQUAL "cmake")
  set(dir "${WORK}/cmake")
  file(REMOVE_RECURSE "${dir}")
  run_step("configuring the outside project" ${CMAKE_COMMAND} -S "${SOURCE_DIR}" -B "${dir}" -G "${GENERATOR}"
           -DCMAKE_BUILD_TYPE=Release "-DCMAKE_C_COMPILER=${C_COMPILER}" "-DCMAKE_PREFIX_PATH=${PREFIX}"
           "-DMFREE_PREFIX=${PREFIX}" "-DMFREE_EXAMPLE=${EXAMPLE}" -DCMAKE_FIND_PACKAGE_NO_PACKAGE_REGISTRY=ON)
  run_step("building the outside project" ${CMAKE_COMMAND} --build "${dir}")
  run_example("${dir}/example")
elseif(MODE STREQUAL "pkgconfig")
  find_program(PKG_CONFIG NAMES pkg-config pkgconf)
  if(NOT PKG_CONFIG)
    message("mfree: pkg-config not found")
    return()
  endif()
  set(dir "${WORK}/pkgconfig")
  file(REMOVE_RECURSE "${dir}")
  file(MAKE_DIRECTORY "${dir}")
  set(ENV{PKG_CONFIG_PATH} "${PREFIX}/${LIBDIR}/pkgconfig")
  execute_process(COMMAND ${PKG_CONFIG} --cflags --libs mfree RESULT_VARIABLE rc OUTPUT_VARIABLE flags
                  ERROR_VARIABLE err OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "pkg-config --cflags --libs mfree failed (exit ${rc}): ${err}")
  endif()
  # the first include folder is mfree's own: the .pc file finds it relative to itself
  string(REGEX MATCH "^-I([^ ]+)" inc "${flags}")
  get_filename_component(inc "${CMAKE_MATCH_1}" REALPATH)
  get_filename_component(want "${PREFIX}/include" REALPATH)
  if(NOT inc STREQUAL want)
    message(FATAL_ERROR "pkg-config's include folder is '${inc}', not ${want}: ${flags}")
  endif()
  separate_arguments(flags UNIX_COMMAND "${flags}")
  run_step("compiling with pkg-config's flags" ${C_COMPILER} "${EXAMPLE}" -o "${dir}/example" ${flags})
  run_example("${dir}/example")
else()
  message(FATAL_ERROR "unknown MODE '${MODE}'")
endif()
