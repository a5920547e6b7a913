# Unit tests of the topology, fingerprint and doctor rules; included from tests/CMakeLists.txt.
# test_topology reads the recorded hwloc XML topologies in ${FB_FIXTURES_DIR}/topology.
foreach(_fb_t test_topology test_doctor)
  add_executable(${_fb_t} ${CMAKE_CURRENT_LIST_DIR}/${_fb_t}.c)
  target_compile_options(${_fb_t} PRIVATE ${FB_WARNINGS})
  target_include_directories(${_fb_t} PRIVATE ${CMAKE_CURRENT_LIST_DIR})
  target_link_libraries(${_fb_t} PRIVATE fb_harness)
endforeach()

add_test(NAME test_topology COMMAND test_topology ${FB_FIXTURES_DIR}/topology)
add_test(NAME test_doctor COMMAND test_doctor)
set_tests_properties(test_topology test_doctor PROPERTIES LABELS unit SKIP_RETURN_CODE 77)
