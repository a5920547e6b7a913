/* Sanitizer builds only (FB_SANITIZE): dlclose does nothing, so the libraries loaded at run time
 * (Open MPI's and PMIx's components, hwloc's plugins and libpciaccess) stay mapped until the
 * process exits. LeakSanitizer can then name their frames in a leak report, where it would
 * otherwise print "<unknown module>" for code already unmapped, and memory they keep in their
 * own globals counts as reachable, as it would were they linked in. Nothing of ours is hidden:
 * our code never dlcloses anything whose memory it owns (docs/sanitizers.md). */
int dlclose(void *handle);

int dlclose(void *handle)
{
    (void)handle;
    return 0;
}
