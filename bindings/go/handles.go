package outlive

import (
	"runtime/cgo"
	"sync/atomic"
)

// A Go value the library keeps as a callback's context is a cgo.Handle (an
// integer), never a Go pointer; the library gives it back through release,
// and the handle is deleted then. The count lets tests prove it.
var handleCount int64

func newHandle(value any) cgo.Handle {
	atomic.AddInt64(&handleCount, 1)
	return cgo.NewHandle(value)
}

func deleteHandle(handle cgo.Handle) {
	handle.Delete()
	atomic.AddInt64(&handleCount, -1)
}

// liveHandles is how many handles are not deleted yet.
func liveHandles() int { return int(atomic.LoadInt64(&handleCount)) }
