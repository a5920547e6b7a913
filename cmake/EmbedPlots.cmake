# Turns the gnuplot templates plots/*.gp into a C file (run at build time with cmake -P):
#   cmake -DOUT=<file.c> -DSOURCES="<a.gp>;<b.gp>" -P EmbedPlots.cmake
# Each template becomes a NUL-terminated byte array, named by its file name without ".gp", so
# the binary draws its plots without the source tree.
set(body "/* Generated from the .gp files of plots/ by cmake/EmbedPlots.cmake: do not edit. */\n")
string(APPEND body "#include \"plot_templates.h\"\n\n")
set(table "")
set(i 0)
foreach(src IN LISTS SOURCES)
  get_filename_component(stem "${src}" NAME_WE)
  file(READ "${src}" hex HEX)
  string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
  # a line break every 24 bytes keeps the file readable by compilers and people
  string(REGEX REPLACE "((0x[0-9a-f][0-9a-f],){24})" "\\1\n    " bytes "${bytes}")
  string(APPEND body "static const char t${i}[] = {\n    ${bytes}0x00};\n")
  string(APPEND table "    {\"${stem}\", t${i}},\n")
  math(EXPR i "${i} + 1")
endforeach()
string(APPEND body "\nconst struct fb_plot_template fb_plot_templates[] = {\n${table}};\n")
string(APPEND body "const size_t fb_plot_ntemplates = ${i};\n")
# rewritten only when it changes, so an unchanged template does not rebuild the binary
if(EXISTS "${OUT}")
  file(READ "${OUT}" old)
endif()
if(NOT "${old}" STREQUAL "${body}")
  file(WRITE "${OUT}" "${body}")
endif()
