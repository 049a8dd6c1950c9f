/* Handlers in one process: declaration macros, run-time registration, the
 * signature grammar, resolution refusals, calling rules, invalidation,
 * serialization errors, threads. */
#include "harness.h"
#include <math.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <unistd.h>

/* ── handlers of this executable (found through -rdynamic) ── */

static int calls;
static int64_t last_integer;
static const char *last_text;
static char last_note[64]; /* a copy of note: its storage may end with the call */

OUTLIVE_HANDLER(local_sum, OUTLIVE_INTEGER(a), OUTLIVE_INTEGER(b), OUTLIVE_OPT_ID(note)) {
    calls++;
    last_integer = a + b;
    last_text = note ? outlive_object_string(note) : NULL;
    snprintf(last_note, sizeof last_note, "%s", last_text ? last_text : "(none)");
}

OUTLIVE_HANDLER(local_tagged, OUTLIVE_ID_OF(xmpp.account, account), OUTLIVE_OPT_ID_OF(my-tag, other)) {
    (void)account;
    (void)other;
    calls++;
}

OUTLIVE_HANDLER(local_needs_handler, OUTLIVE_HANDLER_ARG(done)) {
    calls++;
    outlive_handler_call(done, NULL);
}

OUTLIVE_HANDLER(local_zero) { calls++; }

/* Exported symbols under the descriptor prefix that are not valid descriptors:
 * none may ever be called. */
int not_a_handler_calls;
void outlive_handler__fake_function(void) { not_a_handler_calls++; }
void fake_target(int64_t a) { (void)a; not_a_handler_calls++; }
const outlive_handler_descriptor outlive_handler__bad_magic = {
    0x1234, OUTLIVE_HANDLER_DESCRIPTOR_VERSION, 0, "bad_magic", "INTEGER a", (void (*)(void))fake_target, NULL };
const outlive_handler_descriptor outlive_handler__wrong_name = {
    OUTLIVE_HANDLER_MAGIC, OUTLIVE_HANDLER_DESCRIPTOR_VERSION, 0, "other_name", "INTEGER a", (void (*)(void))fake_target, NULL };
const outlive_handler_descriptor outlive_handler__future_version = {
    OUTLIVE_HANDLER_MAGIC, 99, 0, "future_version", "INTEGER a", (void (*)(void))fake_target, NULL };
const outlive_handler_descriptor outlive_handler__null_function = {
    OUTLIVE_HANDLER_MAGIC, OUTLIVE_HANDLER_DESCRIPTOR_VERSION, 0, "null_function", "INTEGER a", NULL, NULL };
const outlive_handler_descriptor outlive_handler__bad_signature = {
    OUTLIVE_HANDLER_MAGIC, OUTLIVE_HANDLER_DESCRIPTOR_VERSION, 0, "bad_signature", "INTEGR a", (void (*)(void))fake_target, NULL };
uint64_t outlive_handler__tiny = OUTLIVE_HANDLER_MAGIC;
/* Right magic, version, name, signature and function, but shorter than a
 * descriptor: reading it as one would read past its end. */
struct short_descriptor { uint64_t magic; uint32_t version, reserved; const char *name, *signature; void (*function)(void); };
const struct short_descriptor outlive_handler__short_object = {
    OUTLIVE_HANDLER_MAGIC, OUTLIVE_HANDLER_DESCRIPTOR_VERSION, 0, "short_object", "INTEGER a", (void (*)(void))fake_target };

static outlive_status call_named(const char *name, outlive_args *args) {
    outlive_handler *handler = NULL;
    outlive_handler_new(name, NULL, NULL, &handler);
    if (!handler) return OUTLIVE_E_INVALID_ARGUMENT;
    outlive_status status = outlive_handler_call(handler, args);
    outlive_handler_free(handler);
    return status;
}

static void test_descriptor_layout_is_the_documented_one(void) {
    CHECK(offsetof(outlive_handler_descriptor, magic) == 0);
    CHECK(offsetof(outlive_handler_descriptor, version) == 8);
    CHECK(offsetof(outlive_handler_descriptor, name) == 16);
    CHECK(offsetof(outlive_handler_descriptor, signature) == 24);
    CHECK(offsetof(outlive_handler_descriptor, function) == 32);
    CHECK(offsetof(outlive_handler_descriptor, resolver) == 40);
    CHECK(outlive_handler__local_sum.magic == OUTLIVE_HANDLER_MAGIC);
    CHECK(strcmp(outlive_handler__local_sum.name, "local_sum") == 0);
    CHECK(strcmp(outlive_handler__local_sum.signature, "INTEGER a, INTEGER b, ID? note") == 0);
    CHECK(strcmp(outlive_handler__local_tagged.signature, "ID<xmpp.account> account, ID<my-tag>? other") == 0);
    CHECK(strcmp(outlive_handler__local_zero.signature, "") == 0);
    CHECK(outlive_handler__local_zero.resolver == NULL);
}

static void test_main_program_handler_is_called_with_merged_arguments(void) {
    outlive_args *bound = NULL;
    outlive_args_new(&bound);
    outlive_args_set_integer(bound, "a", 40);
    outlive_args_set_integer(bound, "b", 1);
    outlive_handler *handler = NULL;
    outlive_handler_new("local_sum", NULL, bound, &handler);
    outlive_args *call = NULL;
    outlive_args_new(&call);
    outlive_args_set_integer(call, "b", 2);
    outlive_args_set_string(call, "note", "hi");
    calls = 0;
    CHECK_OK(outlive_handler_call(handler, call));
    CHECK(calls == 1 && last_integer == 42 && last_text && strcmp(last_text, "hi") == 0);
    CHECK_OK(outlive_handler_call(handler, NULL));
    CHECK(calls == 2 && last_integer == 41 && last_text == NULL);
    CHECK_OK(outlive_handler_resolve("local_sum"));
    calls = 0;
    CHECK_OK(call_named("local_zero", NULL));
    CHECK(calls == 1);
    outlive_args_free(call);
    outlive_args_free(bound);
    outlive_handler_free(handler);
}

