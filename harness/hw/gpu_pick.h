/* Which GPU a rank drives: "local rank picks the GPU", among the ranks of its node that see the
 * same GPUs. A launcher may already have given each task GPUs of its own (Slurm's
 * --gpus-per-task=1, or --gpu-bind=closest: each task sees its socket's GPUs, the tasks of a
 * node dealt over the sockets): a rank's local rank then indexes nothing it can see, and two
 * ranks that see the same GPUs would pick the same one. Pure: no CUDA, no MPI. */
#ifndef FB_GPU_PICK_H
#define FB_GPU_PICK_H

#include <stdbool.h>
#include <stddef.h>

/* The size of one rank's set: its visible GPUs' PCI bus ids in CUDA's order, joined by ','
 * (16 GPUs of 12 characters and their commas fit). */
enum { FB_GPU_SET_LEN = 224 };

/* sets[k * FB_GPU_SET_LEN] is local rank k's set (local_size of them, each a string; "" for a
 * rank that sees none). Returns the index among its own visible GPUs (`visible` of them) that
 * local rank `me` drives: its position among the local ranks of the same set, modulo
 * `visible`; *sharing gets how many local ranks share that set (more than `visible` of them
 * put two ranks on one GPU). With every GPU visible to every rank (mpirun) that is the local
 * rank itself; with a GPU of its own (--gpus-per-task=1), 0. -1 for visible < 1 or bad ranks. */
int fb_gpu_pick(const char *sets, int local_size, int me, int visible, int *sharing);

#endif
