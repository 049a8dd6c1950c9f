package outlive

// #include "shim.h"
import "C"

import (
	"time"
)

// Durability is what an acknowledged write survives.
type Durability int

const (
	// DurabilityFull: every acknowledged change survives a power loss (the default).
	DurabilityFull Durability = C.OUTLIVE_DURABILITY_FULL
	// DurabilityNormal: changes survive any process crash, the last ones may be
	// lost on a power loss; several times faster.
	DurabilityNormal Durability = C.OUTLIVE_DURABILITY_NORMAL
)

// Options of Open. The zero value means the library's defaults.
type Options struct {
	// Loop delivers the store's callbacks; nil: the store makes a loop of its own (Store.Loop).
	Loop *Loop
	// Durability; 0 means DurabilityFull.
	Durability Durability
	// BusyTimeout is how long a write waits for other processes; 0 means 10 s.
	BusyTimeout time.Duration
}

// Store is one open handle of a store directory: one run of a process name.
// Its methods may be called from any goroutine, except Close (see Loop for
// the loop-thread rule). The sections of the API are fields: store.KV,
// store.Tasks, store.Signals, store.Messages.
type Store struct {
	ptr      *C.outlive_store
	loop     *Loop
	KV       KV
	Tasks    Tasks
	Signals  Signals
	Messages Messages
}

// Open opens (creating it 0700 if needed) the store in directory as a run of
// processName. opts may be nil.
func Open(directory, processName string, opts *Options) (*Store, error) {
	const op = "outlive_store_open"
	options := C.outlive_store_options{version: C.OUTLIVE_STORE_OPTIONS_VERSION,
		durability: C.OUTLIVE_DURABILITY_FULL, busy_timeout_ms: 10000}
	var loop *C.outlive_loop
	if opts != nil {
		if opts.Durability != 0 {
			options.durability = C.outlive_durability(opts.Durability)
		}
		if opts.BusyTimeout != 0 {
			ms := opts.BusyTimeout / time.Millisecond
			if ms > 1<<31-1 {
				return nil, invalid(op, "busy timeout %v is too long", opts.BusyTimeout)
			}
			options.busy_timeout_ms = C.int32_t(ms)
		}
		if opts.Loop != nil {
			loop = opts.Loop.ptr
		}
	}
	var strings cStrings
	defer strings.free()
	cDirectory, ok1 := strings.of(directory)
	cName, ok2 := strings.of(processName)
	if !ok1 || !ok2 {
		return nil, invalid(op, "a NUL byte in the directory or process name")
	}
	var store *C.outlive_store
	err := check(op, func() C.outlive_status { return C.outlive_store_open(cDirectory, cName, loop, &options, &store) })
	if err != nil {
		return nil, err
	}
	s := &Store{ptr: store}
	if opts != nil && opts.Loop != nil {
		s.loop = opts.Loop
	} else {
		s.loop = &Loop{ptr: C.outlive_store_loop(store)}
	}
	s.KV, s.Tasks, s.Signals, s.Messages = KV{s}, Tasks{s}, Signals{s}, Messages{s}
	return s, nil
}

// Close ends this run (its this-run signal consumers go, its claims are
// released) and frees the handle; callbacks registered on it are not called
// again and their Go functions are released. Call it on the goroutine that
// dispatches the store's loop, or when the loop is not being dispatched, and
// when no other goroutine uses the store. A second Close does nothing.
func (s *Store) Close() error {
	if s == nil || s.ptr == nil {
		return nil
	}
	C.outlive_store_close(s.ptr)
	s.ptr = nil
	return nil
}

// Loop is the loop the store delivers on: Options.Loop, or the store's own
// (freed with the store).
func (s *Store) Loop() *Loop { return s.loop }

// RunID is this handle's run id; "" once closed.
func (s *Store) RunID() string {
	if s.ptr == nil {
		return ""
	}
	return C.GoString(C.outlive_store_run_id(s.ptr))
}

// Check returns an error of status StatusState once this handle no longer
// acts as a live run: its run ended while it was open (PostgreSQL: its
// connection to the server was lost). No I/O; learnt while the loop
// dispatches. Close the store and open it again.
func (s *Store) Check() error {
	if s.ptr == nil {
		return closedStore("Check")
	}
	return check("Check", func() C.outlive_status { return C.outlive_store_check(s.ptr) })
}

// ProcessName is the process name the store was opened with; "" once closed.
func (s *Store) ProcessName() string {
	if s.ptr == nil {
		return ""
	}
	return C.GoString(C.outlive_store_process_name(s.ptr))
}

// handle is the C store for a call named op, or an error once closed.
func (s *Store) handle(op string) (*C.outlive_store, error) {
	if s == nil || s.ptr == nil {
		return nil, closedStore(op)
	}
	return s.ptr, nil
}
