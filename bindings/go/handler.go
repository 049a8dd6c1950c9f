package outlive

// #include "shim.h"
import "C"

import (
	"runtime"
	"unsafe"
)

// Handler is a serializable callback value: the name of a declared handler,
// bound arguments, an optional invalidation handler's name and an invalidated
// flag. Free it with Free (a finalizer frees one that is forgotten).
//
// A Handler a Go handler function receives as a parameter (Call.Handler) is
// borrowed: valid until that function returns; Copy it to keep it.
type Handler struct {
	ptr      *C.outlive_handler
	borrowed bool
}

func ownedHandler(ptr *C.outlive_handler) *Handler {
	h := &Handler{ptr: ptr}
	runtime.SetFinalizer(h, (*Handler).Free)
	return h
}

// NewHandler makes a handler value naming name, with a copy of bound as its
// bound arguments. The name need not resolve in this process.
func NewHandler(name string, bound Args) (*Handler, error) {
	return NewHandlerWithInvalidation(name, "", bound)
}

// NewHandlerWithInvalidation is NewHandler with the name of an invalidation
// handler ("": none), called by Invalidate with the merged arguments.
func NewHandlerWithInvalidation(name, invalidation string, bound Args) (*Handler, error) {
	const op = "outlive_handler_new"
	var strings cStrings
	defer strings.free()
	cName, ok1 := strings.of(name)
	cInvalidation, ok2 := strings.optional(invalidation)
	if !ok1 || !ok2 {
		return nil, invalid(op, "a NUL byte in a handler name")
	}
	args, err := bound.toC(op)
	if err != nil {
		return nil, err
	}
	defer C.outlive_args_free(args)
	var h *C.outlive_handler
	if err := check(op, func() C.outlive_status { return C.outlive_handler_new(cName, cInvalidation, args, &h) }); err != nil {
		return nil, err
	}
	return ownedHandler(h), nil
}

func copyHandler(view *C.outlive_handler) (*Handler, error) {
	var h *C.outlive_handler
	if err := check("outlive_handler_copy", func() C.outlive_status { return C.outlive_handler_copy(view, &h) }); err != nil {
		return nil, err
	}
	return ownedHandler(h), nil
}

func (h *Handler) valid(op string) error {
	if h == nil || h.ptr == nil {
		return &Error{Op: op, Status: StatusInvalidArgument, Message: "a nil, freed or expired handler"}
	}
	return nil
}

// Free frees an owned handler; it does nothing for a borrowed one or a second time.
func (h *Handler) Free() {
	if h == nil || h.ptr == nil || h.borrowed {
		return
	}
	C.outlive_handler_free(h.ptr)
	h.ptr = nil
	runtime.SetFinalizer(h, nil)
}

// Copy is an independent, owned copy (invalidated state included).
func (h *Handler) Copy() (*Handler, error) {
	if err := h.valid("outlive_handler_copy"); err != nil {
		return nil, err
	}
	defer runtime.KeepAlive(h)
	return copyHandler(h.ptr)
}

// Bind binds copies of more (later wins on equal names).
func (h *Handler) Bind(more Args) error {
	const op = "outlive_handler_bind"
	if err := h.valid(op); err != nil {
		return err
	}
	defer runtime.KeepAlive(h)
	args, err := more.toC(op)
	if err != nil {
		return err
	}
	defer C.outlive_args_free(args)
	if args == nil {
		return nil
	}
	return check(op, func() C.outlive_status { return C.outlive_handler_bind(h.ptr, args) })
}

// Call calls the handler on this goroutine's thread with its bound arguments
// merged with callArgs (call-time wins) and returns when it has returned.
func (h *Handler) Call(callArgs Args) error {
	const op = "outlive_handler_call"
	if err := h.valid(op); err != nil {
		return err
	}
	defer runtime.KeepAlive(h)
	args, err := callArgs.toC(op)
	if err != nil {
		return err
	}
	defer C.outlive_args_free(args)
	return check(op, func() C.outlive_status { return C.outlive_handler_call(h.ptr, args) })
}

