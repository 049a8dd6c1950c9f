package outlive

// #include "shim.h"
import "C"

import (
	"fmt"
	"runtime"
)

// Type is an argument's type (outlive_type).
type Type int

// The seven argument types, and the Go type of each in Args:
//
//	TypeID        ID (or a string or []byte, converted to an untagged ID)
//	TypeHandler   *Handler
//	TypeBool      bool
//	TypeInt       int32
//	TypeDouble    float64
//	TypeInteger   int64 (or int, converted)
//	TypeUInteger  uint64
const (
	TypeID       Type = C.OUTLIVE_TYPE_ID
	TypeHandler  Type = C.OUTLIVE_TYPE_HANDLER
	TypeBool     Type = C.OUTLIVE_TYPE_BOOL
	TypeInt      Type = C.OUTLIVE_TYPE_INT
	TypeDouble   Type = C.OUTLIVE_TYPE_DOUBLE
	TypeInteger  Type = C.OUTLIVE_TYPE_INTEGER
	TypeUInteger Type = C.OUTLIVE_TYPE_UINTEGER
)

// ID is an ID value: bytes with an optional type tag ("xmpp.account").
type ID struct {
	Tag   string
	Bytes []byte
}

// String is the bytes as text.
func (id ID) String() string { return string(id.Bytes) }

// Arg is one named argument.
type Arg struct {
	Name  string
	Value any
}

// Args is an ordered set of named, typed values, a Go value (converted to the
// library's outlive_args for each call that takes one). The order is that of
// first insertion; names are unique.
type Args []Arg

// With returns args with name set to value (replacing a value of that name
// in place), for chaining: outlive.Args{}.With("file", "a.txt").With("size", int64(3)).
func (a Args) With(name string, value any) Args {
	for i := range a {
		if a[i].Name == name {
			out := append(Args(nil), a...)
			out[i].Value = value
			return out
		}
	}
	return append(append(Args(nil), a...), Arg{name, value})
}

// Get returns the value of name and whether there is one.
func (a Args) Get(name string) (any, bool) {
	for _, arg := range a {
		if arg.Name == name {
			return arg.Value, true
		}
	}
	return nil, false
}

// String is an ID argument's bytes as text ("" when absent or not an ID).
func (a Args) String(name string) string {
	value, _ := a.Get(name)
	switch v := value.(type) {
	case ID:
		return string(v.Bytes)
	case string:
		return v
	case []byte:
		return string(v)
	}
	return ""
}

// toC makes a new outlive_args of a (nil for an empty a), to free with
// outlive_args_free.
func (a Args) toC(op string) (*C.outlive_args, error) {
	if len(a) == 0 {
		return nil, nil
	}
	var args *C.outlive_args
	if err := check(op, func() C.outlive_status { return C.outlive_args_new(&args) }); err != nil {
		return nil, err
	}
	for _, arg := range a {
		if err := setArg(op, args, arg); err != nil {
			C.outlive_args_free(args)
			return nil, err
		}
		runtime.KeepAlive(arg.Value) // a *Handler's finalizer must not free it during the copy
	}
	return args, nil
}

func setArg(op string, args *C.outlive_args, arg Arg) error {
	var strings cStrings
	defer strings.free()
	name, ok := strings.of(arg.Name)
	if !ok {
		return invalid(op, "a NUL byte in the argument name %q", arg.Name)
	}
	setID := func(tag string, bytes []byte) error {
		cTag, ok := strings.optional(tag)
		if !ok {
			return invalid(op, "a NUL byte in the type tag of %q", arg.Name)
		}
		return check(op, func() C.outlive_status {
			return C.outlive_args_set_id(args, name, cTag, bytesPointer(bytes), C.size_t(len(bytes)))
		})
	}
	return func() error {
		switch v := arg.Value.(type) {
		case ID:
			return setID(v.Tag, v.Bytes)
		case string:
			return setID("", []byte(v))
		case []byte:
			return setID("", v)
		case *Handler:
			if v == nil || v.ptr == nil {
				return invalid(op, "argument %q: a nil or freed handler", arg.Name)
			}
			return check(op, func() C.outlive_status { return C.outlive_args_set_handler(args, name, v.ptr) })
		case bool:
			return check(op, func() C.outlive_status { return C.outlive_args_set_bool(args, name, C.bool(v)) })
		case int32:
			return check(op, func() C.outlive_status { return C.outlive_args_set_int(args, name, C.int32_t(v)) })
		case float64:
			return check(op, func() C.outlive_status { return C.outlive_args_set_double(args, name, C.double(v)) })
		case int64:
			return check(op, func() C.outlive_status { return C.outlive_args_set_integer(args, name, C.int64_t(v)) })
		case int:
			return check(op, func() C.outlive_status { return C.outlive_args_set_integer(args, name, C.int64_t(v)) })
		case uint64:
			return check(op, func() C.outlive_status { return C.outlive_args_set_uinteger(args, name, C.uint64_t(v)) })
		}
		return invalid(op, "argument %q: a %T is no argument type (ID, string, []byte, *Handler, bool, int32, float64, int64, int, uint64)", arg.Name, arg.Value)
	}()
}

// objectValue copies an ID the library hands out.
func objectValue(object *C.outlive_object) ID {
	var size C.size_t
	bytes := C.outlive_object_bytes(object, &size)
	tag, _ := goString(C.outlive_object_type(object))
	return ID{Tag: tag, Bytes: C.GoBytes(bytes, C.int(size))}
}

// argsFromC copies a library argument set into Go values; handlers are copied
// too (owned by the returned Args).
func argsFromC(op string, args *C.outlive_args) (Args, error) {
	count := int(C.outlive_args_count(args))
	out := make(Args, 0, count)
	for i := 0; i < count; i++ {
		cName := C.outlive_args_name_at(args, C.size_t(i))
		name := C.GoString(cName)
		var value any
		var err error
		switch Type(C.outlive_args_type_at(args, C.size_t(i))) {
		case TypeID:
			var object *C.outlive_object
			err = check(op, func() C.outlive_status { return C.outlive_args_get_id(args, cName, &object) })
			value = objectValue(object)
		case TypeHandler:
			var view *C.outlive_handler
			err = check(op, func() C.outlive_status { return C.outlive_args_get_handler(args, cName, &view) })
			if err == nil {
				value, err = copyHandler(view)
			}
		case TypeBool:
			var v C.bool
			err = check(op, func() C.outlive_status { return C.outlive_args_get_bool(args, cName, &v) })
			value = bool(v)
		case TypeInt:
			var v C.int32_t
			err = check(op, func() C.outlive_status { return C.outlive_args_get_int(args, cName, &v) })
			value = int32(v)
		case TypeDouble:
			var v C.double
			err = check(op, func() C.outlive_status { return C.outlive_args_get_double(args, cName, &v) })
			value = float64(v)
		case TypeInteger:
			var v C.int64_t
			err = check(op, func() C.outlive_status { return C.outlive_args_get_integer(args, cName, &v) })
			value = int64(v)
		case TypeUInteger:
			var v C.uint64_t
			err = check(op, func() C.outlive_status { return C.outlive_args_get_uinteger(args, cName, &v) })
			value = uint64(v)
		default:
			err = fmt.Errorf("%s: argument %q has an unknown type", op, name)
		}
		if err != nil {
			return nil, err
		}
		out = append(out, Arg{name, value})
	}
	return out, nil
}
