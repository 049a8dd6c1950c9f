/* Handlers for the signal tests, loaded at run time by signals_peer --load.
 * signals_report prints one line per delivery on stdout:
 *   DELIVERED <signal_id> <version> <terminated 0|1> <note or -> <pid> */
#include <stdio.h>
#include <unistd.h>
#include "outlive.h"

OUTLIVE_HANDLER(signals_report, OUTLIVE_ID(signal_id), OUTLIVE_UINTEGER(version), OUTLIVE_BOOL(terminated),
                OUTLIVE_OPT_ID(note)) {
    const char *text = note ? outlive_object_string(note) : NULL;
    printf("DELIVERED %s %llu %d %s %d\n", outlive_object_string(signal_id), (unsigned long long)version,
           terminated ? 1 : 0, text ? text : "-", (int)getpid());
    fflush(stdout);
}
