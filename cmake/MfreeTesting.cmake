# MfreeTesting.cmake -- what every CTest registration shares (tests/ and programs under apps/): the environment
# and the mfree_test() helper.
# One OpenMP thread per process: ctest runs tests side by side and MPI tests start several ranks
# (the test `threads` compares 1 and several threads on purpose). MPI runs use mpiexec with a
# root-safe environment.
set(MFREE_TEST_ENV
  OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
  OMPI_MCA_btl=self,vader OMPI_MCA_btl_vader_single_copy_mechanism=none OMP_NUM_THREADS=1)

# mfree_test(NAME name EXE exe [NP n] [ARGS ...] [LABELS ...])
function(mfree_test)
  cmake_parse_arguments(T "" "NAME;EXE;NP" "ARGS;LABELS" ${ARGN})
  if(NOT T_NP)
    set(T_NP 1)
  endif()
  if(T_NP GREATER 1)
    add_test(NAME ${T_NAME} COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${T_NP}
             ${MPIEXEC_PREFLAGS} $<TARGET_FILE:${T_EXE}> ${MPIEXEC_POSTFLAGS} ${T_ARGS})
    list(APPEND T_LABELS mpi)
  else()
    add_test(NAME ${T_NAME} COMMAND $<TARGET_FILE:${T_EXE}> ${T_ARGS})
  endif()
  set_tests_properties(${T_NAME} PROPERTIES LABELS "${T_LABELS}" ENVIRONMENT "${MFREE_TEST_ENV}"
                       SKIP_RETURN_CODE 77 PROCESSORS ${T_NP})
endfunction()
