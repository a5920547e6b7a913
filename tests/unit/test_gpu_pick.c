/* Which GPU a rank drives (hw/gpu_pick.h): mpirun's every-GPU-visible, Slurm's
 * --gpus-per-task=1 and --gpu-bind=closest, and two ranks sharing one GPU. */
#include <stdio.h>
#include <string.h>

#include "gpu_pick.h"
#include "test.h"

static char sets[8][FB_GPU_SET_LEN];

static void set(int k, const char *s)
{
    snprintf(sets[k], sizeof sets[k], "%s", s);
}

int main(void)
{
    const char *all = "0000:07:00.0,0000:0b:00.0,0000:48:00.0,0000:4c:00.0";
    int share;

    /* mpirun: every rank sees the 4 GPUs; local rank i drives GPU i */
    for (int k = 0; k < 4; k++)
        set(k, all);
    for (int k = 0; k < 4; k++) {
        CHECK(fb_gpu_pick(&sets[0][0], 4, k, 4, &share) == k);
        CHECK(share == 4);
    }
    /* --gpus-per-task=1: each task sees its own GPU, index 0, none shared */
    set(0, "0000:07:00.0");
    set(1, "0000:0b:00.0");
    set(2, "0000:48:00.0");
    set(3, "0000:4c:00.0");
    for (int k = 0; k < 4; k++) {
        CHECK(fb_gpu_pick(&sets[0][0], 4, k, 1, &share) == 0);
        CHECK(share == 1);
    }
    /* --gpu-bind=closest with Slurm's cyclic distribution: tasks 0 and 2 on socket 0 see its
     * two GPUs, 1 and 3 socket 1's: each pair takes its two in turn (the local rank alone
     * would put 0 and 2 on one GPU: 0 % 2 == 2 % 2) */
    set(0, "0000:07:00.0,0000:0b:00.0");
    set(1, "0000:48:00.0,0000:4c:00.0");
    set(2, "0000:07:00.0,0000:0b:00.0");
    set(3, "0000:48:00.0,0000:4c:00.0");
    CHECK(fb_gpu_pick(&sets[0][0], 4, 0, 2, &share) == 0 && share == 2);
    CHECK(fb_gpu_pick(&sets[0][0], 4, 1, 2, &share) == 0 && share == 2);
    CHECK(fb_gpu_pick(&sets[0][0], 4, 2, 2, &share) == 1 && share == 2);
    CHECK(fb_gpu_pick(&sets[0][0], 4, 3, 2, &share) == 1 && share == 2);
    /* three ranks on a socket of two GPUs: the third shares (sharing > visible) */
    set(4, "0000:07:00.0,0000:0b:00.0");
    CHECK(fb_gpu_pick(&sets[0][0], 5, 4, 2, &share) == 0 && share == 3);
    /* bad input */
    CHECK(fb_gpu_pick(&sets[0][0], 4, 4, 2, &share) == -1);
    CHECK(fb_gpu_pick(&sets[0][0], 4, 0, 0, &share) == -1);
    TEST_DONE();
}
