/* The second executable of the cross-process handler tests.
 *
 *   handler_caller LIBRARY FILE ACTION...
 *
 * Loads the handler library (unless LIBRARY is "-"), reads a serialized handler
 * from FILE, and performs each ACTION on it, printing "ACTION -> STATUS" lines
 * (handlers print their own lines). An ACTION is a verb with optional
 * call-time arguments, separated by spaces:
 *   call [ARG...]        outlive_handler_call
 *   invalidate [ARG...]  outlive_handler_invalidate
 *   save:PATH            serialize the handler (as it is now) into PATH
 *   describe             print outlive_handler_description
 * ARG is name=TYPE:VALUE with TYPE S (string ID), T (tagged ID, VALUE tag:text),
 * B (0/1), i (INT), D (DOUBLE), I (INTEGER), U (UINTEGER), H (nested handler
 * named VALUE, no bound arguments).
 *
 * It also has handlers of its own: "rt.echo", registered at run time, and
 * caller_local, declared in this executable (found through -rdynamic). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "outlive.h"

static void rt_echo(int64_t n, const outlive_object *text) {
    printf("rt.echo: n=%" PRId64 " text=%s\n", n, text ? outlive_object_string(text) : "NULL");
    fflush(stdout);
}

OUTLIVE_HANDLER(caller_local, OUTLIVE_UINTEGER(value)) {
    printf("caller_local: value=%" PRIu64 "\n", value);
    fflush(stdout);
}

static int parse_args(char *spec, outlive_args *args) {
    for (char *token = strtok(spec, " "); token; token = strtok(NULL, " ")) {
        char *equals = strchr(token, '=');
        if (!equals || equals[1] == '\0' || equals[2] != ':') return -1;
        *equals = '\0';
        const char *name = token, *value = equals + 3;
        outlive_status status;
        switch (equals[1]) {
        case 'S': status = outlive_args_set_string(args, name, value); break;
        case 'T': {
            char tag[128];
            const char *colon = strchr(value, ':');
            if (!colon || (size_t)(colon - value) >= sizeof tag) return -1;
            memcpy(tag, value, (size_t)(colon - value));
            tag[colon - value] = '\0';
            status = outlive_args_set_id(args, name, tag, colon + 1, strlen(colon + 1));
            break;
        }
        case 'B': status = outlive_args_set_bool(args, name, strcmp(value, "1") == 0); break;
        case 'i': status = outlive_args_set_int(args, name, (int32_t)strtol(value, NULL, 10)); break;
        case 'D': status = outlive_args_set_double(args, name, strtod(value, NULL)); break;
        case 'I': status = outlive_args_set_integer(args, name, strtoll(value, NULL, 10)); break;
        case 'U': status = outlive_args_set_uinteger(args, name, strtoull(value, NULL, 10)); break;
        case 'H': {
            outlive_handler *nested = NULL;
            outlive_handler_new(value, NULL, NULL, &nested);
            if (!nested) return -1;
            status = outlive_args_set_handler(args, name, nested);
            outlive_handler_free(nested);
            break;
        }
        default: return -1;
        }
        if (status != OUTLIVE_OK) return -1;
    }
    return 0;
}

int main(int argc, char **argv) {
    if (argc < 3) { fprintf(stderr, "usage: handler_caller LIBRARY FILE ACTION...\n"); return 2; }
    if (outlive_handler_register("rt.echo", "INTEGER n, ID? text", (void (*)(void))rt_echo) != OUTLIVE_OK) {
        fprintf(stderr, "register: %s\n", outlive_last_error());
        return 2;
    }
    if (strcmp(argv[1], "-") != 0 && outlive_handler_library_load(argv[1]) != OUTLIVE_OK) {
        fprintf(stderr, "load %s: %s\n", argv[1], outlive_last_error());
        return 2;
    }
    FILE *file = fopen(argv[2], "rb");
    if (!file) { perror(argv[2]); return 2; }
    static unsigned char buffer[1 << 20];
    size_t size = fread(buffer, 1, sizeof buffer, file);
    fclose(file);
    outlive_handler *handler = NULL;
    outlive_status status = outlive_handler_deserialize(buffer, size, &handler);
    printf("deserialize -> %s\n", outlive_status_name(status));
    if (status != OUTLIVE_OK) { printf("error: %s\n", outlive_last_error()); return 0; }
    for (int i = 3; i < argc; i++) {
        char action[4096];
        snprintf(action, sizeof action, "%s", argv[i]);
        char *rest = strchr(action, ' ');
        if (rest) *rest++ = '\0';
        if (strncmp(action, "save:", 5) == 0) {
            void *bytes = NULL;
            size_t length = 0;
            status = outlive_handler_serialize(handler, &bytes, &length);
            if (status == OUTLIVE_OK) {
                FILE *out = fopen(action + 5, "wb");
                if (!out || fwrite(bytes, 1, length, out) != length) return 2;
                fclose(out);
                outlive_free(bytes);
            }
            printf("save -> %s\n", outlive_status_name(status));
        } else if (strcmp(action, "describe") == 0) {
            printf("describe -> %s\n", outlive_handler_description(handler));
        } else {
            outlive_args *args = NULL;
            outlive_args_new(&args);
            if (rest && parse_args(rest, args) != 0) { fprintf(stderr, "bad arguments: %s\n", argv[i]); return 2; }
            if (strcmp(action, "call") == 0) status = outlive_handler_call(handler, args);
            else if (strcmp(action, "invalidate") == 0) status = outlive_handler_invalidate(handler, args);
            else { fprintf(stderr, "unknown action %s\n", action); return 2; }
            printf("%s -> %s\n", action, outlive_status_name(status));
            if (status != OUTLIVE_OK) printf("error: %s\n", outlive_last_error());
            outlive_args_free(args);
        }
        fflush(stdout);
    }
    outlive_handler_free(handler);
    return 0;
}
