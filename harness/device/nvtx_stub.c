/* Stands in for NVTX in builds without CUDA: ranges go nowhere. */
#include "nvtx.h"

void fb_nvtx_push(const char *name) { (void)name; }
void fb_nvtx_pop(void) {}
bool fb_nvtx_built(void) { return false; }
