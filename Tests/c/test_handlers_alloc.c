/* outlive_handler_call of a resolved handler with primitive and ID arguments does not
 * allocate: this executable interposes malloc and friends (liboutlive.so's
 * allocations go through them) and counts calls while handlers are called. */
#include "harness.h"
#include <malloc.h>
#include <stdint.h>

extern void *__libc_malloc(size_t size);
extern void *__libc_calloc(size_t count, size_t size);
extern void *__libc_realloc(void *pointer, size_t size);
extern void *__libc_memalign(size_t alignment, size_t size);
extern void __libc_free(void *pointer);

static volatile int counting;
static volatile long allocations;

void *malloc(size_t size) { if (counting) allocations++; return __libc_malloc(size); }
void *calloc(size_t count, size_t size) { if (counting) allocations++; return __libc_calloc(count, size); }
void *realloc(void *pointer, size_t size) { if (counting) allocations++; return __libc_realloc(pointer, size); }
void free(void *pointer) { __libc_free(pointer); }
void *memalign(size_t alignment, size_t size) { if (counting) allocations++; return __libc_memalign(alignment, size); }
void *aligned_alloc(size_t alignment, size_t size) { if (counting) allocations++; return __libc_memalign(alignment, size); }
int posix_memalign(void **out, size_t alignment, size_t size) {
    if (counting) allocations++;
    void *pointer = __libc_memalign(alignment, size);
    if (!pointer) return 12;
    *out = pointer;
    return 0;
}

static int64_t sum;
static void add_three(int64_t a, int64_t b, int64_t c) { sum += a + b + c; }

static size_t id_bytes;
OUTLIVE_HANDLER(alloc_mixed, OUTLIVE_ID(key), OUTLIVE_OPT_ID(absent), OUTLIVE_DOUBLE(x), OUTLIVE_BOOL(flag),
                OUTLIVE_INT(i), OUTLIVE_UINTEGER(u)) {
    size_t size = 0;
    outlive_object_bytes(key, &size);
    id_bytes += size + (absent ? 1000 : 0) + (flag ? 1 : 0) + (size_t)x + (size_t)i + (size_t)u;
}

OUTLIVE_HANDLER(alloc_nested, OUTLIVE_HANDLER_ARG(next)) { (void)next; }

static long count_allocations(const outlive_handler *handler, const outlive_args *args, int calls, outlive_status *status) {
    *status = OUTLIVE_OK;
    for (int i = 0; i < 100; i++) *status = outlive_handler_call(handler, args);   /* warm: resolve, caches */
    allocations = 0;
    counting = 1;
    for (int i = 0; i < calls && *status == OUTLIVE_OK; i++) *status = outlive_handler_call(handler, args);
    counting = 0;
    return allocations;
}

static void test_calls_with_primitive_arguments_allocate_nothing(void) {
    CHECK_OK(outlive_handler_register("alloc.add", "INTEGER a, INTEGER b, INTEGER c", (void (*)(void))add_three));
    outlive_args *bound = NULL;
    outlive_args_new(&bound);
    outlive_args_set_integer(bound, "a", 1);
    outlive_args_set_integer(bound, "b", 2);
    outlive_handler *handler = NULL;
    outlive_handler_new("alloc.add", NULL, bound, &handler);
    outlive_args *call = NULL;
    outlive_args_new(&call);
    outlive_args_set_integer(call, "c", 3);
    outlive_status status;
    sum = 0;
    long count = count_allocations(handler, call, 10000, &status);
    CHECK_OK(status);
    CHECK(sum == 6 * 10100);
    CHECK_MSG(count == 0, "%ld allocations in 10000 calls", count);
    outlive_handler_free(handler);
    outlive_args_free(call);
    outlive_args_free(bound);
}

static void test_calls_with_ids_and_mixed_primitives_allocate_nothing(void) {
    outlive_args *bound = NULL;
    outlive_args_new(&bound);
    outlive_args_set_string(bound, "key", "session-key");
    outlive_args_set_double(bound, "x", 2.0);
    outlive_args_set_bool(bound, "flag", true);
    outlive_args_set_int(bound, "i", 3);
    outlive_handler *handler = NULL;
    outlive_handler_new("alloc_mixed", NULL, bound, &handler);
    outlive_args *call = NULL;
    outlive_args_new(&call);
    outlive_args_set_uinteger(call, "u", 4);
    outlive_status status;
    id_bytes = 0;
    long count = count_allocations(handler, call, 10000, &status);
    CHECK_OK(status);
    CHECK(id_bytes == (11 + 1 + 2 + 3 + 4) * 10100u);
    CHECK_MSG(count == 0, "%ld allocations in 10000 calls", count);
    outlive_handler_free(handler);
    outlive_args_free(call);
    outlive_args_free(bound);
}

static void test_the_counter_sees_the_library_allocate(void) {
    /* A nested handler is given to the callee as a new handle: that allocates,
     * which shows the interposition counts the library's allocations. */
    outlive_args *bound = NULL;
    outlive_args_new(&bound);
    outlive_handler *next = NULL;
    outlive_handler_new("alloc_mixed", NULL, NULL, &next);
    outlive_args_set_handler(bound, "next", next);
    outlive_handler *handler = NULL;
    outlive_handler_new("alloc_nested", NULL, bound, &handler);
    outlive_status status;
    long count = count_allocations(handler, NULL, 100, &status);
    CHECK_OK(status);
    CHECK_MSG(count >= 100, "only %ld allocations seen", count);
    outlive_handler_free(handler);
    outlive_handler_free(next);
    outlive_args_free(bound);
}

HARNESS_MAIN(
    T(test_calls_with_primitive_arguments_allocate_nothing),
    T(test_calls_with_ids_and_mixed_primitives_allocate_nothing),
    T(test_the_counter_sees_the_library_allocate)
)
