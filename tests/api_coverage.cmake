# api_coverage.cmake -- every function that the public headers (lib/mfree.h and its part lib/mfree_newton.h)
# declare is called by some test source under tests/. Fails naming the functions that none calls.
#   cmake "-DHEADER=lib/mfree.h;lib/mfree_newton.h" -DTESTS=tests -P tests/api_coverage.cmake
# A declaration is a name mf_... followed by "(" after a type, outside comments (function-pointer
# typedefs such as (*mf_adapt_fn)(...) are types, not functions). A call is the name followed by "(" in
# a .c, .cpp or .h file under TESTS, outside comments and string literals: a function named only in a
# comment or a message does not count. What the call asserts is for the reader (docs/testing.md).

if(NOT HEADER OR NOT TESTS)
  message(FATAL_ERROR "api_coverage: give -DHEADER=<lib/mfree.h> and -DTESTS=<tests folder>")
endif()

# text without /* */ and // comments; with STRINGS also without "..." and '...' literals
function(strip_source text out strings)
  set(rest "${text}")
  set(kept "")
  while(1)
    string(FIND "${rest}" "/*" open)
    if(open EQUAL -1)
      string(APPEND kept "${rest}")
      break()
    endif()
    string(SUBSTRING "${rest}" 0 ${open} head)
    string(APPEND kept "${head}")
    math(EXPR after "${open} + 2")
    string(SUBSTRING "${rest}" ${after} -1 rest)
    string(FIND "${rest}" "*/" close)
    if(close EQUAL -1) # an unterminated comment: the rest is comment
      set(rest "")
      break()
    endif()
    math(EXPR after "${close} + 2")
    string(SUBSTRING "${rest}" ${after} -1 rest)
  endwhile()
  if(strings) # before the // comments: "http://..." in a string is no comment
    string(REGEX REPLACE "\"([^\"\\\\\n]|\\\\.)*\"" "\"\"" kept "${kept}")
    string(REGEX REPLACE "'([^'\\\\\n]|\\\\.)*'" "''" kept "${kept}")
  endif()
  string(REGEX REPLACE "//[^\n]*" "" kept "${kept}")
  set(${out} "${kept}" PARENT_SCOPE)
endfunction()

set(header "")
foreach(h IN LISTS HEADER) # the headers' text, one after the other
  file(READ "${h}" text)
  string(APPEND header "${text}\n")
endforeach()
strip_source("${header}" header 0)
string(REGEX MATCHALL "[A-Za-z0-9_][ \t\n*]+mf_[a-z0-9_]+[ \t\n]*\\(" decls "${header}")
set(functions "")
foreach(d IN LISTS decls)
  string(REGEX MATCH "mf_[a-z0-9_]+" name "${d}")
  list(APPEND functions ${name})
endforeach()
list(REMOVE_DUPLICATES functions)
list(LENGTH functions nfunctions)
# the header declares about 90: far fewer means the parsing above broke, not that the API shrank
if(nfunctions LESS 50)
  message(FATAL_ERROR "api_coverage: found only ${nfunctions} function declarations in ${HEADER}; the parser is broken")
endif()

file(GLOB_RECURSE sources "${TESTS}/*.c" "${TESTS}/*.cpp" "${TESTS}/*.h")
set(calls "")
foreach(f IN LISTS sources)
  file(READ "${f}" text)
  strip_source("${text}" text 1)
  string(REGEX MATCHALL "mf_[a-z0-9_]+[ \t\n]*\\(" found "${text}")
  foreach(c IN LISTS found)
    string(REGEX MATCH "mf_[a-z0-9_]+" name "${c}")
    list(APPEND calls ${name})
  endforeach()
endforeach()
list(REMOVE_DUPLICATES calls)

set(missing "")
foreach(fn IN LISTS functions)
  list(FIND calls ${fn} at)
  if(at EQUAL -1)
    list(APPEND missing ${fn})
  endif()
endforeach()
if(missing)
  list(LENGTH missing n)
  string(REPLACE ";" ", " missing "${missing}")
  message(FATAL_ERROR "api_coverage: ${n} of the ${nfunctions} functions of ${HEADER} are called by no test under "
                      "${TESTS}: ${missing}")
endif()
