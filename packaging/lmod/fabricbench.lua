-- An Lmod modulefile for fabricbench installed with `cmake --install build --prefix PREFIX`
-- (or the Spack recipe, whose `spack module lmod refresh` writes one like it). Copy it to
-- MODULEPATH/fabricbench/0.1.0.lua and set `prefix` to the install prefix.
help([[fabricbench: MPI micro-benchmarks for deep-learning training fabrics.
Run one MPI rank per GPU, each bound to the socket of its GPU (see `man fabricbench`).]])
whatis("Name: fabricbench")
whatis("Version: 0.1.0")
whatis("Category: benchmark, HPC, GPU, networking")

local prefix = "/opt/fabricbench/0.1.0"
prepend_path("PATH", pathJoin(prefix, "bin"))
prepend_path("MANPATH", pathJoin(prefix, "share/man"))
-- `accept --profile NAME` finds the installed profiles beside the binary already; a site adds
-- its own profiles' folder here.
-- prepend_path("FB_PROFILE_PATH", "/site/fabricbench/profiles")
depends_on("openmpi")
