/* Handlers for the signal tests, loaded at run time by signals_peer --load.
 * signals_report prints one line per delivery on stdout:
 *   DELIVERED <signal_id> <version> <terminated 0|1> <note or -> <pid>
 * With SIGNALS_PEER_HANG set in the environment it prints "HANGING <signal_id>"
 * instead and never returns: a process that dies inside a handler. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include "outlive.h"

OUTLIVE_HANDLER(signals_report, OUTLIVE_ID(signal_id), OUTLIVE_UINTEGER(version), OUTLIVE_BOOL(terminated),
                OUTLIVE_OPT_ID(note)) {
    if (getenv("SIGNALS_PEER_HANG")) {
        printf("HANGING %s\n", outlive_object_string(signal_id));
        fflush(stdout);
        for (;;) pause();
    }
    const char *text = note ? outlive_object_string(note) : NULL;
    printf("DELIVERED %s %llu %d %s %d\n", outlive_object_string(signal_id), (unsigned long long)version,
           terminated ? 1 : 0, text ? text : "-", (int)getpid());
    fflush(stdout);
}
