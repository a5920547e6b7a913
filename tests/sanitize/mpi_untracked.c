/* Sanitizer builds only (FB_SANITIZE): what Open MPI allocates for itself is not leak-tracked.
 * Open MPI 4.1 frees little of what MPI_Init builds (ORTE and PMIx client state, MCA strings, the
 * op framework's tables, a singleton's binding bitmap), nor what its progress threads hold at
 * exit. Through the MPI profiling interface, MPI_Init, MPI_Init_thread and MPI_Finalize here turn
 * LeakSanitizer's tracking off in the calling thread while Open MPI's own runs, and every thread
 * started during those calls (PMIx's and ORTE's progress threads; pthread_create below) runs its
 * whole life untracked. Nothing of ours is hidden: our code never allocates inside those calls,
 * none of Open MPI's threads runs our code, and none of ours is started inside those calls
 * (docs/sanitizers.md). The effect is the one the
 * ompi_mpi_init, ompi_mpi_finalize and event_base_loop suppressions had, and it costs nothing at
 * exit: LeakSanitizer symbolizes the stacks of the blocks it finds leaked (to match them to the
 * suppressions), which in a process with any leaked block means reading libasan's debug
 * information, a quarter of a CPU-second for every rank of every job (docs/testing.md, round
 * four); a rank of ours that leaks nothing now has no block to look at. Programs without MPI
 * link it too: the PMPI_ calls are weak and never made there. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <sanitizer/lsan_interface.h>
#include <stdlib.h>

int PMPI_Init(int *argc, char ***argv) __attribute__((weak));
int PMPI_Init_thread(int *argc, char ***argv, int required, int *provided) __attribute__((weak));
int PMPI_Finalize(void) __attribute__((weak));
int MPI_Init(int *argc, char ***argv);
int MPI_Init_thread(int *argc, char ***argv, int required, int *provided);
int MPI_Finalize(void);
int pthread_create(pthread_t *thread, const pthread_attr_t *attr, void *(*start)(void *),
                   void *arg);

/* this thread is inside MPI_Init, MPI_Init_thread or MPI_Finalize, or is a thread Open MPI
 * started there (whose own threads are Open MPI's too) */
static _Thread_local int in_mpi;

static void enter(void)
{
    __lsan_disable();
    in_mpi++;
}

static int leave(int rc)
{
    in_mpi--;
    __lsan_enable();
    return rc;
}

int MPI_Init(int *argc, char ***argv)
{
    enter();
    return leave(PMPI_Init(argc, argv));
}

int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
    enter();
    return leave(PMPI_Init_thread(argc, argv, required, provided));
}

int MPI_Finalize(void)
{
    enter();
    return leave(PMPI_Finalize());
}

struct start {
    void *(*start)(void *);
    void *arg;
};

static void *untracked(void *p)
{
    struct start s = *(struct start *)p;

    __lsan_disable();
    in_mpi = 1;
    free(p);
    return s.start(s.arg);
}

int pthread_create(pthread_t *thread, const pthread_attr_t *attr, void *(*start)(void *),
                   void *arg)
{
    static int (*next)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);
    struct start *s;
    int rc;

    if (!next)
        next = (int (*)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *))dlsym(
            RTLD_NEXT, "pthread_create");
    if (!next)
        abort();
    if (!in_mpi || !(s = malloc(sizeof *s)))
        return next(thread, attr, start, arg);
    s->start = start;
    s->arg = arg;
    if ((rc = next(thread, attr, untracked, s)) != 0)
        free(s);
    return rc;
}
