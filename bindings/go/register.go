package outlive

// #include "shim.h"
import "C"

import (
	"fmt"
	"runtime"
	"strings"
	"sync"
	"unsafe"
)

// HandlerFunc is a handler declared in Go. It runs on the thread that calls
// the handler: the loop's, for a task or a signal delivery. The Call is valid
// until it returns.
type HandlerFunc func(call *Call) error

// Call is one call of a Go handler: the values of its declared parameters.
type Call struct {
	name    string
	args    Args
	borrows []*Handler
}

// Name is the handler's registered name.
func (c *Call) Name() string { return c.name }

// Args are the declared parameters that have a value, in declared order (an
// absent optional ID or HANDLER is left out). Handlers in it are borrowed.
func (c *Call) Args() Args { return c.args }

// Has tells whether the parameter has a value (false for an absent optional one).
func (c *Call) Has(name string) bool { _, ok := c.args.Get(name); return ok }

// String is an ID parameter's bytes as text.
func (c *Call) String(name string) string { return c.args.String(name) }

// ID is an ID parameter (its bytes are a copy).
func (c *Call) ID(name string) (ID, bool) { v, _ := c.args.Get(name); id, ok := v.(ID); return id, ok }

// Bool, Int32, Double, Int64 and Uint64 read a primitive parameter (the zero value when not declared).
func (c *Call) Bool(name string) bool      { v, _ := c.args.Get(name); b, _ := v.(bool); return b }
func (c *Call) Int32(name string) int32    { v, _ := c.args.Get(name); i, _ := v.(int32); return i }
func (c *Call) Double(name string) float64 { v, _ := c.args.Get(name); d, _ := v.(float64); return d }
func (c *Call) Int64(name string) int64    { v, _ := c.args.Get(name); i, _ := v.(int64); return i }
func (c *Call) Uint64(name string) uint64  { v, _ := c.args.Get(name); u, _ := v.(uint64); return u }

// Handler is a HANDLER parameter, borrowed: call it now, or Copy it to keep it
// past the return of the handler function. nil when absent.
func (c *Call) Handler(name string) *Handler {
	v, _ := c.args.Get(name)
	h, _ := v.(*Handler)
	return h
}

type parameter struct {
	name string
	kind Type
}

type registration struct {
	name   string
	params []parameter
	fn     HandlerFunc
	// completes: the signature did not declare `completion`, so the binding
	// appended an optional one and ends a task's attempt with fn's result.
	completes bool
}

// The trampolines of shim.c, one per registered name. A slot stays with its
// name for the life of the process (re-registering the name reuses it), so a
// call under way during an unregistration never reaches another function.
var registry struct {
	sync.RWMutex
	slots  [C.OUTLIVE_GO_HANDLER_SLOTS]*registration
	byName map[string]int
	used   int
}

var kinds = map[string]Type{"ID": TypeID, "HANDLER": TypeHandler, "BOOL": TypeBool, "INT": TypeInt,
	"DOUBLE": TypeDouble, "INTEGER": TypeInteger, "UINTEGER": TypeUInteger}

// parseSignature reads the types and names of a signature; the library checks
// the rest of the grammar when the signature is registered.
func parseSignature(signature string) ([]parameter, error) {
	var params []parameter
	if strings.TrimSpace(signature) == "" {
		return nil, nil
	}
	for _, item := range strings.Split(signature, ",") {
		fields := strings.Fields(item)
		if len(fields) != 2 {
			return nil, fmt.Errorf("parameter %q is not `TYPE name`", strings.TrimSpace(item))
		}
		kind := fields[0]
		if i := strings.IndexAny(kind, "<?"); i >= 0 {
			kind = kind[:i]
		}
		t, ok := kinds[kind]
		if !ok {
			return nil, fmt.Errorf("parameter %q: unknown type %q", fields[1], kind)
		}
		params = append(params, parameter{fields[1], t})
	}
	return params, nil
}

