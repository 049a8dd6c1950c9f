/* Handlers: a named C function plus bound, typed arguments — a value that can
 * be serialized, stored, and called later in any process that declares it.
 *
 *   cc -std=c99 -Wall -Wextra -Werror -Iinclude -o handlers Examples/c/handlers.c \
 *      -Lbuild -loutlive -Wl,-rpath,build -rdynamic
 *   ./handlers /tmp/handlers-example
 *
 * -rdynamic exports the executable's descriptors (outlive_handler__greet, ...),
 * so the library finds them with dlsym. Nothing that is not declared with
 * OUTLIVE_HANDLER (or registered) is ever called.
 */
#include <outlive.h>
#include <stdio.h>
#include <string.h>

/* Declares the function greet(const outlive_object *name, bool loud) and
 * exports its descriptor, signature "ID name, BOOL loud". */
OUTLIVE_HANDLER(greet, OUTLIVE_ID(name), OUTLIVE_BOOL(loud)) {
    printf(loud ? "HELLO, %s!\n" : "hello, %s\n", outlive_object_string(name));
}

/* An invalidation handler: outlive_handler_invalidate() calls it with the merged
 * arguments, then marks the handler invalidated. */
OUTLIVE_HANDLER(greeting_cancelled, OUTLIVE_ID(name)) {
    printf("greeting for %s cancelled\n", outlive_object_string(name));
}

/* A handler registered at run time (as Python or another language would):
 * a plain function with a signature string. */
static void add(int64_t a, int64_t b) {
    printf("add: %lld + %lld = %lld\n", (long long)a, (long long)b, (long long)(a + b));
}

static void report(const char *what, outlive_status status) {
    printf("%s -> %s\n", what, outlive_status_name(status));
}

int main(int argc, char **argv) {
    if (argc != 2) { fprintf(stderr, "usage: %s STORE_DIR\n", argv[0]); return 2; }
    outlive_store *store;
    if (outlive_store_open(argv[1], "handlers-example", NULL, NULL, &store) != OUTLIVE_OK) {
        fprintf(stderr, "open: %s\n", outlive_last_error());
        return 1;
    }

    /* A handler value: the name and the bound argument name = "dana". */
    outlive_args *bound = NULL;
    outlive_args_new(&bound);
    outlive_args_set_string(bound, "name", "dana");
    outlive_handler *hello = NULL;
    outlive_handler_new("greet", "greeting_cancelled", bound, &hello);
    outlive_args_free(bound);
    printf("handler: %s\n", outlive_handler_description(hello));

    /* Calling merges the bound arguments with call-time ones (call-time wins). */
    outlive_args *call = NULL;
    outlive_args_new(&call);
    outlive_args_set_bool(call, "loud", false);
    outlive_handler_call(hello, call);

    /* Serialized, the handler is bytes that name it — no address, no path —
     * which can be kept anywhere: here in the store's key-value table, where
     * another process (or the next run of this one) could read it. */
    void *bytes;
    size_t size;
    outlive_handler_serialize(hello, &bytes, &size);
    outlive_kv_set(store, "handlers/hello", bytes, size);
    printf("serialized: %zu bytes, stored under handlers/hello\n", size);
    outlive_free(bytes);
    outlive_kv_get(store, "handlers/hello", &bytes, &size);
    outlive_handler *again;
    if (outlive_handler_deserialize(bytes, size, &again) != OUTLIVE_OK) {
        fprintf(stderr, "%s\n", outlive_last_error());
        return 1;
    }
    outlive_free(bytes);
    outlive_args_set_bool(call, "loud", true);
    outlive_handler_call(again, call);

    /* Errors are statuses: nothing is called when arguments do not match. */
    report("call without loud", outlive_handler_call(again, NULL));
    outlive_args *wrong = NULL;
    outlive_args_new(&wrong);
    outlive_args_set_int(wrong, "loud", 1);
    report("call with loud as INT", outlive_handler_call(again, wrong));
    outlive_args_free(wrong);
    outlive_handler *system_call = NULL;
    outlive_handler_new("system", NULL, NULL, &system_call);
    report("call of \"system\"", outlive_handler_call(system_call, NULL));
    outlive_handler_free(system_call);

    /* Run-time registration. */
    outlive_handler_register("example.add", "INTEGER a, INTEGER b", (void (*)(void))add);
    outlive_args *numbers = NULL;
    outlive_args_new(&numbers);
    outlive_args_set_integer(numbers, "a", 40);
    outlive_handler *sum = NULL;
    outlive_handler_new("example.add", NULL, numbers, &sum);
    outlive_args_set_integer(numbers, "b", 2);
    outlive_handler_call(sum, numbers);
    outlive_args_free(numbers);
    outlive_handler_free(sum);

    /* Invalidation runs greeting_cancelled once; afterwards every call fails. */
    report("invalidate", outlive_handler_invalidate(again, NULL));
    report("call after invalidate", outlive_handler_call(again, call));
    printf("invalidated: %s\n", outlive_handler_is_invalidated(again) ? "yes" : "no");

    outlive_args_free(call);
    outlive_handler_free(again);
    outlive_handler_free(hello);
    outlive_store_close(store);
    return 0;
}
