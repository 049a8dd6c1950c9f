/* The key-value store: durable values shared by every process of a store,
 * atomic read-modify-write, and observers told of changes made by any process.
 *
 *   cc -std=c99 -Wall -Wextra -Werror -Iinclude -o kv Examples/c/kv.c \
 *      -Lbuild -loutlive -Wl,-rpath,build -rdynamic
 *   ./kv /tmp/kv-example
 */
#include <outlive.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Observers run on the store's loop, inside outlive_loop_dispatch(). bytes is
 * the value the key has now (NULL when it was deleted). */
static void settings_changed(const char *key, const void *bytes, size_t size, void *context) {
    int *calls = context;
    (*calls)++;
    if (bytes) printf("observer: %s = %.*s\n", key, (int)size, (const char *)bytes);
    else printf("observer: %s deleted\n", key);
}

/* A modifier runs exactly once, inside the write transaction: no writer of
 * any process can interleave between its read and its write. */
static outlive_status add_one(outlive_kv_value *value, void *context) {
    (void)context;
    size_t size = 0;
    const char *old = outlive_kv_value_bytes(value, &size);
    char number[32] = "0";
    if (old && size < sizeof number) { memcpy(number, old, size); number[size] = '\0'; }
    char text[32];
    int n = snprintf(text, sizeof text, "%ld", strtol(number, NULL, 10) + 1);
    return outlive_kv_value_set(value, text, (size_t)n);
}

static int fail(const char *what) {
    fprintf(stderr, "%s: %s\n", what, outlive_last_error());
    return 1;
}

int main(int argc, char **argv) {
    if (argc != 2) { fprintf(stderr, "usage: %s STORE_DIR\n", argv[0]); return 2; }
    outlive_store *store;
    if (outlive_store_open(argv[1], "kv-example", NULL, NULL, &store) != OUTLIVE_OK) return fail("open");

    int calls = 0;
    uint64_t token;
    if (outlive_kv_observe(store, "settings/", settings_changed, &calls, NULL, &token) != OUTLIVE_OK) return fail("observe");

    /* Each call is one transaction, durable when it returns OUTLIVE_OK. */
    outlive_kv_set(store, "settings/theme", "dark", 4);
    outlive_kv_set(store, "settings/language", "en", 2);

    void *bytes;
    size_t size;
    if (outlive_kv_get(store, "settings/theme", &bytes, &size) != OUTLIVE_OK) return fail("get");
    printf("get settings/theme -> %.*s\n", (int)size, (const char *)bytes);
    outlive_free(bytes);   /* what the library allocates, the caller frees */

    for (int i = 0; i < 3; i++)
        if (outlive_kv_update(store, "visits", add_one, NULL) != OUTLIVE_OK) return fail("update");
    outlive_kv_get(store, "visits", &bytes, &size);
    printf("visits after 3 updates: %.*s\n", (int)size, (const char *)bytes);
    outlive_free(bytes);

    /* Keys in bytewise order, as every list: a snapshot read by index (limit 0: all of them;
     * to page, pass the last key of one list as `after` of the next). */
    outlive_kv_key_list *keys = NULL;
    if (outlive_kv_key_list_new(store, "settings/", NULL, 0, &keys) != OUTLIVE_OK) return fail("list keys");
    for (size_t i = 0; i < outlive_kv_key_list_count(keys); i++) printf("key: %s\n", outlive_kv_key_list_key(keys, i));
    outlive_kv_key_list_free(keys);

    /* A missing key is a status, never a crash; the message says which key. */
    outlive_status status = outlive_kv_get(store, "settings/missing", &bytes, &size);
    printf("get settings/missing -> %s (%s)\n", outlive_status_name(status), outlive_last_error());

    /* Observers see the changes at the next dispatch: quick successive changes
     * of one key may arrive as one call with the latest value. */
    for (int round = 0; round < 50 && calls < 2; round++) outlive_loop_dispatch(outlive_store_loop(store), 100);
    outlive_kv_delete(store, "settings/language");
    for (int round = 0; round < 50 && calls < 3; round++) outlive_loop_dispatch(outlive_store_loop(store), 100);

    size_t count;
    outlive_kv_count(store, "", &count);
    printf("keys in the store: %zu\n", count);

    outlive_kv_unobserve(store, token);
    outlive_store_close(store);
    return 0;
}
