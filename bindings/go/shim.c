#include <errno.h>
#include <poll.h>
#include "shim.h"
#include "_cgo_export.h"

static void release_handle(void *context) { outliveGoRelease((uintptr_t)context); }

/* ── key-value ── */

static void kv_observer(const char *key, const void *bytes, size_t size, void *context) {
    outliveGoKvObserved((char *)key, (void *)bytes, size, (uintptr_t)context);
}

outlive_status outlive_go_kv_observe(outlive_store *store, const char *prefix, uintptr_t handle, uint64_t *out_token) {
    return outlive_kv_observe(store, prefix, kv_observer, (void *)handle, release_handle, out_token);
}

static outlive_status kv_modifier(outlive_kv_value *value, void *context) {
    return (outlive_status)outliveGoKvModify(value, (uintptr_t)context);
}

outlive_status outlive_go_kv_update(outlive_store *store, const char *key, uintptr_t handle) {
    return outlive_kv_update(store, key, kv_modifier, (void *)handle);
}

/* ── messages ── */

static int32_t presenter_priority(const outlive_message *message, void *context) {
    return outliveGoPresenterPriority((outlive_message *)message, (uintptr_t)context);
}
static void presenter_present(const outlive_message *message, outlive_presentation *presentation, void *context) {
    outliveGoPresenterPresent((outlive_message *)message, presentation, (uintptr_t)context);
}
static void presenter_end(const outlive_message *message, void *context) {
    outliveGoPresenterEnd((outlive_message *)message, (uintptr_t)context);
}

outlive_status outlive_go_presenter_add(outlive_store *store, const char *id, uintptr_t handle, int with_end) {
    outlive_presenter callbacks = OUTLIVE_PRESENTER_INIT;
    callbacks.priority = presenter_priority;
    callbacks.present = presenter_present;
    callbacks.end = with_end ? presenter_end : NULL;
    return outlive_presenter_add(store, id, &callbacks, (void *)handle, release_handle);
}

static bool response_handler(const outlive_message *message, void *context) {
    return outliveGoRespond((outlive_message *)message, (uintptr_t)context) != 0;
}

outlive_status outlive_go_response_handler_add(outlive_store *store, const char *id, uintptr_t handle) {
    return outlive_response_handler_add(store, id, response_handler, (void *)handle, release_handle);
}

/* ── loop ── */

int outlive_go_wait(int loop_fd, int wake_fd) {
    struct pollfd fds[2] = { { loop_fd, POLLIN, 0 }, { wake_fd, POLLIN, 0 } };
    for (;;) {
        int n = poll(fds, 2, -1);
        if (n < 0 && errno == EINTR) continue;  /* the Go runtime signals its threads */
        if (n < 0) return -1;
        if (fds[1].revents) return 1;
        return 0;
    }
}

/* ── handlers declared in Go ──
 *
 * outlive_handler_register takes a bare function pointer, without a context,
 * and the library calls it (through libffi) with the declared parameters. Go
 * cannot make a C function at run time, so each registered name gets one of
 * these fixed trampolines. A trampoline declares as many integer-class and
 * floating-point parameters as the calling convention passes in registers: the
 * ID and HANDLER pointers, BOOL, INT, INTEGER and UINTEGER values arrive in the
 * integer registers in the order declared, DOUBLE values in the vector
 * registers in the order declared (x86-64 System V and AArch64 assign the two
 * classes independently). The Go side knows the signature and picks each
 * value from its class. Registration refuses signatures that would need the
 * stack. */
#define SLOT(n) \
    static void outlive_go_slot_##n(uint64_t i0, uint64_t i1, uint64_t i2, uint64_t i3, uint64_t i4, uint64_t i5, \
                                    double d0, double d1, double d2, double d3, double d4, double d5, double d6, \
                                    double d7) { \
        uint64_t ints[OUTLIVE_GO_INT_REGISTERS] = { i0, i1, i2, i3, i4, i5 }; \
        double doubles[OUTLIVE_GO_FLOAT_REGISTERS] = { d0, d1, d2, d3, d4, d5, d6, d7 }; \
        outliveGoHandlerCalled(n, ints, doubles); \
    }
#define SLOTS10(t) SLOT(t##0) SLOT(t##1) SLOT(t##2) SLOT(t##3) SLOT(t##4) \
                   SLOT(t##5) SLOT(t##6) SLOT(t##7) SLOT(t##8) SLOT(t##9)
SLOTS10() SLOTS10(1) SLOTS10(2) SLOTS10(3) SLOTS10(4) SLOTS10(5) SLOTS10(6) SLOTS10(7) SLOTS10(8) SLOTS10(9)

#define ENTRY(n) (void (*)(void))outlive_go_slot_##n,
#define ENTRIES10(t) ENTRY(t##0) ENTRY(t##1) ENTRY(t##2) ENTRY(t##3) ENTRY(t##4) \
                     ENTRY(t##5) ENTRY(t##6) ENTRY(t##7) ENTRY(t##8) ENTRY(t##9)
static void (*const slots[OUTLIVE_GO_HANDLER_SLOTS])(void) = {
    ENTRIES10() ENTRIES10(1) ENTRIES10(2) ENTRIES10(3) ENTRIES10(4)
    ENTRIES10(5) ENTRIES10(6) ENTRIES10(7) ENTRIES10(8) ENTRIES10(9)
};

void (*outlive_go_handler_slot(int slot))(void) {
    return slot >= 0 && slot < OUTLIVE_GO_HANDLER_SLOTS ? slots[slot] : NULL;
}
