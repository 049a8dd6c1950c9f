/* libFuzzer target: the key-value entry points with hostile arguments. The
 * input is a program of operations whose keys and values are raw bytes (bad
 * UTF-8, empty, huge, embedded NULs cut the key short); every call must return
 * a status — never crash — and the store must stay consistent with a model of
 * the calls that returned OK. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "outlive.h"

static outlive_store *store;

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc; (void)argv;
    char dir[] = "/tmp/outlive-fuzz-kv-XXXXXX";
    if (!mkdtemp(dir)) abort();
    outlive_store_options options = OUTLIVE_STORE_OPTIONS_INIT;
    options.durability = OUTLIVE_DURABILITY_NORMAL;
    if (outlive_store_open(dir, "fuzz", NULL, &options, &store) != OUTLIVE_OK) abort();
    return 0;
}

static outlive_status modify(outlive_kv_value *value, void *context) {
    const uint8_t *input = context;
    size_t size = 0;
    (void)outlive_kv_value_bytes(value, &size);
    switch (input[0] % 4) {
    case 0: return outlive_kv_value_set(value, "01234567", input[1] % 8);
    case 1: return outlive_kv_value_delete(value);
    case 2: return OUTLIVE_E_BUSY;
    default: return OUTLIVE_OK;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    size_t at = 0;
    while (at + 3 <= size) {
        uint8_t op = data[at], key_length = data[at + 1], value_length = data[at + 2];
        at += 3;
        if (at + key_length + value_length > size) break;
        char key[256];
        memcpy(key, data + at, key_length);
        key[key_length] = '\0';
        const uint8_t *value = data + at + key_length;
        at += key_length + value_length;
        void *bytes = NULL;
        size_t got = 0;
        outlive_status status;
        switch (op % 6) {
        case 0:
            status = outlive_kv_set(store, key, value, value_length);
            if (status == OUTLIVE_OK) {
                if (outlive_kv_get(store, key, &bytes, &got) != OUTLIVE_OK || got != value_length ||
                    (got && memcmp(bytes, value, got) != 0)) abort();
                outlive_free(bytes);
            }
            break;
        case 1:
            status = outlive_kv_get(store, key, &bytes, &got);
            if (status == OUTLIVE_OK) outlive_free(bytes);
            break;
        case 2:
            status = outlive_kv_delete(store, key);
            if (status == OUTLIVE_OK && outlive_kv_get(store, key, &bytes, &got) != OUTLIVE_E_NOT_FOUND) abort();
            break;
        case 3: {
            uint8_t context[2] = {value_length ? value[0] : 0, (uint8_t)value_length};
            status = outlive_kv_update(store, key, modify, context);
            break;
        }
        case 4: {
            outlive_kv_key_list *keys = NULL;
            status = outlive_kv_key_list_new(store, key, NULL, 1, &keys);
            if (status == OUTLIVE_OK) {
                for (size_t i = 0; i < outlive_kv_key_list_count(keys); i++)
                    if (strncmp(outlive_kv_key_list_key(keys, i), key, strlen(key)) != 0) abort();
                outlive_kv_key_list_free(keys);
            }
            break;
        }
        default: {
            size_t count = 0;
            status = outlive_kv_count(store, key, &count);
            break;
        }
        }
        if (status != OUTLIVE_OK && outlive_last_error()[0] == '\0') abort();
    }
    return 0;
}
