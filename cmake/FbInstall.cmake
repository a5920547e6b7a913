# Installing fabricbench like HPC software (`cmake --install build --prefix P`), and the Debian
# package (`cpack -G DEB` in the build folder). The Filesystem Hierarchy places:
#   P/bin/fabricbench                    the binary
#   P/share/fabricbench/profiles/*.ini   hardware profiles (`accept --profile c4140-m` finds them
#                                        relative to the binary, so a relocated tree works)
#   P/share/fabricbench/profiles/mixes/  replay's mixes (`run replay --mix PATH`)
#   P/share/doc/fabricbench/             README.md, docs/, results/SCHEMA.md (as in the source tree)
#   P/share/man/man1/fabricbench.1       the man page (help2man over --help and --version)
#   P/libexec/fabricbench/               the GPU check (gpu-check.sh), its helpers and GPU tests
include(GNUInstallDirs)

install(TARGETS fabricbench RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})

file(GLOB fb_profiles CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/profiles/*.ini)
install(FILES ${fb_profiles} ${PROJECT_SOURCE_DIR}/profiles/README.md
        DESTINATION ${CMAKE_INSTALL_DATADIR}/fabricbench/profiles)
# The build tree mirrors that place (build/share/... beside build/bench/fabricbench), so the
# binary in the build tree finds the profiles by name the same way.
foreach(f ${fb_profiles})
  get_filename_component(n ${f} NAME)
  configure_file(${f} ${CMAKE_BINARY_DIR}/share/fabricbench/profiles/${n} COPYONLY)
endforeach()

# replay's shipped mixes (issue 18): P/share/fabricbench/profiles/mixes/*.mix
file(GLOB fb_mixes CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/profiles/mixes/*.mix)
install(FILES ${fb_mixes} DESTINATION ${CMAKE_INSTALL_DATADIR}/fabricbench/profiles/mixes)

# the source tree's layout, so that README's and docs' links to results/SCHEMA.md (and to each
# other) hold in the installed tree too
install(FILES ${PROJECT_SOURCE_DIR}/README.md DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(FILES ${PROJECT_SOURCE_DIR}/results/SCHEMA.md DESTINATION ${CMAKE_INSTALL_DOCDIR}/results)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR}/docs
        FILES_MATCHING PATTERN "*.md" PATTERN "*.sh" PATTERN "*.gp")

find_program(FB_HELP2MAN help2man)
if(FB_HELP2MAN)
  set(fb_man ${CMAKE_BINARY_DIR}/man/fabricbench.1)
  add_custom_command(OUTPUT ${fb_man}
    COMMAND ${CMAKE_COMMAND} -E make_directory ${CMAKE_BINARY_DIR}/man
    COMMAND ${FB_HELP2MAN} --no-info --no-discard-stderr --section=1
            "--name=micro-benchmarks for deep-learning training fabrics"
            --output=${fb_man} $<TARGET_FILE:fabricbench>
    DEPENDS fabricbench
    COMMENT "Writing the man page from fabricbench --help" VERBATIM)
  add_custom_target(fb_man ALL DEPENDS ${fb_man})
  install(FILES ${fb_man} DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
else()
  message(STATUS "help2man not found: no man page (apt-get install help2man)")
endif()

set(fb_libexec ${CMAKE_INSTALL_LIBEXECDIR}/fabricbench)
# The GPU check runs from there (it finds PREFIX/bin/fabricbench and its tests beside it):
# PREFIX/libexec/fabricbench/gpu-check.sh, with OUT=DIR.
foreach(t test_conv_gemm test_pool_kernels)
  if(TARGET ${t})
    install(TARGETS ${t} RUNTIME DESTINATION ${fb_libexec}/gpu)
  endif()
endforeach()
if(TARGET test_conv_engine_cuda)
  install(TARGETS test_conv_engine_cuda RUNTIME DESTINATION ${fb_libexec})
endif()
install(PROGRAMS ${PROJECT_SOURCE_DIR}/harness/scripts/gpu-check.sh
                 ${PROJECT_SOURCE_DIR}/harness/scripts/gpu-summary.sh
                 ${PROJECT_SOURCE_DIR}/harness/scripts/torch_copy.py
                 ${PROJECT_SOURCE_DIR}/harness/scripts/torch_densenet_step.py
        DESTINATION ${fb_libexec})

# The Debian package: its dependencies are Debian 12's runtime packages of what the binary links
# (tests/packaging.sh checks every NEEDED library against them); NCCL and the CUDA driver come from
# NVIDIA, not Debian, and are loaded at run time.
set(CPACK_PACKAGE_NAME fabricbench)
set(CPACK_PACKAGE_VENDOR "fabricbench")
set(CPACK_PACKAGE_CONTACT "fabricbench developers")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "MPI micro-benchmarks for the fabrics that distributed deep-learning training runs on")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION science)
set(CPACK_DEBIAN_PACKAGE_ARCHITECTURE amd64)
set(CPACK_STRIP_FILES ON)
set(fb_deb_depends "libopenmpi3, openmpi-bin, libhwloc15, libcjson1, libinih1, libpng16-16, \
libjpeg62-turbo, libopenblas0 | libopenblas0-pthread, libc6, libstdc++6, libgcc-s1")
if(FB_HAVE_VERBS)
  string(APPEND fb_deb_depends ", libibverbs1")
endif()
set(CPACK_DEBIAN_PACKAGE_DEPENDS "${fb_deb_depends}")
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "gnuplot-nox | gnuplot")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
include(CPack)
