# example_check.cmake -- runs an example program and checks what its user sees: it exits 0 and, when
# EXPECT is given, its standard output matches that regular expression (the examples print their
# errors and carry on, so the exit code alone says little).
# Variables: PROGRAM, ARGS (space-separated), MPIEXEC (optional launcher, a ;-list), EXPECT.
separate_arguments(arglist UNIX_COMMAND "${ARGS}")
execute_process(COMMAND ${MPIEXEC} ${PROGRAM} ${arglist} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${PROGRAM} failed (${rc}):\n${out}\n${err}")
endif()
if(DEFINED EXPECT AND NOT out MATCHES "${EXPECT}")
  message(FATAL_ERROR "${PROGRAM}: output does not match '${EXPECT}':\n${out}\n${err}")
endif()