/* An argument set's bytes (docs/FORMAT.md, "Argument sets"): the serialized
 * handler named outlive.arguments whose bound arguments are the set. */
static void *serialized_set(const outlive_args *set, size_t *out_size) {
    outlive_handler *carrier = NULL;
    void *bytes = NULL;
    if (outlive_handler_new("outlive.arguments", NULL, set, &carrier) != OUTLIVE_OK ||
        outlive_handler_serialize(carrier, &bytes, out_size) != OUTLIVE_OK) {
        fprintf(stderr, "serializing an argument set: %s\n", outlive_last_error());
        exit(1);
    }
    outlive_handler_free(carrier);
    return bytes;
}

static void test_a_call_with_serialized_arguments_is_the_call_with_the_set(void) {
    outlive_args *bound = NULL, *call = NULL, *empty = NULL, *mistyped = NULL;
    outlive_args_new(&bound);
    outlive_args_set_integer(bound, "a", 40);
    outlive_args_set_integer(bound, "b", 1);
    outlive_handler *handler = NULL, *unbound = NULL;
    outlive_handler_new("local_sum", NULL, bound, &handler);
    outlive_handler_new("local_sum", NULL, NULL, &unbound);
    outlive_args_new(&call);
    outlive_args_set_integer(call, "b", 2);
    outlive_args_set_string(call, "note", "hi");
    outlive_args_new(&empty);
    outlive_args_new(&mistyped);
    outlive_args_set_integer(mistyped, "note", 7);
    size_t size = 0, empty_size = 0, mistyped_size = 0;
    unsigned char *bytes = serialized_set(call, &size);
    void *empty_bytes = serialized_set(empty, &empty_size);
    void *mistyped_bytes = serialized_set(mistyped, &mistyped_size);

    calls = 0;
    CHECK_OK(outlive_handler_call_serialized(handler, bytes, size));
    CHECK(calls == 1 && last_integer == 42 && strcmp(last_note, "hi") == 0);
    /* Nothing of a call's bytes is kept for the next one. */
    CHECK_OK(outlive_handler_call_serialized(handler, empty_bytes, empty_size));
    CHECK(calls == 2 && last_integer == 41 && strcmp(last_note, "(none)") == 0);

    /* Refusals call nothing. */
    for (size_t cut = 0; cut < size; cut++)
        CHECK_MSG(outlive_handler_call_serialized(handler, bytes, cut) == OUTLIVE_E_CORRUPT, "cut at %zu", cut);
    unsigned char copy[256];
    CHECK(size < sizeof copy);
    memcpy(copy, bytes, size);
    copy[size] = 0;
    CHECK_STATUS(outlive_handler_call_serialized(handler, copy, size + 1), OUTLIVE_E_CORRUPT);
    CHECK(strstr(outlive_last_error(), "trailing") != NULL);
    copy[3] = 2;
    CHECK_STATUS(outlive_handler_call_serialized(handler, copy, size), OUTLIVE_E_VERSION);
    memcpy(copy, bytes, size);
    unsigned char *name = memchr(copy + 23, 'n', size - 23); /* "note": no C identifier as "1ote" */
    CHECK(name != NULL && memcmp(name, "note", 4) == 0);
    *name = '1';
    CHECK_STATUS(outlive_handler_call_serialized(handler, copy, size), OUTLIVE_E_CORRUPT);
    void *handler_bytes = NULL;
    size_t handler_size = 0;
    CHECK_OK(outlive_handler_serialize(handler, &handler_bytes, &handler_size));
    CHECK_STATUS(outlive_handler_call_serialized(handler, handler_bytes, handler_size), OUTLIVE_E_CORRUPT);
    CHECK(strstr(outlive_last_error(), "not an argument set") != NULL);
    CHECK_STATUS(outlive_handler_call_serialized(handler, NULL, 0), OUTLIVE_E_CORRUPT);
    CHECK_STATUS(outlive_handler_call_serialized(handler, NULL, 4), OUTLIVE_E_INVALID_ARGUMENT);
    CHECK_STATUS(outlive_handler_call_serialized(handler, bytes, (size_t)-1), OUTLIVE_E_INVALID_ARGUMENT);
    CHECK_STATUS(outlive_handler_call_serialized(NULL, bytes, size), OUTLIVE_E_INVALID_ARGUMENT);
    CHECK_STATUS(outlive_handler_call_serialized((const outlive_handler *)call, bytes, size),
                 OUTLIVE_E_INVALID_ARGUMENT);
    CHECK_STATUS(outlive_handler_call_serialized(handler, mistyped_bytes, mistyped_size), OUTLIVE_E_TYPE_MISMATCH);
    CHECK_STATUS(outlive_handler_call_serialized(unbound, bytes, size), OUTLIVE_E_MISSING_ARGUMENT);
    CHECK(calls == 2);

    outlive_free(handler_bytes);
    outlive_free(mistyped_bytes);
    outlive_free(empty_bytes);
    outlive_free(bytes);
    outlive_args_free(mistyped);
    outlive_args_free(empty);
    outlive_args_free(call);
    outlive_args_free(bound);
    outlive_handler_free(unbound);
    outlive_handler_free(handler);
}

