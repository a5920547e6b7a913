/* Which GPU a rank drives among the ranks of its node that see the same GPUs (gpu_pick.h). */
#include "gpu_pick.h"

#include <string.h>

int fb_gpu_pick(const char *sets, int local_size, int me, int visible, int *sharing)
{
    const char *mine;
    int pos = 0, same = 0;

    *sharing = 0;
    if (visible < 1 || me < 0 || me >= local_size)
        return -1;
    mine = sets + (size_t)me * FB_GPU_SET_LEN;
    for (int k = 0; k < local_size; k++)
        if (strncmp(sets + (size_t)k * FB_GPU_SET_LEN, mine, FB_GPU_SET_LEN) == 0) {
            pos += k < me;
            same++;
        }
    *sharing = same;
    return pos % visible;
}
