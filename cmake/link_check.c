/* The empty program of the layering's link checks (cmake/FbSubsystem.cmake): linked with every
 * object of one library and that library's dependencies only, it fails to link when the library
 * calls into a layer above it. It is never run. */
int main(void)
{
    return 0;
}
