# Sanitizer, fault-injection and valgrind tests (docs/sanitizers.md); included at the end of
# tests/CMakeLists.txt, once every other test is defined.
# In the sanitizer build (-DFB_SANITIZE=ON): every test runs with the sanitizers halting on their
# first report, and LeakSanitizer tracking all but what Open MPI allocates for itself in MPI_Init,
# MPI_Finalize and its threads (mpi_untracked.c, linked into every program of this build), so
# that a block it finds leaked is ours. The fast unwinder (far less CPU than the full one at
# every allocation) is enough: no suppression needs Open MPI's frames.
# In the other builds: valgrind memcheck on a short run, when valgrind is installed.
set(_fb_san_dir ${CMAKE_CURRENT_LIST_DIR})
# The sanitizer suite in the main tree's schedule (harness/scripts/test.sh, docs/testing.md): this
# tree writes sanitizer-tests.cmake, which the main tree's CTest includes. For each test of the
# suite (labels unit, sanitize or fault, less the three below) it adds asan.NAME, run by
# in_tree.sh through this tree's CTest (this tree's command, environment and timeout), with the
# test's own scheduling properties, after the fixture sanitizer_build has built this tree.
# Left out here: schema_documents_columns is a longer run of every benchmark than
# sanitize_host_suite_np2 (calibrated trials) that checks documentation, not memory; compare_host
# asks two timed runs of one configuration to agree within their noise, which ASan's allocator
# widens (docs/sanitizers.md; test_compare and the results fuzzer cover compare's code under the
# sanitizers); packaging checks the .deb's Depends against the libraries the binary links, which
# under the sanitizers include libasan. The main tree runs all three.
function(fb_sanitizer_suite_for_main_tree)
  set(out "${CMAKE_BINARY_DIR}/sanitizer-tests.cmake")
  set(text "# Written by ${CMAKE_CURRENT_FUNCTION_LIST_FILE} when ${CMAKE_BINARY_DIR} was configured.\n")
  get_property(tests DIRECTORY PROPERTY TESTS)
  foreach(t IN LISTS tests)
    get_test_property(${t} LABELS labels)
    if(NOT labels MATCHES "(^|;)(unit|sanitize|fault)(;|$)" OR
       t MATCHES "^(schema_documents_columns|compare_host|packaging)$")
      continue()
    endif()
    string(APPEND text "add_test(asan.${t} sh \"${_fb_san_dir}/in_tree.sh\" \"${CMAKE_CTEST_COMMAND}\" \"${CMAKE_BINARY_DIR}\" \"${t}\")\n")
    set(props "LABELS \"asan\" SKIP_RETURN_CODE 77 FIXTURES_REQUIRED sanitizer_tree")
    foreach(p IN ITEMS PROCESSORS RUN_SERIAL RESOURCE_LOCK COST TIMEOUT)
      get_test_property(${t} ${p} v)
      if(NOT v STREQUAL "NOTFOUND")
        string(APPEND props " ${p} \"${v}\"")
      endif()
    endforeach()
    string(APPEND text "set_tests_properties(asan.${t} PROPERTIES ${props})\n")
  endforeach()
  file(WRITE "${out}" "${text}")
endfunction()

