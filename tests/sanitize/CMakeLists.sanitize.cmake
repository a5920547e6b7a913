# Sanitizer, fault-injection and valgrind tests (docs/sanitizers.md); included at the end of
# tests/CMakeLists.txt, once every other test is defined.
# In the sanitizer build (-DFB_SANITIZE=ON): every test runs with the sanitizers halting on their
# first report, and LeakSanitizer reading our suppressions (Open MPI's own leaks, each justified)
# with full allocation stacks (fault.sh alone takes the fast unwinder back, for speed).
# In the other builds: valgrind memcheck on a short run, when valgrind is installed.
set(_fb_san_dir ${CMAKE_CURRENT_LIST_DIR})
if(FB_SANITIZE)
  set(FB_SANITIZER_ENV
      "ASAN_OPTIONS=detect_leaks=1:halt_on_error=1:exitcode=86:check_initialization_order=1:strict_init_order=1:fast_unwind_on_malloc=0:malloc_context_size=40"
      "UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1:exitcode=86"
      "LSAN_OPTIONS=suppressions=${_fb_san_dir}/lsan.supp:print_suppressions=0")
  get_property(_fb_tests DIRECTORY PROPERTY TESTS)
  set_property(TEST ${_fb_tests} APPEND PROPERTY ENVIRONMENT ${FB_SANITIZER_ENV})

  add_test(NAME sanitize_host_suite_np2 COMMAND sh ${_fb_san_dir}/suite.sh $<TARGET_FILE:fabricbench>)
  add_test(NAME fault_injection COMMAND sh ${_fb_san_dir}/fault.sh $<TARGET_FILE:fabricbench>)
  set_tests_properties(sanitize_host_suite_np2 PROPERTIES LABELS sanitize SKIP_RETURN_CODE 77
                       ENVIRONMENT "${FB_TEST_ENV};${FB_SANITIZER_ENV}")
  set_tests_properties(fault_injection PROPERTIES LABELS fault SKIP_RETURN_CODE 77
                       ENVIRONMENT "${FB_TEST_ENV};${FB_SANITIZER_ENV}")
endif()
if(NOT FB_SANITIZE)
  # valgrind cannot run a sanitizer build; in the others it checks a short run (skipped, 77,
  # where valgrind is missing).
  add_test(NAME valgrind_leaks COMMAND sh ${_fb_san_dir}/valgrind.sh $<TARGET_FILE:fabricbench>
           ${_fb_san_dir}/valgrind.supp)
  set_tests_properties(valgrind_leaks PROPERTIES LABELS leak SKIP_RETURN_CODE 77
                       ENVIRONMENT "${FB_TEST_ENV}")
endif()
