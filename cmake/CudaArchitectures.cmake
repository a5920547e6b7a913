# Picks default CUDA architectures from the toolkit's version, before CUDA is enabled.
# V100 (sm_70) is our reference hardware, but CUDA 13 no longer builds Volta; A100 (sm_80) and
# H100/H200 (sm_90) are always in, and sm_90 also ships as PTX so newer GPUs JIT-compile it.

# nvcc's release ("13.0") into out_var, asked of the compiler itself: the CUDA language is not
# enabled yet, so CMAKE_CUDA_COMPILER_VERSION is not known.
function(fb_nvcc_version out_var nvcc)
  execute_process(COMMAND "${nvcc}" --version OUTPUT_VARIABLE _out ERROR_QUIET
                  RESULT_VARIABLE _rc)
  if(NOT _rc EQUAL 0 OR NOT _out MATCHES "release ([0-9]+\\.[0-9]+)")
    message(FATAL_ERROR "cannot read the CUDA release from '${nvcc} --version': ${_out}")
  endif()
  set(${out_var} "${CMAKE_MATCH_1}" PARENT_SCOPE)
endfunction()

function(fb_default_cuda_architectures out_var nvcc_version)
  if(nvcc_version VERSION_LESS 11.0)
    message(FATAL_ERROR "fabricbench needs CUDA 11 or newer (found ${nvcc_version})")
  elseif(nvcc_version VERSION_LESS 11.8)
    set(archs 70-real 80-real 80-virtual)  # no sm_90 before CUDA 11.8
  elseif(nvcc_version VERSION_LESS 13.0)
    set(archs 70-real 80-real 90-real 90-virtual)
  else()
    set(archs 80-real 90-real 90-virtual)
  endif()
  set(${out_var} "${archs}" PARENT_SCOPE)
endfunction()
