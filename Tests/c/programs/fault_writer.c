/* A second process for the fault tests: opens the store DIR as "writer" and
 * obeys lines on stdin, answering each on stdout (unbuffered):
 *   set KEY VALUE   outlive_kv_set            → "ok" or "error STATUS"
 *   quit            closes the store and exits
 * Usage: fault_writer DIR */
#include <stdio.h>
#include <string.h>
#include "outlive.h"

int main(int argc, char **argv) {
    if (argc != 2) return 2;
    setvbuf(stdout, NULL, _IONBF, 0);
    outlive_store *store = NULL;
    if (outlive_store_open(argv[1], "writer", NULL, NULL, &store) != OUTLIVE_OK) {
        fprintf(stderr, "fault_writer: open: %s\n", outlive_last_error());
        return 1;
    }
    printf("ready\n");
    char line[512];
    while (fgets(line, sizeof line, stdin)) {
        char key[128], value[256];
        if (sscanf(line, "set %127s %255s", key, value) == 2) {
            outlive_status status = outlive_kv_set(store, key, value, strlen(value));
            if (status == OUTLIVE_OK) printf("ok\n");
            else printf("error %s\n", outlive_status_name(status));
        } else {
            break;
        }
    }
    outlive_store_close(store);
    return 0;
}