static void test_names_that_are_no_descriptor_are_unresolved_and_nothing_runs(void) {
    char marker[4096];
    snprintf(marker, sizeof marker, "%s/system-ran", harness_temp_dir());
    char command[4200];
    snprintf(command, sizeof command, "touch %s", marker);
    outlive_args *args = NULL;
    outlive_args_new(&args);
    outlive_args_set_string(args, "command", command);
    outlive_args_set_integer(args, "a", 1);
    const char *names[] = { "system", "getpid", "fake_function", "fake_target", "bad_magic", "wrong_name",
                            "future_version", "null_function", "tiny", "short_object", "main", "outlive_handler_call", "harness_run",
                            "outlive_handler__local_sum", "local.sum", "no_such_handler" };
    not_a_handler_calls = 0;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        CHECK_MSG(call_named(names[i], args) == OUTLIVE_E_UNRESOLVED, "%s: %s", names[i], outlive_last_error());
        CHECK_STATUS(outlive_handler_resolve(names[i]), OUTLIVE_E_UNRESOLVED);
    }
    CHECK(not_a_handler_calls == 0);
    CHECK(access(marker, F_OK) != 0);
    /* A descriptor with a malformed signature is refused with its position. */
    CHECK_STATUS(call_named("bad_signature", args), OUTLIVE_E_INVALID_ARGUMENT);
    CHECK(strstr(outlive_last_error(), "at byte 0") != NULL);
    CHECK(not_a_handler_calls == 0);
    /* Malformed names never become handlers at all. */
    outlive_handler *h = NULL;
    CHECK(outlive_handler_new("a b", NULL, NULL, &h) == OUTLIVE_E_INVALID_ARGUMENT && h == NULL);
    CHECK(outlive_handler_new("", NULL, NULL, &h) == OUTLIVE_E_INVALID_ARGUMENT && h == NULL);
    CHECK(outlive_handler_new("../lib", NULL, NULL, &h) == OUTLIVE_E_INVALID_ARGUMENT && h == NULL);
    CHECK(outlive_handler_new(NULL, NULL, NULL, &h) == OUTLIVE_E_INVALID_ARGUMENT && h == NULL);
    CHECK(outlive_handler_new("\xff", NULL, NULL, &h) == OUTLIVE_E_INVALID_ARGUMENT && h == NULL);
    CHECK_STATUS(outlive_handler_resolve("a/b"), OUTLIVE_E_INVALID_ARGUMENT);
    outlive_args_free(args);
}

static void test_missing_and_mistyped_arguments_call_nothing(void) {
    outlive_args *args = NULL;
    outlive_args_new(&args);
    calls = 0;
    outlive_args_set_integer(args, "a", 1);
    CHECK_STATUS(call_named("local_sum", args), OUTLIVE_E_MISSING_ARGUMENT);
    CHECK(strstr(outlive_last_error(), "b (INTEGER)") != NULL);
    outlive_args_set_int(args, "b", 1);
    CHECK_STATUS(call_named("local_sum", args), OUTLIVE_E_TYPE_MISMATCH);
    outlive_args_set_integer(args, "b", 1);
    outlive_args_set_integer(args, "note", 1);
    CHECK_STATUS(call_named("local_sum", args), OUTLIVE_E_TYPE_MISMATCH);
    outlive_args_set_id(args, "note", "any.tag", "x", 1);
    CHECK_OK(call_named("local_sum", args));
    CHECK(calls == 1);
    calls = 0;
    outlive_args *tagged = NULL;
    outlive_args_new(&tagged);
    CHECK_STATUS(call_named("local_tagged", tagged), OUTLIVE_E_MISSING_ARGUMENT);
    outlive_args_set_string(tagged, "account", "dana");
    CHECK_STATUS(call_named("local_tagged", tagged), OUTLIVE_E_TYPE_MISMATCH);
    outlive_args_set_id(tagged, "account", "xmpp.other", "dana", 4);
    CHECK_STATUS(call_named("local_tagged", tagged), OUTLIVE_E_TYPE_MISMATCH);
    outlive_args_set_id(tagged, "account", "xmpp.account", "dana", 4);
    outlive_args_set_string(tagged, "other", "untagged");
    CHECK_STATUS(call_named("local_tagged", tagged), OUTLIVE_E_TYPE_MISMATCH);
    outlive_args_set_id(tagged, "other", "my-tag", "", 0);
    CHECK_OK(call_named("local_tagged", tagged));
    CHECK(calls == 1);
    calls = 0;
    outlive_args *needs = NULL;
    outlive_args_new(&needs);
    CHECK_STATUS(call_named("local_needs_handler", needs), OUTLIVE_E_MISSING_ARGUMENT);
    outlive_args_set_bool(needs, "done", true);
    CHECK_STATUS(call_named("local_needs_handler", needs), OUTLIVE_E_TYPE_MISMATCH);
    outlive_handler *zero = NULL;
    outlive_handler_new("local_zero", NULL, NULL, &zero);
    outlive_args_set_handler(needs, "done", zero);
    CHECK_OK(call_named("local_needs_handler", needs));
    CHECK(calls == 2);
    outlive_handler_free(zero);
    outlive_args_free(needs);
    outlive_args_free(tagged);
    outlive_args_free(args);
}

/* ── run-time registration and the signature grammar ── */

static double registered_sum;
static void registered_function(double x, int32_t y, bool z, uint64_t w, const outlive_object *o, const outlive_handler *h) {
    registered_sum = x + y + (z ? 1000 : 0) + (double)w + (o ? 1 : 0) + (h ? 1 : 0);
}
static int replaced_calls;
static void replaced_function(void) { replaced_calls++; }

