package outlive

// #include "shim.h"
import "C"

import (
	"strings"
	"unsafe"
)

// cStrings holds the C copies of the strings one call passes, freed together.
type cStrings []unsafe.Pointer

// of copies s into C memory. A Go string may hold a NUL byte, which a C string
// cannot: ok is false then, and the caller reports StatusInvalidArgument.
func (c *cStrings) of(s string) (p *C.char, ok bool) {
	if strings.IndexByte(s, 0) >= 0 {
		return nil, false
	}
	p = C.CString(s)
	*c = append(*c, unsafe.Pointer(p))
	return p, true
}

// optional is of, with "" meaning NULL (no value).
func (c *cStrings) optional(s string) (p *C.char, ok bool) {
	if s == "" {
		return nil, true
	}
	return c.of(s)
}

func (c *cStrings) free() {
	for _, p := range *c {
		C.free(p)
	}
	*c = nil
}

// goString is C.GoString that keeps NULL apart: "" for NULL too, with ok false.
func goString(p *C.char) (string, bool) {
	if p == nil {
		return "", false
	}
	return C.GoString(p), true
}

// idString reads a NUL-terminated id buffer.
func idString(buffer *[C.OUTLIVE_ID_SIZE]C.char) string {
	return C.GoString(&buffer[0])
}
