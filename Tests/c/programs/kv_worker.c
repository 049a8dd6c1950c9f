/* A second process for the key-value tests.
 *   kv_worker DIR increment KEY N   N atomic increments of KEY
 *   kv_worker DIR set KEY VALUE     one set
 *   kv_worker DIR write N           sets k00000..k(N-1) = v<i>, printing each
 *                                   acknowledged index on stdout as it returns */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "outlive.h"

static outlive_status increment(outlive_kv_value *value, void *context) {
    (void)context;
    size_t size = 0;
    const char *bytes = outlive_kv_value_bytes(value, &size);
    char text[32] = {0};
    if (bytes) memcpy(text, bytes, size < 31 ? size : 31);
    int length = snprintf(text, sizeof text, "%ld", atol(text) + 1);
    return outlive_kv_value_set(value, text, (size_t)length);
}

int main(int argc, char **argv) {
    if (argc < 3) return 2;
    outlive_store *store = NULL;
    if (outlive_store_open(argv[1], "worker", NULL, NULL, &store) != OUTLIVE_OK) {
        fprintf(stderr, "open: %s\n", outlive_last_error());
        return 1;
    }
    int status = 0;
    if (!strcmp(argv[2], "increment") && argc == 5) {
        for (long i = 0, n = atol(argv[4]); i < n; i++) {
            if (outlive_kv_update(store, argv[3], increment, NULL) != OUTLIVE_OK) {
                fprintf(stderr, "update: %s\n", outlive_last_error());
                status = 1;
                break;
            }
        }
    } else if (!strcmp(argv[2], "set") && argc == 5) {
        status = outlive_kv_set(store, argv[3], argv[4], strlen(argv[4])) == OUTLIVE_OK ? 0 : 1;
    } else if (!strcmp(argv[2], "write") && argc == 4) {
        setvbuf(stdout, NULL, _IONBF, 0);
        for (long i = 0, n = atol(argv[3]); i < n; i++) {
            char key[32], value[32];
            snprintf(key, sizeof key, "k%05ld", i);
            int length = snprintf(value, sizeof value, "v%ld", i);
            if (outlive_kv_set(store, key, value, (size_t)length) != OUTLIVE_OK) { status = 1; break; }
            printf("%ld\n", i);
        }
    } else {
        status = 2;
    }
    outlive_store_close(store);
    return status;
}
