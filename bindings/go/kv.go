package outlive

// #include "shim.h"
import "C"

import (
	"runtime/cgo"
	"unsafe"
)

// KV is the store's durable key-value map, shared by every process of the
// store. Each call is one transaction.
type KV struct{ s *Store }

// bytesPointer is the C view of a Go byte slice for the length of one call
// (it holds no Go pointers, so cgo allows passing it).
func bytesPointer(b []byte) unsafe.Pointer {
	if len(b) == 0 {
		return nil
	}
	return unsafe.Pointer(&b[0])
}

// Set stores value under key.
func (kv KV) Set(key string, value []byte) error {
	const op = "outlive_kv_set"
	store, err := kv.s.handle(op)
	if err != nil {
		return err
	}
	var strings cStrings
	defer strings.free()
	cKey, ok := strings.of(key)
	if !ok {
		return invalid(op, "a NUL byte in the key")
	}
	return check(op, func() C.outlive_status {
		return C.outlive_kv_set(store, cKey, bytesPointer(value), C.size_t(len(value)))
	})
}

// Get returns the value under key; StatusNotFound when there is none.
func (kv KV) Get(key string) ([]byte, error) {
	const op = "outlive_kv_get"
	store, err := kv.s.handle(op)
	if err != nil {
		return nil, err
	}
	var strings cStrings
	defer strings.free()
	cKey, ok := strings.of(key)
	if !ok {
		return nil, invalid(op, "a NUL byte in the key")
	}
	var bytes unsafe.Pointer
	var size C.size_t
	if err := check(op, func() C.outlive_status { return C.outlive_kv_get(store, cKey, &bytes, &size) }); err != nil {
		return nil, err
	}
	defer C.outlive_free(bytes)
	return C.GoBytes(bytes, C.int(size)), nil
}

// Delete removes key; StatusNotFound when there was no value under it.
func (kv KV) Delete(key string) error {
	const op = "outlive_kv_delete"
	store, err := kv.s.handle(op)
	if err != nil {
		return err
	}
	var strings cStrings
	defer strings.free()
	cKey, ok := strings.of(key)
	if !ok {
		return invalid(op, "a NUL byte in the key")
	}
	return check(op, func() C.outlive_status { return C.outlive_kv_delete(store, cKey) })
}

// Count is how many keys start with prefix ("" counts all).
func (kv KV) Count(prefix string) (int, error) {
	const op = "outlive_kv_count"
	store, err := kv.s.handle(op)
	if err != nil {
		return 0, err
	}
	var strings cStrings
	defer strings.free()
	cPrefix, ok := strings.of(prefix)
	if !ok {
		return 0, invalid(op, "a NUL byte in the prefix")
	}
	var count C.size_t
	err = check(op, func() C.outlive_status { return C.outlive_kv_count(store, cPrefix, &count) })
	return int(count), err
}

// Keys lists the keys under prefix in bytewise order, after the key `after`
// ("": from the first), at most limit of them (0: no limit). To page, pass the
// last key of one page as `after` of the next.
func (kv KV) Keys(prefix, after string, limit int) ([]string, error) {
	const op = "outlive_kv_key_list_new"
	store, err := kv.s.handle(op)
	if err != nil {
		return nil, err
	}
	if limit < 0 {
		return nil, invalid(op, "a negative limit")
	}
	var strings cStrings
	defer strings.free()
	cPrefix, ok1 := strings.of(prefix)
	cAfter, ok2 := strings.optional(after)
	if !ok1 || !ok2 {
		return nil, invalid(op, "a NUL byte in the prefix or after")
	}
	var list *C.outlive_kv_key_list
	err = check(op, func() C.outlive_status {
		return C.outlive_kv_key_list_new(store, cPrefix, cAfter, C.size_t(limit), &list)
	})
	if err != nil {
		return nil, err
	}
	defer C.outlive_kv_key_list_free(list)
	keys := make([]string, int(C.outlive_kv_key_list_count(list)))
	for i := range keys {
		keys[i] = C.GoString(C.outlive_kv_key_list_key(list, C.size_t(i)))
	}
	return keys, nil
}

// Observation is a registered observer; Cancel stops it.
type Observation struct {
	s     *Store
	token uint64
}

