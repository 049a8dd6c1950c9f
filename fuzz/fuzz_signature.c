/* libFuzzer target: the signature grammar of outlive_handler_register. Any text must
 * be accepted or refused with OUTLIVE_E_INVALID_ARGUMENT and a message; an
 * accepted signature registers a handler that can be unregistered again. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "outlive.h"

static void target(void) {}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char *signature = malloc(size + 1);
    memcpy(signature, data, size);
    signature[size] = '\0';
    outlive_status status = outlive_handler_register("fuzz.target", signature, target);
    if (status == OUTLIVE_OK) {
        if (outlive_handler_resolve("fuzz.target") != OUTLIVE_OK) abort();
        if (outlive_handler_unregister("fuzz.target") != OUTLIVE_OK) abort();
    } else if (status != OUTLIVE_E_INVALID_ARGUMENT || outlive_last_error()[0] == '\0') {
        abort();
    }
    free(signature);
    return 0;
}
