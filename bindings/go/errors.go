package outlive

// #include "shim.h"
import "C"

import (
	"errors"
	"fmt"
	"runtime"
)

// Status is the library's outlive_status. A Status is also an error value to
// match with errors.Is: errors.Is(err, outlive.StatusNotFound).
type Status int

// The statuses of include/outlive.h, same numbers.
const (
	StatusOK              Status = C.OUTLIVE_OK
	StatusInvalidArgument Status = C.OUTLIVE_E_INVALID_ARGUMENT
	StatusNotFound        Status = C.OUTLIVE_E_NOT_FOUND
	StatusUnresolved      Status = C.OUTLIVE_E_UNRESOLVED
	StatusTypeMismatch    Status = C.OUTLIVE_E_TYPE_MISMATCH
	StatusMissingArgument Status = C.OUTLIVE_E_MISSING_ARGUMENT
	StatusInvalidated     Status = C.OUTLIVE_E_INVALIDATED
	StatusCorrupt         Status = C.OUTLIVE_E_CORRUPT
	StatusIO              Status = C.OUTLIVE_E_IO
	StatusBusy            Status = C.OUTLIVE_E_BUSY
	StatusPermission      Status = C.OUTLIVE_E_PERMISSION
	StatusState           Status = C.OUTLIVE_E_STATE
	StatusVersion         Status = C.OUTLIVE_E_VERSION
	StatusNoMemory        Status = C.OUTLIVE_E_NO_MEMORY
	StatusLimit           Status = C.OUTLIVE_E_LIMIT
)

// String is the status's C name, "OUTLIVE_E_NOT_FOUND".
func (s Status) String() string { return C.GoString(C.outlive_status_name(C.outlive_status(s))) }

// Error makes a Status usable as a sentinel for errors.Is.
func (s Status) Error() string { return s.String() }

// Error is a failed call: the operation, its status and the library's message
// (outlive_last_error, read on the thread that made the call).
type Error struct {
	Op      string // the C function, "outlive_kv_get"
	Status  Status
	Message string
}

func (e *Error) Error() string { return fmt.Sprintf("%s: %s: %s", e.Op, e.Status, e.Message) }

// Is matches a Status: errors.Is(err, outlive.StatusNotFound).
func (e *Error) Is(target error) bool {
	status, ok := target.(Status)
	return ok && status == e.Status
}

// StatusOf is the status an error carries: StatusOK for nil, StatusInvalidArgument
// for an error that is not the library's.
func StatusOf(err error) Status {
	if err == nil {
		return StatusOK
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Status
	}
	return StatusInvalidArgument
}

// check makes a C call and, when it fails, reads outlive_last_error on the
// same OS thread: the message is thread-local in C, and a goroutine may move
// between threads between two cgo calls unless it is locked to one.
func check(op string, call func() C.outlive_status) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	status := call()
	if status == C.OUTLIVE_OK {
		return nil
	}
	return &Error{Op: op, Status: Status(status), Message: C.GoString(C.outlive_last_error())}
}

// invalid is an error found by the binding before calling C.
func invalid(op, format string, args ...any) error {
	return &Error{Op: op, Status: StatusInvalidArgument, Message: fmt.Sprintf(format, args...)}
}

// closedStore is the error of a call on a closed Store.
func closedStore(op string) error {
	return &Error{Op: op, Status: StatusState, Message: "the store is closed"}
}

// Version is the library's version, "0.2.0".
func Version() string { return C.GoString(C.outlive_version()) }
