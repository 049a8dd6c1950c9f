/* libFuzzer target: the serialized handler decoder. Any input must decode or
 * be refused with a status (never a crash or an over-read, which ASan would
 * catch); whatever decodes must serialize back to the very same bytes, since
 * the format has exactly one encoding per value (docs/FORMAT.md). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "outlive.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    outlive_handler *handler = NULL;
    outlive_status status = outlive_handler_deserialize(data, size, &handler);
    if (status != OUTLIVE_OK) {
        if (handler != NULL) abort();
        if (status != OUTLIVE_E_CORRUPT && status != OUTLIVE_E_VERSION && status != OUTLIVE_E_INVALID_ARGUMENT) abort();
        return 0;
    }
    void *bytes = NULL;
    size_t length = 0;
    if (outlive_handler_serialize(handler, &bytes, &length) != OUTLIVE_OK) abort();
    if (length != size || memcmp(bytes, data, size) != 0) abort();
    (void)outlive_handler_description(handler);
    outlive_free(bytes);
    outlive_handler_free(handler);
    return 0;
}