if(FB_SANITIZE)
  set(FB_SANITIZER_ENV
      "ASAN_OPTIONS=detect_leaks=1:halt_on_error=1:exitcode=86:check_initialization_order=1:strict_init_order=1:fast_unwind_on_malloc=1:malloc_context_size=40"
      "UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1:exitcode=86"
      "LSAN_OPTIONS=suppressions=${_fb_san_dir}/lsan.supp:print_suppressions=0")
  get_property(_fb_tests DIRECTORY PROPERTY TESTS)
  set_property(TEST ${_fb_tests} APPEND PROPERTY ENVIRONMENT ${FB_SANITIZER_ENV})

  add_test(NAME sanitize_host_suite_np2 COMMAND sh ${_fb_san_dir}/suite.sh $<TARGET_FILE:fabricbench>)
  set_tests_properties(sanitize_host_suite_np2 PROPERTIES LABELS sanitize SKIP_RETURN_CODE 77
                       ENVIRONMENT "${FB_TEST_ENV};${FB_SANITIZER_ENV}" PROCESSORS 10 COST 60)
  # LeakSanitizer still reports our leaks around MPI (Open MPI's own are untracked there)
  add_executable(leak_check_alive ${_fb_san_dir}/leak_check_alive.c)
  target_link_libraries(leak_check_alive PRIVATE fb_warnings MPI::MPI_C)
  add_test(NAME leak_check_alive COMMAND sh ${_fb_san_dir}/leak_check.sh $<TARGET_FILE:leak_check_alive>)
  set_tests_properties(leak_check_alive PROPERTIES LABELS sanitize
                       ENVIRONMENT "${FB_TEST_ENV};${FB_SANITIZER_ENV}" PROCESSORS 2)
  # fault injection in five shares that run side by side: together they keep the CPUs busy
  # (their runs' ranks end on their own, rank_status.sh, with no second of mpirun's clean-up)
  foreach(part IN ITEMS p2p_alloc p2p quick step coll)
    add_test(NAME fault_injection_${part} COMMAND sh ${_fb_san_dir}/fault.sh $<TARGET_FILE:fabricbench> ci ${part})
    set_tests_properties(fault_injection_${part} PROPERTIES LABELS fault SKIP_RETURN_CODE 77
                         ENVIRONMENT "${FB_TEST_ENV};${FB_SANITIZER_ENV}" COST 150 PROCESSORS 3)
  endforeach()
  fb_sanitizer_suite_for_main_tree()
endif()
# FB_SANITIZER_TREE (harness/scripts/test.sh sets it): the sanitizer build's folder, configured
# before CTest starts. sanitizer_build builds it as a test, so the build shares the schedule with
# the tests it does not hold up; the suite it writes (sanitizer-tests.cmake) runs as asan.NAME.
set(FB_SANITIZER_TREE "" CACHE PATH "A sanitizer build folder whose suite this tree's CTest runs (test.sh)")
if(NOT FB_SANITIZE AND FB_SANITIZER_TREE)
  add_test(NAME sanitizer_build COMMAND env FB_BUILD_DIR=${FB_SANITIZER_TREE}
           sh ${PROJECT_SOURCE_DIR}/harness/scripts/build.sh -DFB_WITH_CUDA=OFF -DFB_SANITIZE=ON)
  # the longest chain (build, then fault injection): started first
  set_tests_properties(sanitizer_build PROPERTIES LABELS "asan" FIXTURES_SETUP sanitizer_tree
                       PROCESSORS 16 COST 1000 TIMEOUT 900)
  file(WRITE "${CMAKE_CURRENT_BINARY_DIR}/sanitizer-include.cmake"
       "if(EXISTS \"${FB_SANITIZER_TREE}/sanitizer-tests.cmake\")\n"
       "  include(\"${FB_SANITIZER_TREE}/sanitizer-tests.cmake\")\n"
       "else()\n"
       "  message(WARNING \"no ${FB_SANITIZER_TREE}/sanitizer-tests.cmake: configure the sanitizer tree first (test.sh does)\")\n"
       "endif()\n")
  set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES
               "${CMAKE_CURRENT_BINARY_DIR}/sanitizer-include.cmake")
endif()
if(NOT FB_SANITIZE)
  # valgrind cannot run a sanitizer build; in the others it checks a short run (skipped, 77,
  # where valgrind is missing).
  add_test(NAME valgrind_leaks COMMAND sh ${_fb_san_dir}/valgrind.sh $<TARGET_FILE:fabricbench>
           ${_fb_san_dir}/valgrind.supp)
  set_tests_properties(valgrind_leaks PROPERTIES LABELS leak SKIP_RETURN_CODE 77
                       ENVIRONMENT "${FB_TEST_ENV}")
endif()
