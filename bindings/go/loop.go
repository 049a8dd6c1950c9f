package outlive

// #include "shim.h"
import "C"

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// Loop is where callbacks run: key-value observers, presenters, response
// handlers, task runs and signal deliveries all run inside Dispatch, on the OS
// thread that calls it, and the Go functions they call run on the goroutine
// that called Dispatch.
//
// The loop-thread rule: dispatch a loop from one goroutine at a time, locked to
// its OS thread (runtime.LockOSThread) — Serve does both — and close a store
// on that goroutine, or when its loop is not being dispatched.
//
// A panic in a callback must not unwind through the library's C frames (it
// would skip their cleanup), so the binding recovers it in the callback and
// panics again, with the same value, from Dispatch (or Serve) once the C call
// has returned. On a loop that runs on the library's thread (RunThread) there
// is no Go caller to give it to: the panic ends the program there, as an
// unrecovered panic of a goroutine does.
type Loop struct {
	ptr      *C.outlive_loop
	owned    bool // false for a store's own loop, which the store frees
	threaded int32
	mu       sync.Mutex
	pending  []any // panics recovered in callbacks, for Dispatch to raise
}

// guard runs a callback of this loop, keeping a panic for Dispatch.
func (l *Loop) guard(callback func()) {
	if atomic.LoadInt32(&l.threaded) != 0 {
		callback()
		return
	}
	defer func() {
		if r := recover(); r != nil {
			l.mu.Lock()
			l.pending = append(l.pending, r)
			l.mu.Unlock()
		}
	}()
	callback()
}

// raisePending panics with the first panic a callback kept, if any.
func (l *Loop) raisePending() {
	l.mu.Lock()
	var r any
	if len(l.pending) > 0 {
		r, l.pending = l.pending[0], l.pending[1:]
	}
	l.mu.Unlock()
	if r != nil {
		panic(r)
	}
}

// NewLoop creates a loop; Free it when no store uses it any more.
func NewLoop() (*Loop, error) {
	var loop *C.outlive_loop
	if err := check("outlive_loop_new", func() C.outlive_status { return C.outlive_loop_new(&loop) }); err != nil {
		return nil, err
	}
	return &Loop{ptr: loop, owned: true}, nil
}

// Free releases a loop made by NewLoop (a store's own loop is freed with its
// store: Free does nothing then). Stores opened on it keep it alive until they
// are closed, but nothing is dispatched after this call.
func (l *Loop) Free() {
	if l == nil || !l.owned || l.ptr == nil {
		return
	}
	C.outlive_loop_free(l.ptr)
	l.ptr = nil
}

// Fd is the descriptor that becomes readable when work is due, for a host
// that has its own poller. Owned by the loop.
func (l *Loop) Fd() int { return int(C.outlive_loop_fd(l.ptr)) }

// Dispatch waits up to timeout for work (0: does not wait; negative: waits
// until work is due) and runs every due callback on the calling thread. A
// goroutine that dispatches should be locked to its OS thread.
func (l *Loop) Dispatch(timeout time.Duration) error {
	ms := C.int(-1)
	if timeout >= 0 {
		ms = C.int(timeout / time.Millisecond)
	}
	err := check("outlive_loop_dispatch", func() C.outlive_status { return C.outlive_loop_dispatch(l.ptr, ms) })
	l.raisePending()
	return err
}

// RunThread hands the loop to a thread the library owns: callbacks run there
// from then on (Go callbacks too: cgo runs them on that foreign thread), and
// Dispatch and Serve fail with StatusState.
func (l *Loop) RunThread() error {
	atomic.StoreInt32(&l.threaded, 1) // before the thread starts: its callbacks see it
	err := check("outlive_loop_run_thread", func() C.outlive_status { return C.outlive_loop_run_thread(l.ptr) })
	if err != nil {
		atomic.StoreInt32(&l.threaded, 0)
	}
	return err
}

// Serve dispatches the loop on the calling goroutine, locked to its OS thread,
// until ctx is done; it returns ctx.Err() then, or the first failing
// dispatch's error. It sleeps in poll(2) on the loop's descriptor and a pipe
// that ctx's end writes to: an idle loop costs no wake-ups. Run it as
// `go loop.Serve(ctx)`, or on the main goroutine of a service, and close the
// stores of the loop after it returns.
func (l *Loop) Serve(ctx context.Context) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var pipe [2]int
	if err := syscall.Pipe2(pipe[:], syscall.O_CLOEXEC|syscall.O_NONBLOCK); err != nil {
		return &Error{Op: "pipe2", Status: StatusIO, Message: err.Error()}
	}
	defer syscall.Close(pipe[0])
	stopped := make(chan struct{})
	defer close(stopped)
	go func() {
		select {
		case <-ctx.Done():
			syscall.Write(pipe[1], []byte{1})
		case <-stopped:
		}
		syscall.Close(pipe[1])
	}()
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := l.Dispatch(0); err != nil {
			return err
		}
		switch C.outlive_go_wait(C.outlive_loop_fd(l.ptr), C.int(pipe[0])) {
		case 1:
			return ctx.Err()
		case -1:
			return &Error{Op: "poll", Status: StatusIO, Message: "poll on the loop's descriptor failed"}
		}
	}
}
