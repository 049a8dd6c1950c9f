/* Fuzzing with a fixed seed, so every run tests the same inputs:
 *  - the decoder of serialized handlers gets 150,000 mutated, truncated,
 *    extended and random inputs: each must be refused (CORRUPT or VERSION) or
 *    decode to a handler that serializes back to exactly the same bytes (the
 *    format is canonical), never crash or read past the input (run it under
 *    ASan/valgrind in the reliability suite);
 *  - outlive_handler_call_serialized gets 30,000 mutated argument sets: it
 *    must call exactly when the bytes decode to the serialized handler named
 *    outlive.arguments (no invalidation name, not invalidated), and refuse
 *    the others as the decoder does (an accepted handler of another kind:
 *    CORRUPT);
 *  - the signature parser gets 30,000 random signatures, and its verdict must
 *    agree with a small reference parser of the documented grammar. */
#include "harness.h"
#include <ctype.h>
#include <math.h>
#include <stdint.h>

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static uint64_t next_random(void) {
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}
static size_t below(size_t n) { return n ? (size_t)(next_random() % n) : 0; }

/* ── seeds ── */

struct seed { unsigned char *bytes; size_t size; };
static struct seed seeds[8];
static size_t seed_count;

static void add_seed(outlive_handler *handler) {
    void *bytes = NULL;
    size_t size = 0;
    if (outlive_handler_serialize(handler, &bytes, &size) == OUTLIVE_OK && seed_count < 8) {
        seeds[seed_count].bytes = bytes;
        seeds[seed_count].size = size;
        seed_count++;
    }
    outlive_handler_free(handler);
}

static void make_seeds(void) {
    outlive_args *args = NULL;
    outlive_args_new(&args);
    outlive_args_set_string(args, "text", "hello");
    outlive_args_set_id(args, "raw", "xmpp.account", "\0\xff\x80", 3);
    outlive_args_set_bool(args, "flag", true);
    outlive_args_set_int(args, "small", INT32_MIN);
    outlive_args_set_double(args, "real", NAN);
    outlive_args_set_integer(args, "big", INT64_MIN);
    outlive_args_set_uinteger(args, "huge", UINT64_MAX);
    outlive_handler *inner = NULL;
    outlive_handler_new("inner.one", "inner_cancel", args, &inner);
    outlive_handler_invalidate(inner, NULL); /* unresolved: stays valid */
    outlive_args *outer_args = NULL;
    outlive_args_new(&outer_args);
    outlive_args_set_handler(outer_args, "next", inner);
    outlive_args_set_integer(outer_args, "n", 300);
    outlive_handler *middle = NULL;
    outlive_handler_new("middle", NULL, outer_args, &middle);
    outlive_args *top_args = NULL;
    outlive_args_new(&top_args);
    outlive_args_set_handler(top_args, "completion", middle);
    outlive_args_set_uinteger(top_args, "v", 1);
    outlive_handler *top = NULL;
    outlive_handler_new("top", NULL, top_args, &top);
    add_seed(top);
    outlive_handler *plain = NULL;
    outlive_handler_new("plain", NULL, NULL, &plain);
    add_seed(plain);
    outlive_handler *invalidating = NULL;
    outlive_handler_new("a", "b", args, &invalidating);
    add_seed(invalidating);
    outlive_handler *invalidated = NULL;
    outlive_handler_new("gone", NULL, args, &invalidated);
    outlive_handler_invalidate(invalidated, NULL);
    add_seed(invalidated);
    outlive_handler_free(middle);
    outlive_handler_free(inner);
    outlive_args_free(top_args);
    outlive_args_free(outer_args);
    outlive_args_free(args);
}

static const unsigned char interesting[] = { 0x00, 0x01, 0x02, 0x03, 0x07, 0x7f, 0x80, 0x81, 0xff, 'O', 'L', 'H', '_', '.' };

