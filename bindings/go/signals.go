package outlive

// #include "shim.h"
import "C"

import "runtime"

// Signals deliver results of an action to durable consumers (handlers), in
// this or other processes.
type Signals struct{ s *Store }

// Delivery is how many versions a consumer receives.
type Delivery int

const (
	DeliveryOnce            Delivery = C.OUTLIVE_DELIVERY_ONCE
	DeliveryUntilTerminated Delivery = C.OUTLIVE_DELIVERY_UNTIL_TERMINATED
)

// Lifetime is who may deliver to a consumer.
type Lifetime int

const (
	LifetimeThisRun    Lifetime = C.OUTLIVE_LIFETIME_THIS_RUN
	LifetimeProcess    Lifetime = C.OUTLIVE_LIFETIME_PROCESS
	LifetimeAnyProcess Lifetime = C.OUTLIVE_LIFETIME_ANY_PROCESS
)

// NewSignalID is a new random signal id.
func NewSignalID() string {
	var id [C.OUTLIVE_ID_SIZE]C.char
	C.outlive_signal_new_id(&id[0])
	return idString(&id)
}

// Consume registers handler (copied) as a consumer of signalID; scope ""
// means none. It is called with its bound arguments, the payload, and
// signal_id (ID), version (UINTEGER) and terminated (BOOL), those it declares.
// Returns the consumer's id.
func (g Signals) Consume(signalID string, handler *Handler, delivery Delivery, lifetime Lifetime, scope string) (string, error) {
	const op = "outlive_signal_consume"
	store, err := g.s.handle(op)
	if err != nil {
		return "", err
	}
	if err := handler.valid(op); err != nil {
		return "", err
	}
	var strs cStrings
	defer strs.free()
	cSignal, ok1 := strs.of(signalID)
	cScope, ok2 := strs.optional(scope)
	if !ok1 || !ok2 {
		return "", invalid(op, "a NUL byte in the signal id or scope")
	}
	var id [C.OUTLIVE_ID_SIZE]C.char
	err = check(op, func() C.outlive_status {
		return C.outlive_signal_consume(store, cSignal, handler.ptr, C.outlive_delivery(delivery),
			C.outlive_lifetime(lifetime), cScope, &id[0])
	})
	runtime.KeepAlive(handler) // its finalizer must not free it during the call
	if err != nil {
		return "", err
	}
	return idString(&id), nil
}

// Post posts the next version of signalID with payload; terminates removes
// consumers once it is delivered to them.
func (g Signals) Post(signalID string, payload Args, terminates bool) error {
	const op = "outlive_signal_post"
	store, err := g.s.handle(op)
	if err != nil {
		return err
	}
	var strs cStrings
	defer strs.free()
	cSignal, ok := strs.of(signalID)
	if !ok {
		return invalid(op, "a NUL byte in the signal id")
	}
	args, err := payload.toC(op)
	if err != nil {
		return err
	}
	defer C.outlive_args_free(args)
	return check(op, func() C.outlive_status { return C.outlive_signal_post(store, cSignal, args, C.bool(terminates)) })
}

// RemoveConsumer removes one consumer, whichever process registered it.
func (g Signals) RemoveConsumer(consumerID string) error {
	const op = "outlive_signal_consumer_remove"
	store, err := g.s.handle(op)
	if err != nil {
		return err
	}
	var strs cStrings
	defer strs.free()
	cID, ok := strs.of(consumerID)
	if !ok {
		return invalid(op, "a NUL byte in the consumer id")
	}
	return check(op, func() C.outlive_status { return C.outlive_signal_consumer_remove(store, cID) })
}

// RemoveScope removes every consumer registered with scope; returns how many.
func (g Signals) RemoveScope(scope string) (int, error) {
	const op = "outlive_signal_consumers_remove_scope"
	store, err := g.s.handle(op)
	if err != nil {
		return 0, err
	}
	var strs cStrings
	defer strs.free()
	cScope, ok := strs.of(scope)
	if !ok {
		return 0, invalid(op, "a NUL byte in the scope")
	}
	var count C.size_t
	err = check(op, func() C.outlive_status { return C.outlive_signal_consumers_remove_scope(store, cScope, &count) })
	return int(count), err
}

// SignalInfo is a stored signal's state.
type SignalInfo struct {
	Version       uint64
	ConsumerCount int
	Terminated    bool
}

// Lookup reads a stored signal; StatusNotFound when it has no consumer.
func (g Signals) Lookup(signalID string) (SignalInfo, error) {
	const op = "outlive_signal_lookup"
	store, err := g.s.handle(op)
	if err != nil {
		return SignalInfo{}, err
	}
	var strs cStrings
	defer strs.free()
	cSignal, ok := strs.of(signalID)
	if !ok {
		return SignalInfo{}, invalid(op, "a NUL byte in the signal id")
	}
	var version C.uint64_t
	var count C.size_t
	var terminated C.bool
	err = check(op, func() C.outlive_status {
		return C.outlive_signal_lookup(store, cSignal, &version, &count, &terminated)
	})
	return SignalInfo{uint64(version), int(count), bool(terminated)}, err
}
