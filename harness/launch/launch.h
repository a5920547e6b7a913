/* Launch variants of `fabricbench sweep`: what only a launch can change (the binding policy,
 * NCCL_* / UCX_* / OMPI_MCA_* settings), their cartesian product with a short name each, the
 * mpirun or srun argument vector of a launch (built for exec, never a shell string), and the
 * command shell-quoted for printing and copy-paste. Pure: no process is started here (subprocess.h
 * does that), so all of it is tested as plain functions. */
#ifndef FB_LAUNCH_H
#define FB_LAUNCH_H

#include <stdbool.h>
#include <stddef.h>

#include "status.h"
#include "strv.h"

enum { FB_LAUNCH_MAX_VARS = 8, FB_LAUNCH_MAX_VALUES = 32, FB_LAUNCH_MAX_VARIANTS = 1024 };

enum fb_launcher { FB_LAUNCHER_MPIRUN, FB_LAUNCHER_SRUN };
/* socket: each rank bound to its GPU's socket (the GPU advice); core: each rank bound to its own
 * core (the host backend, whose "device" is the CPU: two ranks bound to one whole socket would
 * each run a BLAS thread per core and fight over them); none: unbound. */
enum fb_binding { FB_BIND_SOCKET, FB_BIND_NONE, FB_BIND_CORE };

/* One --vary: a setting and the values it takes, in order. */
struct fb_launch_var {
    char name[64];
    size_t nvalues;
    char *values[FB_LAUNCH_MAX_VALUES]; /* owned */
};

/* Whether `name` may be varied: NCCL_*, UCX_* and OMPI_MCA_* names made of letters, digits
 * and underscores (NCCL_P2P_DISABLE, NCCL_SHM_DISABLE, NCCL_IB_DISABLE, NCCL_ALGO, ... are of
 * the first kind). */
bool fb_launch_name_ok(const char *name);

/* Parses "NAME=V1,V2,..." (a comma inside a value is written "\,"). Values are non-empty,
 * distinct, and without line breaks. FB_ERR_USAGE with the reason in why on bad input. */
fb_status fb_launch_var_parse(const char *text, struct fb_launch_var *v, char *why,
                              size_t whylen);
void fb_launch_var_free(struct fb_launch_var *v);

/* One launch: its binding, one value of each varied setting, and its short name. */
struct fb_launch_variant {
    char name[160]; /* "bind-socket_NCCL_P2P_DISABLE-1"; "default" when nothing varies */
    enum fb_binding binding;
    const char *values[FB_LAUNCH_MAX_VARS]; /* vars[i]'s value; points into vars */
};

/* The cartesian product of the bindings and the vars' values: bindings outermost, then vars
 * in the order given, the last varying fastest. Names are made of the parts that vary
 * ("bind-none" only when there are two bindings), with characters other than letters, digits,
 * '.', '+' and '-' in a value replaced by '-', and made unique ("-2", "-3") when two values
 * read the same. Writes a malloc'ed array (the caller frees it). FB_ERR_USAGE when there are
 * more than FB_LAUNCH_MAX_VARIANTS. */
fb_status fb_launch_variants(const enum fb_binding *bindings, size_t nbindings,
                             const struct fb_launch_var *vars, size_t nvars,
                             struct fb_launch_variant **out, size_t *n, char *why,
                             size_t whylen);

/* How a launch is made. */
struct fb_launch {
    enum fb_launcher launcher;
    int np;           /* ranks */
    int gpus;         /* GPUs on this node (0: none) */
    int sockets;      /* sockets on this node (>= 1) */
    const char *const *extra; /* --mpirun-arg, in order, passed through */
    size_t nextra;
    bool as_root;     /* mpirun: OMPI_ALLOW_RUN_AS_ROOT(_CONFIRM)=1 in its environment */
};

/* The launcher's arguments that bind ranks, for a binding: mpirun "--map-by ppr:K:socket
 * --bind-to socket" with K ranks per socket when the ranks of a node (its GPUs, or np without
 * GPUs) divide evenly over its sockets, so that local rank i, which drives GPU i, lands on
 * GPU i's socket with GPUs numbered socket by socket; else "--bind-to none", and each rank
 * binds itself (fb_launch_self_binds); "--bind-to none". srun likewise: "--distribution=
 * block:block --cpu-bind=socket" (Slurm's own second distribution, cyclic, deals a node's tasks
 * round robin over its sockets: task 1 on socket 1 while it drives GPU 1), or "--cpu-bind=none"
 * where the ranks bind themselves; "--distribution=block:block --cpu-bind=cores";
 * "--cpu-bind=none". */
fb_status fb_launch_binding_args(const struct fb_launch *l, enum fb_binding binding,
                                 struct fb_strv *argv);

/* Whether the ranks bind themselves to their GPUs' sockets (run --self-bind after the
 * command, from fb_launch_command): socket binding where a node's ranks do not divide over its
 * sockets, which mpirun's --map-by socket and srun's cyclic distribution would deal round
 * robin. */
bool fb_launch_self_binds(const struct fb_launch *l, enum fb_binding binding);

/* The whole command of one launch: the launcher, its options, the variant's settings (mpirun:
 * "-x NAME=VALUE"; srun: "--export=ALL" and NAME=VALUE in env), the extra arguments, then
 * `exe` and `tail` (e.g. "run --out DIR ..."), with "--self-bind" after tail's first word when
 * the ranks bind themselves. env receives the NAME=VALUE pairs the launcher
 * process itself needs in its environment (srun's settings; OMPI_ALLOW_RUN_AS_ROOT... for
 * mpirun as root). Both vectors are appended to. */
fb_status fb_launch_command(const struct fb_launch *l, const struct fb_launch_variant *v,
                            const struct fb_launch_var *vars, size_t nvars, const char *exe,
                            const char *const *tail, size_t ntail, struct fb_strv *argv,
                            struct fb_strv *env);

/* A word quoted for a POSIX shell: unchanged when made only of safe characters, else in single
 * quotes ('\'' for a quote inside). Writes at most len bytes; returns the length it needs. */
size_t fb_launch_quote(const char *word, char *buf, size_t len);

/* The command as one line to paste into a shell: env's NAME=VALUE first, then argv, each word
 * quoted. Returns a malloc'ed string (NULL when out of memory). */
char *fb_launch_command_line(const struct fb_strv *env, const struct fb_strv *argv);

#endif
