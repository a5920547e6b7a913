# Unit tests of the topology, fingerprint and doctor rules; included from tests/CMakeLists.txt.
# test_topology reads the recorded hwloc XML topologies in ${FB_TOPOLOGY_DATA}.
foreach(_fb_t test_topology test_doctor test_pair_link)
  add_executable(${_fb_t} ${CMAKE_CURRENT_LIST_DIR}/${_fb_t}.c)
  target_include_directories(${_fb_t} PRIVATE ${CMAKE_CURRENT_LIST_DIR})
  target_link_libraries(${_fb_t} PRIVATE fb_warnings)
endforeach()
# each against the smallest library it needs
target_link_libraries(test_topology PRIVATE fb_hw)
target_link_libraries(test_pair_link PRIVATE fb_hw)
target_link_libraries(test_doctor PRIVATE fb_doctor)

add_test(NAME test_topology COMMAND test_topology ${FB_TOPOLOGY_DATA})
add_test(NAME test_doctor COMMAND test_doctor)
add_test(NAME test_pair_link COMMAND test_pair_link ${FB_TOPOLOGY_DATA})
set_tests_properties(test_topology test_doctor test_pair_link PROPERTIES LABELS "unit;quick" SKIP_RETURN_CODE 77)

# NVML's link counting, run against a fake libnvidia-ml.so.1 built from test_pair_link.c itself
# and put first on the library path, since no machine here has NVLink to check it on.
add_library(fb_fake_nvml SHARED ${CMAKE_CURRENT_LIST_DIR}/test_pair_link.c)
target_compile_definitions(fb_fake_nvml PRIVATE FB_FAKE_NVML)
target_link_libraries(fb_fake_nvml PRIVATE fb_warnings)
set_target_properties(fb_fake_nvml PROPERTIES OUTPUT_NAME nvidia-ml PREFIX lib SUFFIX .so.1
                      LIBRARY_OUTPUT_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}/fake_nvml)
add_dependencies(test_pair_link fb_fake_nvml)
add_test(NAME test_pair_link_fake_nvml
         COMMAND test_pair_link ${FB_TOPOLOGY_DATA} fake-nvml)
set_tests_properties(test_pair_link_fake_nvml PROPERTIES LABELS "unit;quick"
  ENVIRONMENT_MODIFICATION "LD_LIBRARY_PATH=path_list_prepend:$<TARGET_FILE_DIR:fb_fake_nvml>")