static void test_registered_function_is_called_with_its_signature(void) {
    CHECK_OK(outlive_handler_register("app.compute", "  DOUBLE x,INT y ,\tBOOL z, UINTEGER w, ID<a.b-c_d>? o, HANDLER? h  ",
                              (void (*)(void))registered_function));
    outlive_args *args = NULL;
    outlive_args_new(&args);
    outlive_args_set_double(args, "x", 0.5);
    outlive_args_set_int(args, "y", 2);
    outlive_args_set_bool(args, "z", true);
    outlive_args_set_uinteger(args, "w", 10);
    CHECK_OK(call_named("app.compute", args));
    CHECK(registered_sum == 1012.5);
    outlive_args_set_id(args, "o", "a.b-c_d", "x", 1);
    CHECK_OK(call_named("app.compute", args));
    CHECK(registered_sum == 1013.5);
    /* A second registration replaces the first. */
    CHECK_OK(outlive_handler_register("app.compute", "", replaced_function));
    CHECK_OK(call_named("app.compute", args));
    CHECK(replaced_calls == 1 && registered_sum == 1013.5);
    CHECK_OK(outlive_handler_unregister("app.compute"));
    CHECK_STATUS(call_named("app.compute", args), OUTLIVE_E_UNRESOLVED);
    CHECK_STATUS(outlive_handler_unregister("app.compute"), OUTLIVE_E_NOT_FOUND);
    /* Registrations come before descriptors. */
    CHECK_OK(outlive_handler_register("local_zero", "", replaced_function));
    calls = 0;
    CHECK_OK(call_named("local_zero", NULL));
    CHECK(calls == 0 && replaced_calls == 2);
    CHECK_OK(outlive_handler_unregister("local_zero"));
    CHECK_OK(call_named("local_zero", NULL));
    CHECK(calls == 1);
    outlive_args_free(args);
}