static size_t mutate(unsigned char *buffer, size_t size, size_t capacity) {
    int rounds = 1 + (int)below(4);
    for (int r = 0; r < rounds; r++) {
        switch (below(8)) {
        case 0: if (size) buffer[below(size)] ^= (unsigned char)(1u << below(8)); break;
        case 1: if (size) buffer[below(size)] = interesting[below(sizeof interesting)]; break;
        case 2: if (size) buffer[below(size)] = (unsigned char)next_random(); break;
        case 3: size = below(size + 1); break;                          /* truncate */
        case 4: if (size < capacity) {                                  /* insert */
                    size_t at = below(size + 1);
                    memmove(buffer + at + 1, buffer + at, size - at);
                    buffer[at] = (unsigned char)next_random();
                    size++;
                } break;
        case 5: if (size) {                                             /* delete */
                    size_t at = below(size);
                    memmove(buffer + at, buffer + at + 1, size - at - 1);
                    size--;
                } break;
        case 6: if (size && size * 2 <= capacity) {                     /* duplicate a chunk */
                    size_t from = below(size), length = 1 + below(size - from);
                    size_t at = below(size + 1);
                    memmove(buffer + at + length, buffer + at, size - at);
                    memcpy(buffer + at, buffer + (from < at ? from : from + length), length);
                    size += length;
                } break;
        case 7: while (size < capacity && below(3)) buffer[size++] = (unsigned char)next_random(); break;
        }
    }
    return size;
}

static void test_decoder_refuses_or_round_trips_150000_mutated_inputs(void) {
    make_seeds();
    CHECK(seed_count == 4);
    static unsigned char buffer[4096];
    size_t accepted = 0, corrupt = 0, version = 0;
    for (int i = 0; i < 150000; i++) {
        size_t size;
        if (i % 10 == 9) {                       /* random bytes after a valid header */
            memcpy(buffer, "OLH\x01", 4);
            size = 4 + below(40);
            for (size_t j = 4; j < size; j++) buffer[j] = (unsigned char)next_random();
        } else {
            const struct seed *seed = &seeds[below(seed_count)];
            memcpy(buffer, seed->bytes, seed->size);
            size = mutate(buffer, seed->size, sizeof buffer);
        }
        /* An exact-size heap copy, so that an over-read is an ASan/valgrind error. */
        unsigned char *input = malloc(size ? size : 1);
        memcpy(input, buffer, size);
        outlive_handler *handler = NULL;
        outlive_status status = outlive_handler_deserialize(input, size, &handler);
        if (status == OUTLIVE_OK) {
            accepted++;
            void *again = NULL;
            size_t again_size = 0;
            CHECK_OK(outlive_handler_serialize(handler, &again, &again_size));
            CHECK_MSG(again_size == size && memcmp(again, input, size) == 0, "input %d decoded but re-encodes differently", i);
            CHECK(outlive_handler_description(handler) != NULL);
            outlive_free(again);
            outlive_handler_free(handler);
        } else if (status == OUTLIVE_E_CORRUPT) {
            corrupt++;
            CHECK(handler == NULL);
        } else if (status == OUTLIVE_E_VERSION) {
            version++;
        } else {
            CHECK_MSG(0, "input %d: unexpected %s: %s", i, outlive_status_name(status), outlive_last_error());
        }
        free(input);
    }
    CHECK(accepted > 100 && corrupt > 100000);
    printf("  decoder fuzz: %zu accepted, %zu corrupt, %zu newer version\n", accepted, corrupt, version);
    for (size_t i = 0; i < seed_count; i++) outlive_free(seeds[i].bytes);
}

/* ── argument sets, called ── */

static int set_calls;
static void count_set_call(void) { set_calls++; }

