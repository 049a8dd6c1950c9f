/* A handler library for the cross-process tests: its handlers print what they
 * receive, one line each, on stdout, so the test that ran the process can
 * check every value. Loaded with outlive_handler_library_load by handler_caller. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "outlive.h"

static void print_id(const char *label, const outlive_object *object) {
    if (!object) { printf(" %s=NULL", label); return; }
    size_t size = 0;
    const unsigned char *bytes = outlive_object_bytes(object, &size);
    const char *tag = outlive_object_type(object);
    const char *text = outlive_object_string(object);
    if (text) printf(" %s=%s\"%s\"", label, tag ? tag : "", text);
    else {
        printf(" %s=%s<", label, tag ? tag : "");
        for (size_t i = 0; i < size; i++) printf("%02x", bytes[i]);
        printf(">");
    }
}

static void print_double(const char *label, double value) {
    if (isnan(value)) printf(" %s=nan", label);
    else printf(" %s=%.17g", label, value);
}

/* Every type, mandatory and optional. */
OUTLIVE_HANDLER(fixture_all_types, OUTLIVE_ID(text), OUTLIVE_OPT_ID(maybe), OUTLIVE_ID_OF(fixture.account, account),
                OUTLIVE_BOOL(flag), OUTLIVE_INT(small), OUTLIVE_DOUBLE(real), OUTLIVE_INTEGER(big),
                OUTLIVE_UINTEGER(huge), OUTLIVE_OPT_HANDLER_ARG(next)) {
    printf("fixture_all_types:");
    print_id("text", text);
    print_id("maybe", maybe);
    print_id("account", account);
    printf(" flag=%d small=%" PRId32, flag ? 1 : 0, small);
    print_double("real", real);
    printf(" big=%" PRId64 " huge=%" PRIu64 " next=%s\n", big, huge, next ? outlive_handler_name(next) : "NULL");
    fflush(stdout);
}

/* Zero parameters. */
OUTLIVE_HANDLER(fixture_ping) {
    printf("fixture_ping\n");
    fflush(stdout);
}

/* Twelve parameters, in a mixed order. */
OUTLIVE_HANDLER(fixture_twelve, OUTLIVE_INT(a1), OUTLIVE_INTEGER(a2), OUTLIVE_DOUBLE(a3), OUTLIVE_BOOL(a4),
                OUTLIVE_UINTEGER(a5), OUTLIVE_ID(a6), OUTLIVE_INT(a7), OUTLIVE_INTEGER(a8), OUTLIVE_DOUBLE(a9),
                OUTLIVE_BOOL(a10), OUTLIVE_UINTEGER(a11), OUTLIVE_OPT_ID(a12)) {
    printf("fixture_twelve: %" PRId32 " %" PRId64 " %g %d %" PRIu64 " %s %" PRId32 " %" PRId64 " %g %d %" PRIu64 " %s\n",
           a1, a2, a3, a4 ? 1 : 0, a5, outlive_object_string(a6), a7, a8, a9, a10 ? 1 : 0, a11,
           a12 ? outlive_object_string(a12) : "NULL");
    fflush(stdout);
}

/* Calls the nested handler with result = n * 2, and keeps a copy to call again. */
OUTLIVE_HANDLER(fixture_run_nested, OUTLIVE_HANDLER_ARG(completion), OUTLIVE_INTEGER(n)) {
    outlive_args *args = NULL;
    outlive_args_new(&args);
    outlive_args_set_integer(args, "result", n * 2);
    outlive_status status = outlive_handler_call(completion, args);
    printf("fixture_run_nested: n=%" PRId64 " completion=%s status=%s\n", n, outlive_handler_name(completion),
           outlive_status_name(status));
    fflush(stdout);
    outlive_handler *kept = NULL;
    outlive_handler_copy(completion, &kept);
    outlive_args_set_integer(args, "result", -1);
    status = outlive_handler_call(kept, args);
    printf("fixture_run_nested: copy status=%s\n", outlive_status_name(status));
    fflush(stdout);
    outlive_handler_free(kept);
    outlive_args_free(args);
}

OUTLIVE_HANDLER(fixture_completion, OUTLIVE_INTEGER(result), OUTLIVE_OPT_ID(label)) {
    printf("fixture_completion: result=%" PRId64, result);
    print_id("label", label);
    printf("\n");
    fflush(stdout);
}

/* Instance handlers: the resolver finds a session by its key. */
struct fixture_session { const char *key; int calls; };
static struct fixture_session fixture_sessions[] = { { "alpha", 0 }, { "beta", 0 } };

static void *fixture_find_session(const outlive_args *merged) {
    const char *key = NULL;
    if (outlive_args_get_string(merged, "key", &key) != OUTLIVE_OK) return NULL;
    for (size_t i = 0; i < sizeof fixture_sessions / sizeof fixture_sessions[0]; i++) {
        if (strcmp(fixture_sessions[i].key, key) == 0) return &fixture_sessions[i];
    }
    return NULL;
}

OUTLIVE_INSTANCE_HANDLER(fixture_on_key, fixture_find_session, OUTLIVE_ID(key), OUTLIVE_INT(delta)) {
    struct fixture_session *session = self;
    session->calls += delta;
    printf("fixture_on_key: session=%s key=%s calls=%d\n", session->key, outlive_object_string(key), session->calls);
    fflush(stdout);
}

OUTLIVE_INSTANCE_HANDLER(fixture_instance_ping, fixture_find_session) {
    struct fixture_session *session = self;
    printf("fixture_instance_ping: session=%s\n", session->key);
    fflush(stdout);
}

/* The invalidation handler of the tests: it needs `reason`. */
OUTLIVE_HANDLER(fixture_cancelled, OUTLIVE_ID(reason), OUTLIVE_OPT_ID(text)) {
    printf("fixture_cancelled: reason=%s text=%s\n", outlive_object_string(reason),
           text ? outlive_object_string(text) : "NULL");
    fflush(stdout);
}

/* Exported, but not a handler: no name may reach it. */
int fixture_not_a_handler_calls;
void fixture_not_a_handler(void) { fixture_not_a_handler_calls++; printf("fixture_not_a_handler CALLED\n"); }

/* A durable interaction: prints its text and finishes at once. */
OUTLIVE_HANDLER(fixture_interaction, OUTLIVE_ID(text), OUTLIVE_ID(interaction_id), OUTLIVE_HANDLER_ARG(finish)) {
    printf("fixture_interaction: %s (%zu-character id)\n", outlive_object_string(text),
           strlen(outlive_object_string(interaction_id)));
    fflush(stdout);
    outlive_handler_call(finish, NULL);
}