static void test_malformed_signatures_are_refused_with_their_position(void) {
    struct { const char *signature; const char *position; } cases[] = {
        { "INTEGR a", "at byte 0" },
        { "integer a", "at byte 0" },
        { "INTEGER", "at byte 7" },
        { "INTEGERa", "at byte 0" },
        { "INTEGER a,", "at byte 10" },
        { "INTEGER a b", "at byte 10" },
        { ", INTEGER a", "at byte 0" },
        { "INTEGER a,, BOOL b", "at byte 10" },
        { "BOOL? b", "at byte 4" },
        { "INT<tag> b", "at byte 3" },
        { "ID<> a", "at byte 3" },
        { "ID<a b> a", "at byte 3" },
        { "ID<tag a", "at byte 8" },
        { "ID ?a", "at byte 3" },
        { "ID a, ID a", "at byte 10" },
        { "ID 1a", "at byte 3" },
        { "ID a-b", "at byte 4" },
        { "ID a;", "at byte 4" },
        { "ID\na", "at byte 2" },
        { "HANDLER?? h", "at byte 8" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        outlive_status status = outlive_handler_register("sig.test", cases[i].signature, replaced_function);
        CHECK_MSG(status == OUTLIVE_E_INVALID_ARGUMENT, "\"%s\" gave %s", cases[i].signature, outlive_status_name(status));
        CHECK_MSG(strstr(outlive_last_error(), cases[i].position) != NULL, "\"%s\": %s (expected %s)",
                  cases[i].signature, outlive_last_error(), cases[i].position);
    }
    CHECK_STATUS(outlive_handler_resolve("sig.test"), OUTLIVE_E_UNRESOLVED);
    CHECK_STATUS(outlive_handler_register("sig.test", NULL, replaced_function), OUTLIVE_E_INVALID_ARGUMENT);
    CHECK_STATUS(outlive_handler_register("sig.test", "", NULL), OUTLIVE_E_INVALID_ARGUMENT);
    CHECK_STATUS(outlive_handler_register(NULL, "", replaced_function), OUTLIVE_E_INVALID_ARGUMENT);
    CHECK_STATUS(outlive_handler_register("bad name", "", replaced_function), OUTLIVE_E_INVALID_ARGUMENT);
    CHECK_STATUS(outlive_handler_register("sig.test", "ID \xff", replaced_function), OUTLIVE_E_INVALID_ARGUMENT);
    /* 64 parameters are allowed, 65 are not. */
    char many[2048] = "";
    for (int i = 0; i < 65; i++) {
        char part[32];
        snprintf(part, sizeof part, "%sINT p%d", i ? ", " : "", i);
        strcat(many, part);
        if (i == 63) CHECK_OK(outlive_handler_register("sig.test", many, replaced_function));
    }
    CHECK_STATUS(outlive_handler_register("sig.test", many, replaced_function), OUTLIVE_E_INVALID_ARGUMENT);
    CHECK_OK(outlive_handler_register("sig.test", "   ", replaced_function));
    CHECK_OK(outlive_handler_unregister("sig.test"));
}

/* ── values ── */

static void test_args_setters_getters_and_iteration(void) {
    outlive_args *args = NULL;
    outlive_args_new(&args);
    CHECK(outlive_args_count(args) == 0);
    CHECK_OK(outlive_args_set_string(args, "s", "text"));
    CHECK_OK(outlive_args_set_id(args, "raw", "my.tag", "a\0b", 3));
    CHECK_OK(outlive_args_set_bool(args, "flag", true));
    CHECK_OK(outlive_args_set_int(args, "i", INT32_MIN));
    CHECK_OK(outlive_args_set_double(args, "d", 1e300));
    CHECK_OK(outlive_args_set_integer(args, "n", INT64_MIN));
    CHECK_OK(outlive_args_set_uinteger(args, "u", UINT64_MAX));
    outlive_handler *handler = NULL;
    outlive_handler_new("local_zero", NULL, NULL, &handler);
    CHECK_OK(outlive_args_set_handler(args, "h", handler));
    CHECK(outlive_args_count(args) == 8);
    const char *expected_names[] = { "s", "raw", "flag", "i", "d", "n", "u", "h" };
    outlive_type expected_types[] = { OUTLIVE_TYPE_ID, OUTLIVE_TYPE_ID, OUTLIVE_TYPE_BOOL, OUTLIVE_TYPE_INT, OUTLIVE_TYPE_DOUBLE,
                                      OUTLIVE_TYPE_INTEGER, OUTLIVE_TYPE_UINTEGER, OUTLIVE_TYPE_HANDLER };
    for (size_t i = 0; i < 8; i++) {
        CHECK(strcmp(outlive_args_name_at(args, i), expected_names[i]) == 0);
        CHECK(outlive_args_type_at(args, i) == expected_types[i]);
    }
    CHECK(outlive_args_name_at(args, 8) == NULL && outlive_args_type_at(args, 8) == 0);
    CHECK(outlive_args_name_at(NULL, 0) == NULL && outlive_args_count(NULL) == 0);

    const char *text = NULL;
    CHECK_OK(outlive_args_get_string(args, "s", &text));
    CHECK(strcmp(text, "text") == 0);
    CHECK_STATUS(outlive_args_get_string(args, "raw", &text), OUTLIVE_E_TYPE_MISMATCH);
    const outlive_object *object = NULL;
    CHECK_OK(outlive_args_get_id(args, "raw", &object));
    size_t size = 0;
    const char *bytes = outlive_object_bytes(object, &size);
    CHECK(size == 3 && memcmp(bytes, "a\0b", 3) == 0 && bytes[3] == '\0');
    CHECK(strcmp(outlive_object_type(object), "my.tag") == 0);
    CHECK(outlive_object_string(object) == NULL);
    CHECK_OK(outlive_args_get_id(args, "s", &object));
    CHECK(outlive_object_type(object) == NULL && strcmp(outlive_object_string(object), "text") == 0);
    CHECK(outlive_object_bytes(NULL, &size) == NULL && size == 0);
    bool flag = false; int32_t i32 = 0; double d = 0; int64_t i64 = 0; uint64_t u64 = 0;
    CHECK_OK(outlive_args_get_bool(args, "flag", &flag));
    CHECK_OK(outlive_args_get_int(args, "i", &i32));
    CHECK_OK(outlive_args_get_double(args, "d", &d));
    CHECK_OK(outlive_args_get_integer(args, "n", &i64));
    CHECK_OK(outlive_args_get_uinteger(args, "u", &u64));
    CHECK(flag && i32 == INT32_MIN && d == 1e300 && i64 == INT64_MIN && u64 == UINT64_MAX);
    const outlive_handler *view = NULL;
    CHECK_OK(outlive_args_get_handler(args, "h", &view));
    CHECK(strcmp(outlive_handler_name(view), "local_zero") == 0);
    calls = 0;
    CHECK_OK(outlive_handler_call(view, NULL));
    CHECK(calls == 1);
    /* Wrong type, absent, NULLs: precise statuses, out untouched. */
    i64 = 7;
    CHECK_STATUS(outlive_args_get_integer(args, "i", &i64), OUTLIVE_E_TYPE_MISMATCH);
    CHECK_STATUS(outlive_args_get_integer(args, "absent", &i64), OUTLIVE_E_NOT_FOUND);
    CHECK(i64 == 7);
    CHECK_STATUS(outlive_args_get_integer(args, "n", NULL), OUTLIVE_E_INVALID_ARGUMENT);
    CHECK_STATUS(outlive_args_get_integer(NULL, "n", &i64), OUTLIVE_E_INVALID_ARGUMENT);
    CHECK_STATUS(outlive_args_get_handler(args, "s", &view), OUTLIVE_E_TYPE_MISMATCH);
    CHECK_STATUS(outlive_args_set_integer(args, "bad name", 1), OUTLIVE_E_INVALID_ARGUMENT);
    CHECK_STATUS(outlive_args_set_integer(args, "1abc", 1), OUTLIVE_E_INVALID_ARGUMENT);
    CHECK_STATUS(outlive_args_set_integer(args, "", 1), OUTLIVE_E_INVALID_ARGUMENT);
    CHECK_STATUS(outlive_args_set_integer(args, NULL, 1), OUTLIVE_E_INVALID_ARGUMENT);
    CHECK_STATUS(outlive_args_set_integer(NULL, "x", 1), OUTLIVE_E_INVALID_ARGUMENT);
    CHECK_STATUS(outlive_args_set_string(args, "x", "\xc3"), OUTLIVE_E_INVALID_ARGUMENT);
    CHECK_STATUS(outlive_args_set_id(args, "x", "bad tag", "x", 1), OUTLIVE_E_INVALID_ARGUMENT);
    CHECK_STATUS(outlive_args_set_id(args, "x", NULL, NULL, 1), OUTLIVE_E_INVALID_ARGUMENT);
    CHECK_STATUS(outlive_args_set_id(args, "x", NULL, "x", (size_t)OUTLIVE_MAX_ID_SIZE + 1), OUTLIVE_E_INVALID_ARGUMENT);
    CHECK_STATUS(outlive_args_set_handler(args, "x", NULL), OUTLIVE_E_INVALID_ARGUMENT);
    CHECK(outlive_args_count(args) == 8);
    /* Replacing keeps the position; remove. */
    CHECK_OK(outlive_args_set_bool(args, "s", false));
    CHECK(strcmp(outlive_args_name_at(args, 0), "s") == 0 && outlive_args_type_at(args, 0) == OUTLIVE_TYPE_BOOL);
    CHECK_OK(outlive_args_remove(args, "s"));
    CHECK_STATUS(outlive_args_remove(args, "s"), OUTLIVE_E_NOT_FOUND);
    CHECK(outlive_args_count(args) == 7 && strcmp(outlive_args_name_at(args, 0), "raw") == 0);
    outlive_args *copy = NULL;
    outlive_args_copy(args, &copy);
    CHECK_OK(outlive_args_remove(args, "raw"));
    CHECK(outlive_args_count(copy) == 7);
    outlive_args_free(copy);
    outlive_args_free(args);
    outlive_args_free(NULL);
    outlive_handler_free(handler);
}

static void test_handler_values_copy_bind_describe(void) {
    outlive_args *bound = NULL;
    outlive_args_new(&bound);
    outlive_args_set_integer(bound, "a", 1);
    outlive_handler *handler = NULL;
    outlive_handler_new("local_sum", "local_zero", bound, &handler);
    outlive_args_set_integer(bound, "a", 100); /* the handler kept a copy */
    outlive_handler *copy = NULL;
    outlive_handler_copy(handler, &copy);
    outlive_args *more = NULL;
    outlive_args_new(&more);
    outlive_args_set_integer(more, "b", 2);
    outlive_args_set_string(more, "note", "n");
    CHECK_OK(outlive_handler_bind(handler, more));
    calls = 0;
    CHECK_OK(outlive_handler_call(handler, NULL));
    CHECK(last_integer == 3);
    CHECK_STATUS(outlive_handler_call(copy, NULL), OUTLIVE_E_MISSING_ARGUMENT);
    CHECK(calls == 1);
    CHECK(strcmp(outlive_handler_description(handler),
                 "local_sum(a: INTEGER 1, b: INTEGER 2, note: ID \"n\") invalidation: local_zero") == 0);
    CHECK(strcmp(outlive_handler_invalidation_name(handler), "local_zero") == 0);
    outlive_args *got = NULL;
    CHECK_OK(outlive_handler_bound(handler, &got));
    CHECK(outlive_args_count(got) == 3);
    outlive_args_free(got);
    /* Invalidation runs the invalidation handler, then nothing else works. */
    CHECK_OK(outlive_handler_invalidate(handler, NULL));
    CHECK(calls == 2 && outlive_handler_is_invalidated(handler) && !outlive_handler_is_invalidated(copy));
    CHECK_STATUS(outlive_handler_call(handler, NULL), OUTLIVE_E_INVALIDATED);
    CHECK_STATUS(outlive_handler_bind(handler, more), OUTLIVE_E_INVALIDATED);
    CHECK_STATUS(outlive_handler_invalidate(handler, NULL), OUTLIVE_E_INVALIDATED);
    CHECK(calls == 2);
    outlive_handler *invalidated_copy = NULL;
    outlive_handler_copy(handler, &invalidated_copy);
    CHECK(outlive_handler_is_invalidated(invalidated_copy));
    CHECK(strstr(outlive_handler_description(handler), "[invalidated]") != NULL);
    /* NULLs. */
    CHECK_STATUS(outlive_handler_call(NULL, NULL), OUTLIVE_E_INVALID_ARGUMENT);
    CHECK_STATUS(outlive_handler_invalidate(NULL, NULL), OUTLIVE_E_INVALID_ARGUMENT);
    CHECK_STATUS(outlive_handler_bind(copy, NULL), OUTLIVE_E_INVALID_ARGUMENT);
    outlive_handler *none = NULL;
    CHECK(outlive_handler_copy(NULL, &none) == OUTLIVE_E_INVALID_ARGUMENT && none == NULL);
    CHECK(!outlive_handler_is_invalidated(NULL));
    CHECK(outlive_handler_description(NULL) == NULL && outlive_handler_name(NULL) == NULL);
    /* A NULL invalidation name is a handler without one. */
    outlive_handler *plain = NULL;
    CHECK(outlive_handler_new("local_sum", NULL, NULL, &plain) == OUTLIVE_OK);
    CHECK(plain && outlive_handler_invalidation_name(plain) == NULL);
    outlive_handler_free(plain);
    outlive_handler_free(NULL);
    outlive_handler_free(invalidated_copy);
    outlive_handler_free(copy);
    outlive_handler_free(handler);
    outlive_args_free(more);
    outlive_args_free(bound);
}

static void test_nesting_past_the_limit_is_refused(void) {
    outlive_handler *handler = NULL;
    outlive_handler_new("local_zero", NULL, NULL, &handler);
    for (int depth = 2; depth <= OUTLIVE_MAX_NESTING + 1; depth++) {
        outlive_args *args = NULL;
        outlive_args_new(&args);
        outlive_status status = outlive_args_set_handler(args, "inner", handler);
        if (depth <= OUTLIVE_MAX_NESTING) {
            CHECK_OK(status);
            outlive_handler *outer = NULL;
            outlive_handler_new("local_zero", NULL, args, &outer);
            CHECK(outer);
            outlive_handler_free(handler);
            handler = outer;
        } else {
            CHECK_STATUS(status, OUTLIVE_E_INVALID_ARGUMENT);
        }
        outlive_args_free(args);
    }
    void *bytes = NULL;
    size_t size = 0;
    CHECK_OK(outlive_handler_serialize(handler, &bytes, &size));
    outlive_handler *decoded = NULL;
    CHECK_OK(outlive_handler_deserialize(bytes, size, &decoded));
    outlive_free(bytes);
    outlive_handler_free(decoded);
    outlive_handler_free(handler);
}

/* ── serialization ── */

static void test_serialization_round_trips_and_refuses_corrupt_input(void) {
    outlive_args *bound = NULL;
    outlive_args_new(&bound);
    outlive_args_set_string(bound, "note", "x");
    outlive_args_set_integer(bound, "a", -1);
    outlive_handler *handler = NULL;
    outlive_handler_new("local_sum", "local_zero", bound, &handler);
    void *bytes = NULL;
    size_t size = 0;
    CHECK_OK(outlive_handler_serialize(handler, &bytes, &size));
    const unsigned char *b = bytes;
    CHECK(size > 4 && memcmp(b, "OLH\x01", 4) == 0);
    outlive_handler *decoded = NULL;
    CHECK_OK(outlive_handler_deserialize(bytes, size, &decoded));
    CHECK(strcmp(outlive_handler_description(decoded), outlive_handler_description(handler)) == 0);
    /* Same bytes again: the encoding is canonical. */
    void *again = NULL;
    size_t again_size = 0;
    CHECK_OK(outlive_handler_serialize(decoded, &again, &again_size));
    CHECK(again_size == size && memcmp(again, bytes, size) == 0);
    outlive_free(again);
    outlive_handler_free(decoded);

    unsigned char copy[512];
    CHECK(size < sizeof copy);
    outlive_handler *out = (outlive_handler *)0x1;
    for (size_t cut = 0; cut < size; cut++)
        CHECK_MSG(outlive_handler_deserialize(bytes, cut, &out) == OUTLIVE_E_CORRUPT, "cut at %zu", cut);
    memcpy(copy, bytes, size);
    copy[size] = 0;
    CHECK_STATUS(outlive_handler_deserialize(copy, size + 1, &out), OUTLIVE_E_CORRUPT);
    CHECK(strstr(outlive_last_error(), "trailing") != NULL);
    copy[0] = 'X';
    CHECK_STATUS(outlive_handler_deserialize(copy, size, &out), OUTLIVE_E_CORRUPT);
    memcpy(copy, bytes, size);
    copy[3] = 2;
    CHECK_STATUS(outlive_handler_deserialize(copy, size, &out), OUTLIVE_E_VERSION);
    copy[3] = 0;
    CHECK_STATUS(outlive_handler_deserialize(copy, size, &out), OUTLIVE_E_CORRUPT);
    CHECK(out == (outlive_handler *)0x1);
    CHECK_STATUS(outlive_handler_deserialize(NULL, 4, &out), OUTLIVE_E_INVALID_ARGUMENT);
    CHECK_STATUS(outlive_handler_deserialize(bytes, size, NULL), OUTLIVE_E_INVALID_ARGUMENT);
    CHECK_STATUS(outlive_handler_deserialize(bytes, (size_t)-1, &out), OUTLIVE_E_INVALID_ARGUMENT);
    CHECK_STATUS(outlive_handler_deserialize(NULL, 0, &out), OUTLIVE_E_CORRUPT);
    CHECK_STATUS(outlive_handler_serialize(NULL, &again, &again_size), OUTLIVE_E_INVALID_ARGUMENT);
    CHECK_STATUS(outlive_handler_serialize(handler, NULL, &again_size), OUTLIVE_E_INVALID_ARGUMENT);
    outlive_free(bytes);
    outlive_handler_free(handler);
    outlive_args_free(bound);
}

static void test_handler_library_loading_errors(void) {
    CHECK_STATUS(outlive_handler_library_load(NULL), OUTLIVE_E_INVALID_ARGUMENT);
    CHECK_STATUS(outlive_handler_library_load(""), OUTLIVE_E_INVALID_ARGUMENT);
    CHECK_STATUS(outlive_handler_library_load("/nonexistent/libnothing.so"), OUTLIVE_E_NOT_FOUND);
    CHECK_STATUS(outlive_handler_library_load("/etc/hostname"), OUTLIVE_E_IO);
    char path[4096];
    snprintf(path, sizeof path, "%s/libhandlers_fixture.so", harness_bin_dir());
    CHECK_STATUS(outlive_handler_resolve("fixture_ping"), OUTLIVE_E_UNRESOLVED);
    CHECK_OK(outlive_handler_library_load(path));
    CHECK_OK(outlive_handler_library_load(path));
    CHECK_OK(outlive_handler_resolve("fixture_ping"));
    /* Exported by the library, but not a descriptor. */
    CHECK_STATUS(outlive_handler_resolve("fixture_not_a_handler"), OUTLIVE_E_UNRESOLVED);
}

/* ── threads ── */

static int64_t thread_total;
static void add_to_total(int64_t n) { __atomic_add_fetch(&thread_total, n, __ATOMIC_RELAXED); }

static void *call_many(void *handler) {
    outlive_args *args = NULL;
    outlive_args_new(&args);
    outlive_args_set_integer(args, "n", 1);
    for (int i = 0; i < 20000; i++) {
        if (outlive_handler_call(handler, args) != OUTLIVE_OK) break;
    }
    outlive_args_free(args);
    return NULL;
}

static void test_any_thread_may_call_the_same_handler(void) {
    CHECK_OK(outlive_handler_register("threads.add", "INTEGER n", (void (*)(void))add_to_total));
    outlive_handler *handler = NULL;
    outlive_handler_new("threads.add", NULL, NULL, &handler);
    pthread_t threads[4];
    thread_total = 0;
    for (int i = 0; i < 4; i++) pthread_create(&threads[i], NULL, call_many, handler);
    /* Meanwhile: register again (same function) and bind, from this thread. */
    for (int i = 0; i < 100; i++) {
        outlive_handler_register("threads.add", "INTEGER n", (void (*)(void))add_to_total);
        outlive_args *more = NULL;
        outlive_args_new(&more);
        outlive_args_set_integer(more, "unused", i);
        outlive_handler_bind(handler, more);
        outlive_args_free(more);
    }
    for (int i = 0; i < 4; i++) pthread_join(threads[i], NULL);
    CHECK_MSG(thread_total == 80000, "total %lld", (long long)thread_total);
    outlive_handler_free(handler);
}

/* A handler that, during the call, reads the very argument set it was called
 * with and calls another handler with it (both allowed: call_args is const,
 * not held): the call reads the set in place, and must still let it be read. */
static const outlive_args *shared_call_args;
static int64_t read_during_call;

OUTLIVE_HANDLER(local_reads_its_call_args, OUTLIVE_INTEGER(a)) {
    int64_t again = 0;
    if (outlive_args_get_integer(shared_call_args, "a", &again) == OUTLIVE_OK && again == a) read_during_call = again;
    outlive_handler *inner = NULL;
    if (outlive_handler_new("local_sum", NULL, NULL, &inner) == OUTLIVE_OK) {
        outlive_handler_call(inner, shared_call_args);  /* a = 40, b = 2 */
        outlive_handler_free(inner);
    }
}

static void test_a_handler_may_read_and_reuse_its_call_arguments_during_the_call(void) {
    outlive_args *args = NULL;
    CHECK_OK(outlive_args_new(&args));
    CHECK_OK(outlive_args_set_integer(args, "a", 40));
    CHECK_OK(outlive_args_set_integer(args, "b", 2));
    shared_call_args = args;
    read_during_call = 0;
    calls = 0;
    last_integer = 0;
    outlive_handler *handler = NULL;
    CHECK_OK(outlive_handler_new("local_reads_its_call_args", NULL, NULL, &handler));
    for (int i = 0; i < 3; i++) CHECK_OK(outlive_handler_call(handler, args));
    CHECK_MSG(read_during_call == 40, "read %lld", (long long)read_during_call);
    CHECK_MSG(calls == 3 && last_integer == 42, "calls %d, sum %lld", calls, (long long)last_integer);
    outlive_handler_free(handler);
    outlive_args_free(args);
}

/* ── the macros under C99 and C++ ── */

static void test_declaration_macros_compile_as_pedantic_c99_and_cpp(void) {
    const char *dir = harness_temp_dir();
    char command[8192];
    snprintf(command, sizeof command,
             "cc -std=c99 -Wall -Wextra -Werror -pedantic -Wmissing-prototypes -Iinclude -fsyntax-only "
             "Tests/c/handlers_declarations.inc -x c 2>%s/c99.txt", dir);
    snprintf(command, sizeof command,
             "cc -std=c99 -Wall -Wextra -Werror -pedantic -fvisibility=hidden -Iinclude -c -x c Tests/c/handlers_declarations.inc -o %s/c99.o 2>%s/c99.txt"
             " && c++ -std=c++11 -Wall -Wextra -Werror -pedantic -fvisibility=hidden -Iinclude -c -x c++ Tests/c/handlers_declarations.inc -o %s/cpp.o 2>%s/cpp.txt"
             " && nm %s/c99.o | grep -q ' [DR] outlive_handler__declared_sixteen'"
             " && nm %s/cpp.o | grep -q ' [DR] outlive_handler__declared_sixteen'"
             " && nm %s/cpp.o | grep -q ' T declared_zero'"
             " && readelf -sW %s/c99.o | grep outlive_handler__declared_instance | grep -q DEFAULT"
             " && readelf -sW %s/cpp.o | grep outlive_handler__declared_instance | grep -q DEFAULT",
             dir, dir, dir, dir, dir, dir, dir, dir, dir);
    int status = system(command);
    if (status != 0) {
        char cat[4200];
        snprintf(cat, sizeof cat, "cat %s/c99.txt %s/cpp.txt >&2", dir, dir);
        if (system(cat)) {}
    }
    CHECK_MSG(status == 0, "compiling Tests/c/handlers_declarations.inc failed (%d)", status);
    harness_remove_tree(dir);
}

HARNESS_MAIN(
    T(test_descriptor_layout_is_the_documented_one),
    T(test_main_program_handler_is_called_with_merged_arguments),
    T(test_a_call_with_serialized_arguments_is_the_call_with_the_set),
    T(test_names_that_are_no_descriptor_are_unresolved_and_nothing_runs),
    T(test_missing_and_mistyped_arguments_call_nothing),
    T(test_registered_function_is_called_with_its_signature),
    T(test_malformed_signatures_are_refused_with_their_position),
    T(test_args_setters_getters_and_iteration),
    T(test_handler_values_copy_bind_describe),
    T(test_nesting_past_the_limit_is_refused),
    T(test_serialization_round_trips_and_refuses_corrupt_input),
    T(test_handler_library_loading_errors),
    T(test_any_thread_may_call_the_same_handler),
    T(test_a_handler_may_read_and_reuse_its_call_arguments_during_the_call),
    T(test_declaration_macros_compile_as_pedantic_c99_and_cpp)
)
