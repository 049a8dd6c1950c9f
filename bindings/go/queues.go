package outlive

// #include "shim.h"
import "C"

import (
	"runtime"
	"time"
)

// QueueKind is how a named queue runs its tasks.
type QueueKind int

const (
	// QueueOrdered: one runner at a time across all processes, tasks started
	// in priority order, then order of addition.
	QueueOrdered QueueKind = C.OUTLIVE_QUEUE_ORDERED
	// QueueParallel: every serving handle runs up to its own limit at once.
	QueueParallel QueueKind = C.OUTLIVE_QUEUE_PARALLEL
)

// EnqueueOptions say how Enqueue adds a task; the zero value is every
// default (queue "default", priority 0, due now, no unique key).
type EnqueueOptions struct {
	Queue     string        // a declared queue; "": "default"
	Priority  int32         // higher starts first
	DueAt     time.Time     // zero: due now (not with Delay)
	Delay     time.Duration // 0: due now (not with DueAt)
	UniqueKey string        // "": none; else at most one pending or running task of the queue holds it
}

// DeclareQueue declares the queue name of kind for every process of the
// store; declaring it again with the same kind does nothing, with the other
// kind is StatusState.
func (t Tasks) DeclareQueue(name string, kind QueueKind) error {
	const op = "outlive_queue_declare"
	store, err := t.s.handle(op)
	if err != nil {
		return err
	}
	var strs cStrings
	defer strs.free()
	cname, ok := strs.of(name)
	if !ok {
		return invalid(op, "a NUL byte in the queue name")
	}
	return check(op, func() C.outlive_status {
		return C.outlive_queue_declare(store, cname, C.outlive_queue_kind(kind))
	})
}

// ServeQueue makes this handle run the declared queue name, at most limit
// (1 to 1024) of its tasks at once; 0 stops serving it. Per handle, not stored.
func (t Tasks) ServeQueue(name string, limit int) error {
	const op = "outlive_queue_serve"
	store, err := t.s.handle(op)
	if err != nil {
		return err
	}
	if limit < 0 {
		return invalid(op, "a negative limit")
	}
	var strs cStrings
	defer strs.free()
	cname, ok := strs.of(name)
	if !ok {
		return invalid(op, "a NUL byte in the queue name")
	}
	return check(op, func() C.outlive_status { return C.outlive_queue_serve(store, cname, C.size_t(limit)) })
}

// Enqueue adds a task that calls work (copied) as opts say (nil: defaults).
// It returns the task's id and false; or, when opts.UniqueKey is held by a
// pending or running task of the queue, that task's id and true (nothing added).
func (t Tasks) Enqueue(work *Handler, opts *EnqueueOptions) (id string, existing bool, err error) {
	const op = "outlive_task_enqueue"
	store, err := t.s.handle(op)
	if err != nil {
		return "", false, err
	}
	if err := work.valid(op); err != nil {
		return "", false, err
	}
	var strs cStrings
	defer strs.free()
	raw := C.outlive_task_options{version: C.OUTLIVE_TASK_OPTIONS_VERSION}
	if opts != nil {
		var ok bool
		if raw.queue, ok = strs.optional(opts.Queue); !ok {
			return "", false, invalid(op, "a NUL byte in the queue name")
		}
		if raw.unique_key, ok = strs.optional(opts.UniqueKey); !ok {
			return "", false, invalid(op, "a NUL byte in the unique key")
		}
		raw.priority = C.int32_t(opts.Priority)
		if !opts.DueAt.IsZero() {
			raw.due_at = C.double(float64(opts.DueAt.UnixNano()) / 1e9)
		}
		raw.delay_seconds = C.double(opts.Delay.Seconds())
	}
	var buffer [C.OUTLIVE_ID_SIZE]C.char
	var found C.bool
	err = check(op, func() C.outlive_status {
		return C.outlive_task_enqueue(store, work.ptr, &raw, &buffer[0], &found)
	})
	runtime.KeepAlive(work)
	if err != nil {
		return "", false, err
	}
	return idString(&buffer), bool(found), nil
}

// Cancel cancels a task from any process: a pending one is removed and never
// runs (running false); a running one is marked (running true), its handler
// learns it from IsCancelled, and its attempt's end removes it as cancelled.
// StatusNotFound: no such task (any more); StatusState: dead, or cancelled already.
func (t Tasks) Cancel(taskID string) (running bool, err error) {
	return t.askAboutTask("outlive_task_cancel", taskID, func(store *C.outlive_store, id *C.char, out *C.bool) C.outlive_status {
		return C.outlive_task_cancel(store, id, out)
	})
}

// IsCancelled says whether the running task taskID was cancelled: what its
// handler asks between steps of long work. StatusNotFound: the task is gone.
func (t Tasks) IsCancelled(taskID string) (bool, error) {
	return t.askAboutTask("outlive_task_is_cancelled", taskID, func(store *C.outlive_store, id *C.char, out *C.bool) C.outlive_status {
		return C.outlive_task_is_cancelled(store, id, out)
	})
}

// askAboutTask makes a call op that takes a task id and answers a bool.
func (t Tasks) askAboutTask(op, taskID string, call func(*C.outlive_store, *C.char, *C.bool) C.outlive_status) (bool, error) {
	store, err := t.s.handle(op)
	if err != nil {
		return false, err
	}
	var strs cStrings
	defer strs.free()
	cid, ok := strs.of(taskID)
	if !ok {
		return false, invalid(op, "a NUL byte in the task id")
	}
	var out C.bool
	err = check(op, func() C.outlive_status { return call(store, cid, &out) })
	return bool(out), err
}