// RegisterHandler declares fn as the handler `name` in this process, with the
// parameters of signature (the grammar of include/outlive.h: "ID file, INTEGER
// attempt"). From then on a handler value naming it — made in Go, C, Python or
// any language, in this process or stored by another — runs fn when called here.
// A second registration of a name replaces the first.
//
// When the signature does not declare `completion`, an optional
// `HANDLER? completion` is added: run as a task, fn's returned error ends the
// attempt (nil: success; an error: failure, its text the task's last error).
// A handler that declares completion ends the attempt itself by calling it,
// from any goroutine, with success (bool) and optionally error (string).
// Elsewhere fn's error goes to the function set with OnHandlerError; a panic
// in fn is recovered and handled as an error.
//
// Trade-off: a Go program cannot well export the descriptor symbol C handlers
// use (outlive_handler__NAME, found with dlsym), so Go handlers are registered
// at run time, with outlive_handler_register and one of a fixed set of C
// trampolines (OUTLIVE_GO_HANDLER_SLOTS names per process). The trampolines
// read parameters from the argument registers of the x86-64 System V and
// AArch64 calling conventions: a signature may have at most 6 parameters of
// integer class (ID, HANDLER, BOOL, INT, INTEGER, UINTEGER, the added
// completion included) and 8 DOUBLE parameters. A process must register its
// handlers before it dispatches the loop of a store that holds tasks or
// consumers naming them, or those wait for a process that resolves them.
func RegisterHandler(name, signature string, fn HandlerFunc) error {
	const op = "outlive_handler_register"
	if fn == nil {
		return invalid(op, "a nil handler function")
	}
	if runtime.GOARCH != "amd64" && runtime.GOARCH != "arm64" {
		return invalid(op, "Go handlers need the amd64 or arm64 calling convention, not %s", runtime.GOARCH)
	}
	params, err := parseSignature(signature)
	if err != nil {
		return invalid(op, "signature %q: %v", signature, err)
	}
	reg := &registration{name: name, params: params, fn: fn, completes: true}
	for _, p := range params {
		if p.name == "completion" {
			reg.completes = false
		}
	}
	if reg.completes {
		if strings.TrimSpace(signature) != "" {
			signature += ", "
		}
		signature += "HANDLER? completion"
		reg.params = append(reg.params, parameter{"completion", TypeHandler})
	}
	ints, doubles := 0, 0
	for _, p := range reg.params {
		if p.kind == TypeDouble {
			doubles++
		} else {
			ints++
		}
	}
	if ints > C.OUTLIVE_GO_INT_REGISTERS || doubles > C.OUTLIVE_GO_FLOAT_REGISTERS {
		return invalid(op, "signature %q: a Go handler takes at most %d non-DOUBLE parameters (completion included) and %d DOUBLE ones",
			signature, C.OUTLIVE_GO_INT_REGISTERS, C.OUTLIVE_GO_FLOAT_REGISTERS)
	}

	var strs cStrings
	defer strs.free()
	cName, ok1 := strs.of(name)
	cSignature, ok2 := strs.of(signature)
	if !ok1 || !ok2 {
		return invalid(op, "a NUL byte in the name or signature")
	}

	registry.Lock()
	defer registry.Unlock()
	if registry.byName == nil {
		registry.byName = map[string]int{}
	}
	slot, known := registry.byName[name]
	if !known {
		if registry.used == C.OUTLIVE_GO_HANDLER_SLOTS {
			return &Error{Op: op, Status: StatusLimit, Message: fmt.Sprintf("a process can register %d Go handler names", C.OUTLIVE_GO_HANDLER_SLOTS)}
		}
		slot = registry.used
	}
	previous := registry.slots[slot]
	registry.slots[slot] = reg
	err = check(op, func() C.outlive_status {
		return C.outlive_handler_register(cName, cSignature, C.outlive_go_handler_slot(C.int(slot)))
	})
	if err != nil {
		registry.slots[slot] = previous
		return err
	}
	if !known {
		registry.byName[name] = slot
		registry.used++
	}
	return nil
}