// Observe calls fn on the store's loop for each key under prefix ("": every
// key) that any process changes after this call: value is its value now,
// deleted is true when the key was removed. Several quick changes of a key may
// come as one call with the latest value. fn is released (its cgo.Handle
// deleted) when the observation is cancelled or the store closed.
func (kv KV) Observe(prefix string, fn func(key string, value []byte, deleted bool)) (*Observation, error) {
	const op = "outlive_kv_observe"
	store, err := kv.s.handle(op)
	if err != nil {
		return nil, err
	}
	if fn == nil {
		return nil, invalid(op, "a nil observer")
	}
	var strings cStrings
	defer strings.free()
	cPrefix, ok := strings.of(prefix)
	if !ok {
		return nil, invalid(op, "a NUL byte in the prefix")
	}
	handle := newHandle(&observer{kv.s.loop, fn})
	var token C.uint64_t
	err = check(op, func() C.outlive_status {
		return C.outlive_go_kv_observe(store, cPrefix, C.uintptr_t(handle), &token)
	})
	if err != nil {
		deleteHandle(handle) // a failed registration does not release: the context is still ours
		return nil, err
	}
	return &Observation{s: kv.s, token: uint64(token)}, nil
}

// Cancel stops the observer; called on the loop's goroutine, it is not called
// after this returns. StatusNotFound when it was cancelled already.
func (o *Observation) Cancel() error {
	const op = "outlive_kv_unobserve"
	store, err := o.s.handle(op)
	if err != nil {
		return err
	}
	return check(op, func() C.outlive_status { return C.outlive_kv_unobserve(store, C.uint64_t(o.token)) })
}

type observer struct {
	loop *Loop
	fn   func(string, []byte, bool)
}

//export outliveGoKvObserved
func outliveGoKvObserved(key *C.char, bytes unsafe.Pointer, size C.size_t, handle C.uintptr_t) {
	o := cgo.Handle(handle).Value().(*observer)
	o.loop.guard(func() {
		if bytes == nil {
			o.fn(C.GoString(key), nil, true)
			return
		}
		o.fn(C.GoString(key), C.GoBytes(bytes, C.int(size)), false)
	})
}

//export outliveGoRelease
func outliveGoRelease(handle C.uintptr_t) { deleteHandle(cgo.Handle(handle)) }

// Update is an atomic read-modify-write across processes: fn receives the
// current value (exists false when there is none) and returns the value to
// write, or remove true to delete the key, or an error to change nothing (Update
// returns that error). fn runs once, on the calling goroutine, while every
// writer of every process waits: keep it quick, and do not call the store in it.
func (kv KV) Update(key string, fn func(value []byte, exists bool) (newValue []byte, remove bool, err error)) error {
	const op = "outlive_kv_update"
	store, err := kv.s.handle(op)
	if err != nil {
		return err
	}
	var strings cStrings
	defer strings.free()
	cKey, ok := strings.of(key)
	if !ok {
		return invalid(op, "a NUL byte in the key")
	}
	state := &kvUpdate{fn: fn}
	handle := newHandle(state)
	defer deleteHandle(handle)
	err = check(op, func() C.outlive_status { return C.outlive_go_kv_update(store, cKey, C.uintptr_t(handle)) })
	if state.panicked != nil {
		panic(state.panicked) // now that the library's frames are gone
	}
	if state.err != nil {
		return state.err
	}
	return err
}

type kvUpdate struct {
	fn       func([]byte, bool) ([]byte, bool, error)
	err      error
	panicked any
}

//export outliveGoKvModify
func outliveGoKvModify(value *C.outlive_kv_value, handle C.uintptr_t) C.int {
	state := cgo.Handle(handle).Value().(*kvUpdate)
	var size C.size_t
	bytes := C.outlive_kv_value_bytes(value, &size)
	var current []byte
	if bytes != nil {
		current = C.GoBytes(bytes, C.int(size))
	}
	newValue, remove, err, panicked := func() (v []byte, remove bool, err error, panicked any) {
		defer func() { panicked = recover() }()
		v, remove, err = state.fn(current, bytes != nil)
		return
	}()
	if panicked != nil {
		state.panicked = panicked
		return C.OUTLIVE_E_STATE
	}
	if err != nil {
		state.err = err
		return C.OUTLIVE_E_STATE
	}
	if remove {
		return C.int(C.outlive_kv_value_delete(value))
	}
	return C.int(C.outlive_kv_value_set(value, bytesPointer(newValue), C.size_t(len(newValue))))
}