static unsigned char *serialized_set(const outlive_args *set, size_t *out_size) {
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

static void test_serialized_call_arguments_call_exactly_when_they_decode_to_an_argument_set(void) {
    /* No parameters: any argument set calls it (extra arguments are ignored). */
    CHECK_OK(outlive_handler_register("fuzz.sink", "", (void (*)(void))count_set_call));
    outlive_handler *sink = NULL;
    CHECK_OK(outlive_handler_new("fuzz.sink", NULL, NULL, &sink));
    outlive_args *args = NULL, *nested_args = NULL;
    outlive_args_new(&args);
    outlive_args_set_string(args, "text", "hello");
    outlive_args_set_id(args, "raw", "xmpp.account", "\0\xff\x80", 3);
    outlive_args_set_bool(args, "flag", true);
    outlive_args_set_double(args, "real", -0.5);
    outlive_args_set_integer(args, "big", INT64_MIN);
    outlive_args_set_uinteger(args, "huge", UINT64_MAX);
    outlive_args_new(&nested_args);
    outlive_args_set_int(nested_args, "small", -3);
    outlive_handler *nested = NULL;
    outlive_handler_new("inner", NULL, nested_args, &nested);
    outlive_args_set_handler(args, "next", nested);
    struct seed sets[2];
    sets[0].bytes = serialized_set(args, &sets[0].size);
    sets[1].bytes = serialized_set(nested_args, &sets[1].size);
    static unsigned char buffer[4096];
    size_t called = 0, refused = 0;
    for (int i = 0; i < 30000; i++) {
        const struct seed *seed = &sets[below(2)];
        memcpy(buffer, seed->bytes, seed->size);
        size_t size = i % 50 == 0 ? seed->size : mutate(buffer, seed->size, sizeof buffer);
        unsigned char *input = malloc(size ? size : 1);
        memcpy(input, buffer, size);
        outlive_handler *decoded = NULL;
        outlive_status expected = outlive_handler_deserialize(input, size, &decoded);
        if (expected == OUTLIVE_OK) {
            int is_set = strcmp(outlive_handler_name(decoded), "outlive.arguments") == 0 &&
                         outlive_handler_invalidation_name(decoded) == NULL &&
                         !outlive_handler_is_invalidated(decoded);
            if (!is_set) expected = OUTLIVE_E_CORRUPT;
            outlive_handler_free(decoded);
        }
        int before = set_calls;
        outlive_status status = outlive_handler_call_serialized(sink, input, size);
        CHECK_MSG(status == expected, "input %d: %s where the decoder says %s (%s)", i, outlive_status_name(status),
                  outlive_status_name(expected), outlive_last_error());
        CHECK_MSG(set_calls == before + (status == OUTLIVE_OK), "input %d: called %d times", i, set_calls - before);
        if (status == OUTLIVE_OK) called++; else refused++;
        free(input);
    }
    CHECK(called > 1000 && refused > 10000);
    printf("  argument set fuzz: %zu called, %zu refused\n", called, refused);
    outlive_free(sets[0].bytes);
    outlive_free(sets[1].bytes);
    outlive_handler_free(nested);
    outlive_handler_free(sink);
    outlive_args_free(nested_args);
    outlive_args_free(args);
}

/* ── the signature grammar ── */

static int word_byte(int c) { return isalnum(c) || c == '_'; }

/* The documented grammar, written independently of the library's parser. */
static int reference_valid(const char *s) {
    const char *p = s;
    char names[65][130];
    int count = 0;
    while (*p == ' ' || *p == '\t') p++;
    if (!*p) return 1;
    for (;;) {
        const char *start = p;
        while (word_byte((unsigned char)*p)) p++;
        size_t length = (size_t)(p - start);
        static const char *types[] = { "ID", "HANDLER", "BOOL", "INT", "DOUBLE", "INTEGER", "UINTEGER" };
        int type = -1;
        for (int t = 0; t < 7; t++) if (strlen(types[t]) == length && strncmp(start, types[t], length) == 0) type = t;
        if (type < 0) return 0;
        if (*p == '<') {
            if (type != 0) return 0;
            const char *tag = ++p;
            while (*p && *p != '>') p++;
            if (!*p) return 0;
            size_t tag_length = (size_t)(p - tag);
            if (tag_length == 0 || tag_length > 128) return 0;
            for (const char *c = tag; c < p; c++)
                if (!(isalnum((unsigned char)*c) || *c == '_' || *c == '.' || *c == '-')) return 0;
            p++;
        }
        if (*p == '?') {
            if (type > 1) return 0;
            p++;
        }
        if (*p != ' ' && *p != '\t') return 0;
        while (*p == ' ' || *p == '\t') p++;
        start = p;
        while (word_byte((unsigned char)*p)) p++;
        length = (size_t)(p - start);
        if (length == 0 || length > 128 || isdigit((unsigned char)*start)) return 0;
        for (int i = 0; i < count; i++) if (strlen(names[i]) == length && strncmp(names[i], start, length) == 0) return 0;
        if (count == 64) return 0;
        memcpy(names[count], start, length);
        names[count][length] = '\0';
        count++;
        while (*p == ' ' || *p == '\t') p++;
        if (!*p) return 1;
        if (*p != ',') return 0;
        p++;
        while (*p == ' ' || *p == '\t') p++;
    }
}

static void noop(void) {}

static void test_signature_parser_agrees_with_the_grammar_on_30000_random_signatures(void) {
    static const char *pieces[] = {
        "ID", "HANDLER", "BOOL", "INT", "DOUBLE", "INTEGER", "UINTEGER", "ID<xmpp.account>", "ID<a-b_c.d>",
        "<", ">", "?", " ", " ", " ", "\t", ",", ", ", "a", "b", "name", "x1", "_", "1", "9z", ";", "\n", "\xc3\xa9",
        "Id", "INTEGERS", "<>", "ID<tag", "<a b>", "??", "  ", "\xff",
    };
    static const char *valid_types[] = { "ID", "ID?", "ID<t.x>", "ID<q>?", "HANDLER", "HANDLER?", "BOOL", "INT",
                                         "DOUBLE", "INTEGER", "UINTEGER" };
    size_t ok = 0, refused = 0;
    for (int i = 0; i < 30000; i++) {
        char signature[512] = "";
        if (i % 3 == 0) {
            /* Valid-looking signatures, occasionally broken by one piece. */
            int params = (int)below(6);
            for (int j = 0; j < params; j++) {
                char part[64];
                snprintf(part, sizeof part, "%s%s%s p%d", j ? (below(2) ? ", " : " ,\t") : (below(2) ? " " : ""),
                         valid_types[below(sizeof valid_types / sizeof valid_types[0])], below(2) ? " " : "\t",
                         below(8) ? j : 0);
                strcat(signature, part);
            }
            if (below(4) == 0) {
                size_t at = below(strlen(signature) + 1);
                const char *piece = pieces[below(sizeof pieces / sizeof pieces[0])];
                memmove(signature + at + strlen(piece), signature + at, strlen(signature) - at + 1);
                memcpy(signature + at, piece, strlen(piece));
            }
        } else {
            int count = (int)below(12);
            for (int j = 0; j < count; j++) strcat(signature, pieces[below(sizeof pieces / sizeof pieces[0])]);
        }
        outlive_status status = outlive_handler_register("fuzz.signature", signature, noop);
        int expected = reference_valid(signature);
        CHECK_MSG(status == (expected ? OUTLIVE_OK : OUTLIVE_E_INVALID_ARGUMENT), "\"%s\": %s, reference says %s (%s)",
                  signature, outlive_status_name(status), expected ? "valid" : "invalid", outlive_last_error());
        if (status == OUTLIVE_OK) ok++; else refused++;
        if (status != OUTLIVE_OK) CHECK(strstr(outlive_last_error(), "at byte") != NULL || strstr(outlive_last_error(), "UTF-8") != NULL);
    }
    CHECK(ok > 5000 && refused > 5000);
    printf("  signature fuzz: %zu valid, %zu refused\n", ok, refused);
}

HARNESS_MAIN(
    T(test_decoder_refuses_or_round_trips_150000_mutated_inputs),
    T(test_serialized_call_arguments_call_exactly_when_they_decode_to_an_argument_set),
    T(test_signature_parser_agrees_with_the_grammar_on_30000_random_signatures)
)
