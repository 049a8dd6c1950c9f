/* The C side of the Go binding: wrappers that pass a cgo.Handle (an integer)
 * as a callback's context, and the trampolines that call back into Go. Go
 * memory is never stored by the library: contexts are handles. */
#ifndef OUTLIVE_GO_SHIM_H
#define OUTLIVE_GO_SHIM_H

#include <stdint.h>
#include <stdlib.h>
#include "outlive.h"

/* How many distinct handler names a Go process can register (each gets a
 * C trampoline of its own). */
#define OUTLIVE_GO_HANDLER_SLOTS 100
/* The registers a trampoline reads (x86-64 SysV: 6 integer, 8 vector; AArch64: 8 and 8). */
#define OUTLIVE_GO_INT_REGISTERS 6
#define OUTLIVE_GO_FLOAT_REGISTERS 8

/* The function pointer to register for slot (0 <= slot < OUTLIVE_GO_HANDLER_SLOTS). */
void (*outlive_go_handler_slot(int slot))(void);

outlive_status outlive_go_kv_observe(outlive_store *store, const char *prefix, uintptr_t handle, uint64_t *out_token);
outlive_status outlive_go_kv_update(outlive_store *store, const char *key, uintptr_t handle);
outlive_status outlive_go_presenter_add(outlive_store *store, const char *id, uintptr_t handle, int with_end);
outlive_status outlive_go_response_handler_add(outlive_store *store, const char *id, uintptr_t handle);

/* Waits until the loop's descriptor or wake_fd is readable (poll, retried on
 * EINTR). Returns 1 when wake_fd is readable, 0 when the loop is, -1 on error. */
int outlive_go_wait(int loop_fd, int wake_fd);

/* A pointer passed as an integer by a trampoline, back to its type. */
static inline const outlive_object *outlive_go_object(uint64_t raw) { return (const outlive_object *)(uintptr_t)raw; }
static inline outlive_handler *outlive_go_handler(uint64_t raw) { return (outlive_handler *)(uintptr_t)raw; }

#endif
