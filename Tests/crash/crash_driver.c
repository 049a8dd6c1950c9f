/* The crash harness's workload: a random mix of store operations. Each is
 * announced on stdout (unbuffered) before it is made ("try ...") and
 * confirmed after the library acknowledged it ("ok"), so that the checker
 * knows what must survive the kill -9 that comes at a random moment, and the
 * one operation that may or may not have happened. Operations:
 *   try set KEY VALUE    outlive_kv_set
 *   try del KEY          outlive_kv_delete (of a key that may be absent)
 *   try inc counter      outlive_kv_update adding one
 * Usage: crash_driver DIR SEED */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "outlive.h"

static outlive_status increment(outlive_kv_value *value, void *context) {
    size_t size = 0;
    const char *bytes = outlive_kv_value_bytes(value, &size);
    char text[32] = {0};
    if (bytes) memcpy(text, bytes, size < 31 ? size : 31);
    long next = atol(text) + 1;
    *(long *)context = next;
    int length = snprintf(text, sizeof text, "%ld", next);
    return outlive_kv_value_set(value, text, (size_t)length);
}

int main(int argc, char **argv) {
    if (argc != 3) return 2;
    setvbuf(stdout, NULL, _IONBF, 0);
    srand((unsigned)atoi(argv[2]));
    outlive_store_options options = OUTLIVE_STORE_OPTIONS_INIT;
    options.durability = OUTLIVE_DURABILITY_FULL;
    outlive_store *store = NULL;
    if (outlive_store_open_with_options(argv[1], "driver", NULL, &options, &store) != OUTLIVE_OK) {
        fprintf(stderr, "open: %s\n", outlive_last_error());
        return 1;
    }
    for (long op = 0;; op++) {
        char key[32], value[64];
        snprintf(key, sizeof key, "key%02d", rand() % 50);
        int choice = rand() % 10;
        if (choice < 6) {
            int length = snprintf(value, sizeof value, "v%ld-%d", op, rand());
            printf("try set %s %s\n", key, value);
            if (outlive_kv_set(store, key, value, (size_t)length) != OUTLIVE_OK) return 1;
        } else if (choice < 8) {
            printf("try del %s\n", key);
            outlive_status status = outlive_kv_delete(store, key);
            if (status != OUTLIVE_OK && status != OUTLIVE_E_NOT_FOUND) return 1;
        } else {
            long now = 0;
            printf("try inc counter\n");
            if (outlive_kv_update(store, "counter", increment, &now) != OUTLIVE_OK) return 1;
        }
        printf("ok\n");
    }
}
