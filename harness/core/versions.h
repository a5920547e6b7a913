/* Version integers of the libraries fabricbench reports (CUDA, NCCL) as people write them. */
#ifndef FB_VERSIONS_H
#define FB_VERSIONS_H

#include <stddef.h>

/* "13.0" from a CUDA version integer (13000), "none" for 0. */
void fb_versions_cuda_str(int version, char *buf, size_t len);

/* "2.28.9" from NCCL_VERSION_CODE (22809; before 2.9 the code was 2408 for 2.4.8), "not built"
 * for 0. */
void fb_versions_nccl_str(int code, char *buf, size_t len);

#endif
