/* Independent reference for p2p's `ipc-staged` on the host backend: two processes (fork), each
 * pinned to its own CPU, and one shared buffer. The first copies BYTES from its own memory into
 * the shared buffer and raises a flag; the second copies them out into its own memory and lowers
 * it. Nothing else: no MPI, no runner, spinning flags in shared memory. Timed with
 * CLOCK_MONOTONIC from the first copy's start to the second's end, per round.
 * Prints the median round in microseconds; with -v also each copy's median and the same two
 * copies done by one process (the buffer then never leaves that core's cache), which shows
 * where a staged transfer's time goes: each cache line moves between the two cores' caches.
 * usage: ref_staged [-v] BYTES [ROUNDS] [CPU_A CPU_B] */
#define _GNU_SOURCE
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_ROUNDS 1000

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec * 1e-3;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static void pin(int cpu)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    (void)sched_setaffinity(0, sizeof set, &set);
}

struct shared {
    _Atomic long flag; /* 2i: round i may start; 2i+1: the stage holds round i's bytes */
    double in_start[MAX_ROUNDS + 2], in_end[MAX_ROUNDS + 2];
    double out_start[MAX_ROUNDS + 2], out_end[MAX_ROUNDS + 2];
};

static void spin_until(_Atomic long *flag, long value)
{
    while (atomic_load(flag) != value)
        ;
}

int main(int argc, char **argv)
{
    int verbose = argc > 1 && strcmp(argv[1], "-v") == 0;
    char **a = argv + verbose;
    int na = argc - verbose;
    size_t bytes = na > 1 ? strtoull(a[1], NULL, 10) : 0;
    int rounds = na > 2 ? atoi(a[2]) : 50;
    int cpu_a = na > 4 ? atoi(a[3]) : 0, cpu_b = na > 4 ? atoi(a[4]) : 1;
    int total = rounds + 2; /* two rounds of warm-up first */
    double round_us[MAX_ROUNDS], in_us[MAX_ROUNDS], out_us[MAX_ROUNDS];
    double one_in[MAX_ROUNDS], one_out[MAX_ROUNDS];
    struct shared *sh;
    char *stage, *mine, *other;
    pid_t child;
    int status;

    if (bytes == 0 || rounds < 1 || rounds > MAX_ROUNDS) {
        fprintf(stderr, "usage: ref_staged [-v] BYTES [ROUNDS<=%d] [CPU_A CPU_B]\n", MAX_ROUNDS);
        return 2;
    }
    sh = mmap(NULL, sizeof *sh, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    stage = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (sh == MAP_FAILED || stage == MAP_FAILED)
        return 1;
    memset(stage, 0, bytes); /* resident before the first round, as fabricbench's is */
    atomic_store(&sh->flag, 0);
    child = fork();
    if (child < 0)
        return 1;
    pin(child ? cpu_a : cpu_b);
    mine = malloc(bytes);
    if (!mine)
        return 1;
    memset(mine, child ? 1 : 2, bytes);
    for (long i = 0; i < total; i++) {
        if (child) { /* the sender */
            spin_until(&sh->flag, 2 * i);
            sh->in_start[i] = now_us();
            memcpy(stage, mine, bytes);
            sh->in_end[i] = now_us();
            atomic_store(&sh->flag, 2 * i + 1);
        } else { /* the receiver */
            spin_until(&sh->flag, 2 * i + 1);
            sh->out_start[i] = now_us();
            memcpy(mine, stage, bytes);
            sh->out_end[i] = now_us();
            atomic_store(&sh->flag, 2 * i + 2);
        }
    }
    if (!child)
        _exit(mine[bytes - 1] == 1 ? 0 : 3); /* the bytes arrived */
    if (waitpid(child, &status, 0) != child || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        fprintf(stderr, "ref_staged: the receiver failed (status %d)\n", status);
        return 1;
    }
    for (int r = 0; r < rounds; r++) {
        round_us[r] = sh->out_end[r + 2] - sh->in_start[r + 2];
        in_us[r] = sh->in_end[r + 2] - sh->in_start[r + 2];
        out_us[r] = sh->out_end[r + 2] - sh->out_start[r + 2];
    }
    printf("%.2f\n", median(round_us, rounds));
    if (!verbose)
        return 0;
    /* The same two copies by one process: the stage stays in this core's cache. */
    other = malloc(bytes);
    if (!other)
        return 1;
    memset(other, 3, bytes);
    for (int r = 0; r < rounds; r++) {
        double t0 = now_us(), t1, t2;
        memcpy(stage, mine, bytes);
        t1 = now_us();
        memcpy(other, stage, bytes);
        t2 = now_us();
        one_in[r] = t1 - t0;
        one_out[r] = t2 - t1;
    }
    printf("two processes: copy in %.1f us, copy out %.1f us (medians)\n",
           median(in_us, rounds), median(out_us, rounds));
    printf("one process:   copy in %.1f us, copy out %.1f us (medians)\n",
           median(one_in, rounds), median(one_out, rounds));
    return 0;
}