// UnregisterHandler removes a registration; calls under way finish.
// StatusNotFound: the name is not registered.
func UnregisterHandler(name string) error {
	const op = "outlive_handler_unregister"
	var strs cStrings
	defer strs.free()
	cName, ok := strs.of(name)
	if !ok {
		return invalid(op, "a NUL byte in the name")
	}
	return check(op, func() C.outlive_status { return C.outlive_handler_unregister(cName) })
}

var handlerErrors struct {
	sync.Mutex
	fn func(name string, err error)
}

// OnHandlerError sets the function that receives the error (or recovered
// panic) of a Go handler that had no completion to report it to: one called
// directly rather than as a task. nil drops them (the default: the library
// prints nothing, nor does the binding). It may run on any thread.
func OnHandlerError(fn func(name string, err error)) {
	handlerErrors.Lock()
	handlerErrors.fn = fn
	handlerErrors.Unlock()
}

func reportHandlerError(name string, err error) {
	handlerErrors.Lock()
	fn := handlerErrors.fn
	handlerErrors.Unlock()
	if fn != nil {
		fn(name, err)
	}
}

//export outliveGoHandlerCalled
func outliveGoHandlerCalled(slot C.int, ints *C.uint64_t, doubles *C.double) {
	registry.RLock()
	reg := registry.slots[int(slot)]
	registry.RUnlock()
	if reg == nil {
		return
	}
	intValues := (*[C.OUTLIVE_GO_INT_REGISTERS]C.uint64_t)(unsafe.Pointer(ints))
	doubleValues := (*[C.OUTLIVE_GO_FLOAT_REGISTERS]C.double)(unsafe.Pointer(doubles))
	call := &Call{name: reg.name}
	var completion *C.outlive_handler
	i, d := 0, 0
	for _, p := range reg.params {
		if p.kind == TypeDouble {
			call.args = append(call.args, Arg{p.name, float64(doubleValues[d])})
			d++
			continue
		}
		raw := uint64(intValues[i])
		i++
		switch p.kind {
		case TypeID:
			if object := C.outlive_go_object(C.uint64_t(raw)); object != nil {
				call.args = append(call.args, Arg{p.name, objectValue(object)})
			}
		case TypeHandler:
			view := C.outlive_go_handler(C.uint64_t(raw))
			if reg.completes && p.name == "completion" {
				completion = view // the binding's own: fn does not see it
			} else if view != nil {
				h := &Handler{ptr: view, borrowed: true}
				call.borrows = append(call.borrows, h)
				call.args = append(call.args, Arg{p.name, h})
			}
		case TypeBool:
			call.args = append(call.args, Arg{p.name, raw&0xff != 0})
		case TypeInt:
			call.args = append(call.args, Arg{p.name, int32(uint32(raw))})
		case TypeInteger:
			call.args = append(call.args, Arg{p.name, int64(raw)})
		case TypeUInteger:
			call.args = append(call.args, Arg{p.name, raw})
		}
	}
	err := runHandler(reg.fn, call)
	for _, h := range call.borrows {
		h.ptr = nil // a borrowed view ends with the call
	}
	if completion == nil {
		if err != nil {
			reportHandlerError(reg.name, err)
		}
		return
	}
	outcome := Args{{"success", err == nil}}
	if err != nil {
		outcome = append(outcome, Arg{"error", err.Error()})
	}
	view := &Handler{ptr: completion, borrowed: true}
	if cerr := view.Call(outcome); cerr != nil {
		reportHandlerError(reg.name, fmt.Errorf("ending the task's attempt: %w", cerr))
	}
}

func runHandler(fn HandlerFunc, call *Call) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v", r)
		}
	}()
	return fn(call)
}
