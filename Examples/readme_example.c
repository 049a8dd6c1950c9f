/* The README's C example, built and run by `make test` so it never rots. */
#include <outlive.h>
#include <stdio.h>

static void changed(const char *key, const void *bytes, size_t size, void *context) {
    (void)context;
    printf("%s is now %.*s\n", key, (int)size, bytes ? (const char *)bytes : "(deleted)");
}

int main(void) {
    outlive_store *store;
    if (outlive_store_open("/tmp/outlive-readme", "app", NULL, NULL, &store) != OUTLIVE_OK) {
        fprintf(stderr, "%s\n", outlive_last_error());
        return 1;
    }
    uint64_t token;
    outlive_kv_observe(store, "greeting", changed, NULL, NULL, &token);
    outlive_kv_set(store, "greeting", "hello", 5);        /* durable when it returns */
    outlive_loop_dispatch(outlive_store_loop(store), 1000);  /* observers run here */
    outlive_store_close(store);
    return 0;
}
