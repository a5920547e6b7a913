# The layers of harness/ as CMake libraries (docs/architecture.md).
#
# fb_subsystem(NAME SOURCES file.c... [DEPS fb_lib...] [LIBS outside-lib...])
#   One folder of harness/ becomes the static library fb_NAME. Its folder is the include path it
#   gives to whoever links it, so a header of a library that is not below it cannot be included.
#   It links DEPS (libraries of the layers below) and LIBS (libraries from outside) and nothing
#   else; more sources may be added with target_sources (a real module or its stub).
#
# A static library does not resolve its own symbols, so a call to a library that is not in DEPS
# would link anyway in the program (which links everything). fb_link_check(fb_NAME) closes that
# door: it links every object of the library (the whole archive) into an empty program with only
# the library's own dependencies, so such a call fails the build with an undefined reference.

# Warnings for every C target of the project (PRIVATE: a library's flags are its own). An
# undeclared function is an error: a call the include path does not allow must not compile.
add_library(fb_warnings INTERFACE)
target_compile_options(fb_warnings INTERFACE
  $<$<COMPILE_LANGUAGE:C>:-Wall -Wextra -Werror=implicit-function-declaration>)

function(fb_link_check target)
  add_executable(${target}_link_check ${PROJECT_SOURCE_DIR}/cmake/link_check.c)
  target_link_libraries(${target}_link_check PRIVATE "$<LINK_LIBRARY:WHOLE_ARCHIVE,${target}>")
  set_target_properties(${target}_link_check PROPERTIES
                        RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/link_checks)
  # The main build enforces the layers; the sanitizer tree (built while the tests run) would only
  # link the same objects again, so there the checks are built on request only.
  if(FB_SANITIZE)
    set_target_properties(${target}_link_check PROPERTIES EXCLUDE_FROM_ALL ON)
  endif()
endfunction()

function(fb_subsystem name)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "" "SOURCES;DEPS;LIBS")
  if(arg_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "fb_subsystem(${name}): unknown arguments ${arg_UNPARSED_ARGUMENTS}")
  endif()
  add_library(fb_${name} STATIC ${arg_SOURCES})
  # What link_libraries() gives every target (the sanitizer build's keep-loaded dlclose object)
  # belongs in programs, not in each archive: a link check links whole archives, and would get
  # the object twice.
  set_property(TARGET fb_${name} PROPERTY LINK_LIBRARIES "")
  target_include_directories(fb_${name} PUBLIC ${CMAKE_CURRENT_SOURCE_DIR})
  target_link_libraries(fb_${name} PUBLIC ${arg_DEPS} ${arg_LIBS} PRIVATE fb_warnings)
  fb_link_check(fb_${name})
endfunction()
