/* Command-line parsing for `fabricbench run`, kept apart from MPI so it can be tested alone
 * and so bad input is refused before anything starts or is written. */
#ifndef FB_CLI_H
#define FB_CLI_H

#include <stddef.h>

#include "options.h"
#include "status.h"

/* Parses `run` options and benchmark names (argv[0] is "run"). On bad input returns
 * FB_ERR_USAGE with one line in err naming the option and what is wrong. `--help` returns
 * FB_OK with *help set. */
fb_status fb_cli_parse_run(int argc, char **argv, struct fb_options *o, int *help, char *err,
                           size_t errlen);

/* After getopt_long (opterr = 0, optstring starting with ':') returned ':' or '?': writes
 * "option '--x' needs a value" or "unknown option '--x'" into err. */
void fb_cli_option_error(int c, char **argv, char *err, size_t errlen);

/* The names --backend and --coll accept, NULL-terminated (shared by run and doctor). */
extern const char *const fb_cli_backends[];
extern const char *const fb_cli_colls[];

/* FB_OK when text is one of choices; else FB_ERR_USAGE with "'x' is not one of the choices
 * (use a, b, c)" in why. */
fb_status fb_cli_choice(const char *text, const char *const *choices, char *why, size_t whylen);

/* The help text of `run`. */
void fb_cli_run_usage(void);

/* --timeout SECONDS: 0 (none) to a week, fractions allowed. */
fb_status fb_cli_timeout_parse(const char *text, double *seconds, char *why, size_t whylen);

/* The value of --timeout in argv (before MPI starts, so the watchdog can bound MPI_Init), or
 * dflt when absent or malformed (the command's own parser then refuses it). */
double fb_cli_timeout_hint(int argc, char **argv, double dflt);

/* The rank this process will have, read from the launcher's environment only to decide who
 * prints an error before MPI starts (never to pick a GPU). 0 when not launched. */
int fb_cli_rank_hint(void);

/* A command's answer before MPI starts, printed by the first rank only: bad options (`parsed`
 * false: "<cmd>: <err>" as one error line, 2), or --help (its usage, 0); -1 when neither, and
 * its work goes on. */
int fb_cli_answer_early(const char *cmd, bool parsed, bool help, const char *err,
                        void (*usage)(void));

#endif