// Invalidate calls the invalidation handler (if any) with the merged
// arguments, then marks the handler invalidated; on failure it stays valid.
func (h *Handler) Invalidate(callArgs Args) error {
	const op = "outlive_handler_invalidate"
	if err := h.valid(op); err != nil {
		return err
	}
	defer runtime.KeepAlive(h)
	args, err := callArgs.toC(op)
	if err != nil {
		return err
	}
	defer C.outlive_args_free(args)
	return check(op, func() C.outlive_status { return C.outlive_handler_invalidate(h.ptr, args) })
}

// IsInvalidated tells whether the handler was invalidated.
func (h *Handler) IsInvalidated() bool {
	defer runtime.KeepAlive(h)
	return h != nil && h.ptr != nil && bool(C.outlive_handler_is_invalidated(h.ptr))
}

// Name is the handler's name.
func (h *Handler) Name() string {
	if h == nil || h.ptr == nil {
		return ""
	}
	defer runtime.KeepAlive(h)
	return C.GoString(C.outlive_handler_name(h.ptr))
}

// InvalidationName is the invalidation handler's name, "" when none.
func (h *Handler) InvalidationName() string {
	if h == nil || h.ptr == nil {
		return ""
	}
	defer runtime.KeepAlive(h)
	name, _ := goString(C.outlive_handler_invalidation_name(h.ptr))
	return name
}

// Description is a one-line text for logs (not a format to parse).
func (h *Handler) Description() string {
	if h == nil || h.ptr == nil {
		return ""
	}
	defer runtime.KeepAlive(h)
	text, _ := goString(C.outlive_handler_description(h.ptr))
	return text
}

// Bound is a copy of the bound arguments.
func (h *Handler) Bound() (Args, error) {
	const op = "outlive_handler_bound"
	if err := h.valid(op); err != nil {
		return nil, err
	}
	defer runtime.KeepAlive(h)
	var args *C.outlive_args
	if err := check(op, func() C.outlive_status { return C.outlive_handler_bound(h.ptr, &args) }); err != nil {
		return nil, err
	}
	defer C.outlive_args_free(args)
	return argsFromC(op, args)
}

// Serialize encodes the handler value in the language-neutral format of
// docs/FORMAT.md: any process, in any language, can decode and call it.
func (h *Handler) Serialize() ([]byte, error) {
	const op = "outlive_handler_serialize"
	if err := h.valid(op); err != nil {
		return nil, err
	}
	defer runtime.KeepAlive(h)
	var bytes unsafe.Pointer
	var size C.size_t
	if err := check(op, func() C.outlive_status { return C.outlive_handler_serialize(h.ptr, &bytes, &size) }); err != nil {
		return nil, err
	}
	defer C.outlive_free(bytes)
	return C.GoBytes(bytes, C.int(size)), nil
}

// DeserializeHandler decodes bytes made by Serialize (in any language);
// StatusCorrupt when they do not decode.
func DeserializeHandler(data []byte) (*Handler, error) {
	var h *C.outlive_handler
	err := check("outlive_handler_deserialize", func() C.outlive_status {
		return C.outlive_handler_deserialize(bytesPointer(data), C.size_t(len(data)), &h)
	})
	if err != nil {
		return nil, err
	}
	return ownedHandler(h), nil
}

// Resolves tells whether a handler of that name is declared in this process now.
func Resolves(name string) bool {
	var strings cStrings
	defer strings.free()
	cName, ok := strings.of(name)
	return ok && C.outlive_handler_resolve(cName) == C.OUTLIVE_OK
}

// LoadHandlerLibrary loads a shared library whose C-declared handlers become
// resolvable; the path must contain a '/'.
func LoadHandlerLibrary(path string) error {
	const op = "outlive_handler_library_load"
	var strings cStrings
	defer strings.free()
	cPath, ok := strings.of(path)
	if !ok {
		return invalid(op, "a NUL byte in the path")
	}
	return check(op, func() C.outlive_status { return C.outlive_handler_library_load(cPath) })
}
