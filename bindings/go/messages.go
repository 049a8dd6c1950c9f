package outlive

// #include "shim.h"
import "C"

import (
	"runtime"
	"runtime/cgo"
	"time"
)

// Messages is the store's durable message queue: messages shown to the user
// once, by the best presenter of any process, then answered and removed.
type Messages struct{ s *Store }

// ChoiceKind is a choice's kind.
type ChoiceKind int

const (
	ChoiceRegular     ChoiceKind = C.OUTLIVE_CHOICE_REGULAR
	ChoiceCancel      ChoiceKind = C.OUTLIVE_CHOICE_CANCEL
	ChoiceDestructive ChoiceKind = C.OUTLIVE_CHOICE_DESTRUCTIVE
	ChoiceDefault     ChoiceKind = C.OUTLIVE_CHOICE_DEFAULT
)

// Choice is one answer a message offers.
type Choice struct {
	ID    string
	Label string
	Kind  ChoiceKind
}

// Draft is a message to post. Category is required; the rest is optional.
type Draft struct {
	Category, Title, Text, Scope, Thread string
	Choices                              []Choice
	Payload                              Args
	ResponseHandler                      *Handler // called once answered, in a process that resolves it
	AutoRemove                           bool
}

// Message is a copy of a message, taken in a callback or by Get.
type Message struct {
	ID, Category, Title, Text, Scope, Thread string
	Choice                                   string // "" until answered
	Choices                                  []Choice
	Payload                                  Args
	Date                                     time.Time
	Presented, Handled, Removed              bool
}

func messageFromC(m *C.outlive_message) *Message {
	text := func(p *C.char) string { s, _ := goString(p); return s }
	msg := &Message{ID: text(C.outlive_message_id(m)), Category: text(C.outlive_message_category(m)),
		Title: text(C.outlive_message_title(m)), Text: text(C.outlive_message_text(m)),
		Scope: text(C.outlive_message_scope(m)), Thread: text(C.outlive_message_thread(m)),
		Choice: text(C.outlive_message_choice(m)), Date: epoch(C.outlive_message_date(m)),
		Presented: bool(C.outlive_message_is_presented(m)), Handled: bool(C.outlive_message_is_handled(m)),
		Removed: bool(C.outlive_message_is_removed(m))}
	for i := C.size_t(0); i < C.outlive_message_choice_count(m); i++ {
		var id, label *C.char
		var kind C.outlive_choice_kind
		if C.outlive_message_choice_at(m, i, &id, &label, &kind) == C.OUTLIVE_OK {
			msg.Choices = append(msg.Choices, Choice{C.GoString(id), C.GoString(label), ChoiceKind(kind)})
		}
	}
	if payload := C.outlive_message_payload(m); payload != nil {
		msg.Payload, _ = argsFromC("outlive_message_payload", payload)
	}
	return msg
}

// Post stores the draft as a new message; returns its id.
func (m Messages) Post(d Draft) (string, error) {
	const op = "outlive_message_post"
	store, err := m.s.handle(op)
	if err != nil {
		return "", err
	}
	var strs cStrings
	defer strs.free()
	category, ok1 := strs.of(d.Category)
	title, ok2 := strs.of(d.Title)
	text, ok3 := strs.optional(d.Text)
	scope, ok4 := strs.optional(d.Scope)
	thread, ok5 := strs.optional(d.Thread)
	if !(ok1 && ok2 && ok3 && ok4 && ok5) {
		return "", invalid(op, "a NUL byte in a field of the draft")
	}
	var draft *C.outlive_message_draft
	if err := check("outlive_message_draft_new", func() C.outlive_status { return C.outlive_message_draft_new(category, title, &draft) }); err != nil {
		return "", err
	}
	defer C.outlive_message_draft_free(draft)
	steps := []func() error{
		func() error {
			return check("outlive_message_draft_set_text", func() C.outlive_status { return C.outlive_message_draft_set_text(draft, text) })
		},
		func() error {
			return check("outlive_message_draft_set_scope", func() C.outlive_status { return C.outlive_message_draft_set_scope(draft, scope) })
		},
		func() error {
			return check("outlive_message_draft_set_thread", func() C.outlive_status { return C.outlive_message_draft_set_thread(draft, thread) })
		},
		func() error {
			return check("outlive_message_draft_set_auto_remove", func() C.outlive_status {
				return C.outlive_message_draft_set_auto_remove(draft, C.bool(d.AutoRemove))
			})
		},
	}
	for _, choice := range d.Choices {
		id, ok1 := strs.of(choice.ID)
		label, ok2 := strs.of(choice.Label)
		if !ok1 || !ok2 {
			return "", invalid(op, "a NUL byte in choice %q", choice.ID)
		}
		kind := choice.Kind
		if kind == 0 {
			kind = ChoiceRegular
		}
		steps = append(steps, func() error {
			return check("outlive_message_draft_add_choice", func() C.outlive_status {
				return C.outlive_message_draft_add_choice(draft, id, label, C.outlive_choice_kind(kind))
			})
		})
	}
	if len(d.Payload) > 0 {
		steps = append(steps, func() error {
			payload, err := d.Payload.toC("outlive_message_draft_set_payload")
			if err != nil {
				return err
			}
			defer C.outlive_args_free(payload)
			return check("outlive_message_draft_set_payload", func() C.outlive_status { return C.outlive_message_draft_set_payload(draft, payload) })
		})
	}
	if d.ResponseHandler != nil {
		steps = append(steps, func() error {
			if err := d.ResponseHandler.valid("outlive_message_draft_set_response_handler"); err != nil {
				return err
			}
			return check("outlive_message_draft_set_response_handler", func() C.outlive_status {
				return C.outlive_message_draft_set_response_handler(draft, d.ResponseHandler.ptr)
			})
		})
	}
	for _, step := range steps {
		if err := step(); err != nil {
			return "", err
		}
	}
	runtime.KeepAlive(d.ResponseHandler) // its finalizer must not free it while the draft is built
	var id [C.OUTLIVE_ID_SIZE]C.char
	if err := check(op, func() C.outlive_status { return C.outlive_message_post(store, draft, &id[0]) }); err != nil {
		return "", err
	}
	return idString(&id), nil
}

// withID makes a call that takes the store and one string.
func (m Messages) withID(op, id string, call func(*C.outlive_store, *C.char) C.outlive_status) error {
	store, err := m.s.handle(op)
	if err != nil {
		return err
	}
	var strs cStrings
	defer strs.free()
	cID, ok := strs.of(id)
	if !ok {
		return invalid(op, "a NUL byte in %q", id)
	}
	return check(op, func() C.outlive_status { return call(store, cID) })
}

// Respond answers a message with one of its choices, from any process.
func (m Messages) Respond(messageID, choiceID string) error {
	const op = "outlive_message_respond"
	var strs cStrings
	defer strs.free()
	cChoice, ok := strs.of(choiceID)
	if !ok {
		return invalid(op, "a NUL byte in the choice")
	}
	return m.withID(op, messageID, func(s *C.outlive_store, id *C.char) C.outlive_status {
		return C.outlive_message_respond(s, id, cChoice)
	})
}

// Mute marks a message presented without presenting it.
func (m Messages) Mute(messageID string) error {
	return m.withID("outlive_message_mute", messageID, func(s *C.outlive_store, id *C.char) C.outlive_status {
		return C.outlive_message_mute(s, id)
	})
}

// Remove removes a message.
func (m Messages) Remove(messageID string) error {
	return m.withID("outlive_message_remove", messageID, func(s *C.outlive_store, id *C.char) C.outlive_status {
		return C.outlive_message_remove(s, id)
	})
}

// Get is a copy of a stored message; StatusNotFound when there is none.
func (m Messages) Get(messageID string) (*Message, error) {
	var message *C.outlive_message
	err := m.withID("outlive_message_get", messageID, func(s *C.outlive_store, id *C.char) C.outlive_status {
		return C.outlive_message_get(s, id, &message)
	})
	if err != nil {
		return nil, err
	}
	defer C.outlive_message_free(message)
	return messageFromC(message), nil
}

// Count is the number of stored messages of category ("": of all).
func (m Messages) Count(category string) (int, error) {
	const op = "outlive_messages_count"
	store, err := m.s.handle(op)
	if err != nil {
		return 0, err
	}
	var strs cStrings
	defer strs.free()
	cCategory, ok := strs.optional(category)
	if !ok {
		return 0, invalid(op, "a NUL byte in the category")
	}
	var count C.size_t
	err = check(op, func() C.outlive_status { return C.outlive_messages_count(store, cCategory, &count) })
	return int(count), err
}

// Presentation is the token of one presentation: Finish it exactly once, now
// or later, from any goroutine.
type Presentation struct{ ptr *C.outlive_presentation }

// Finish ends the presentation: presented (the user saw it) or not (others may
// present it); endNotification asks for the presenter's End before the
// message is deleted; choice, when not "", is the user's answer.
func (p *Presentation) Finish(presented, endNotification bool, choice string) error {
	const op = "outlive_presentation_finish"
	var strs cStrings
	defer strs.free()
	cChoice, ok := strs.optional(choice)
	if !ok {
		return invalid(op, "a NUL byte in the choice")
	}
	result := C.outlive_presentation_result(C.OUTLIVE_PRESENTATION_NOT_PRESENTED)
	if presented {
		result = C.OUTLIVE_PRESENTATION_PRESENTED
	}
	return check(op, func() C.outlive_status {
		return C.outlive_presentation_finish(p.ptr, result, C.bool(endNotification), cChoice)
	})
}

// Presenter shows messages. Priority: 0 declines, the highest presents
// (PriorityDefault is 200). Present shows the message and finishes the
// presentation. End (optional) withdraws a message it presented with an end
// notification. All run on the store's loop.
type Presenter struct {
	Priority func(m *Message) int32
	Present  func(m *Message, p *Presentation)
	End      func(m *Message)
}

// Presenter priorities.
const (
	PriorityWontPresent = C.OUTLIVE_PRIORITY_WONT_PRESENT
	PriorityLow         = C.OUTLIVE_PRIORITY_LOW
	PriorityDefault     = C.OUTLIVE_PRIORITY_DEFAULT
	PriorityHigh        = C.OUTLIVE_PRIORITY_HIGH
)

// AddPresenter registers a presenter on this store handle under id. A nil
// Priority means PriorityDefault for every message.
func (m Messages) AddPresenter(id string, p Presenter) error {
	const op = "outlive_presenter_add"
	if p.Present == nil {
		return invalid(op, "a presenter without Present")
	}
	handle := newHandle(&presenter{m.s.loop, p})
	withEnd := C.int(0)
	if p.End != nil {
		withEnd = 1
	}
	err := m.withID(op, id, func(s *C.outlive_store, cID *C.char) C.outlive_status {
		return C.outlive_go_presenter_add(s, cID, C.uintptr_t(handle), withEnd)
	})
	if err != nil {
		deleteHandle(handle)
	}
	return err
}

// RemovePresenter unregisters a presenter.
func (m Messages) RemovePresenter(id string) error {
	return m.withID("outlive_presenter_remove", id, func(s *C.outlive_store, cID *C.char) C.outlive_status {
		return C.outlive_presenter_remove(s, cID)
	})
}

// AddResponseHandler registers fn under id: it is called on the loop for an
// answered message (Message.Choice) and returns true when it took care of it
// (the message is removed).
func (m Messages) AddResponseHandler(id string, fn func(m *Message) bool) error {
	const op = "outlive_response_handler_add"
	if fn == nil {
		return invalid(op, "a nil response handler")
	}
	handle := newHandle(&responseHandler{m.s.loop, fn})
	err := m.withID(op, id, func(s *C.outlive_store, cID *C.char) C.outlive_status {
		return C.outlive_go_response_handler_add(s, cID, C.uintptr_t(handle))
	})
	if err != nil {
		deleteHandle(handle)
	}
	return err
}

// RemoveResponseHandler unregisters a response handler.
func (m Messages) RemoveResponseHandler(id string) error {
	return m.withID("outlive_response_handler_remove", id, func(s *C.outlive_store, cID *C.char) C.outlive_status {
		return C.outlive_response_handler_remove(s, cID)
	})
}

type presenter struct {
	loop *Loop
	Presenter
}

type responseHandler struct {
	loop *Loop
	fn   func(*Message) bool
}

//export outliveGoPresenterPriority
func outliveGoPresenterPriority(message *C.outlive_message, handle C.uintptr_t) (priority C.int32_t) {
	p := cgo.Handle(handle).Value().(*presenter)
	priority = PriorityWontPresent // a panicking Priority declines
	p.loop.guard(func() {
		if p.Priority == nil {
			priority = PriorityDefault
			return
		}
		priority = C.int32_t(p.Priority(messageFromC(message)))
	})
	return priority
}

//export outliveGoPresenterPresent
func outliveGoPresenterPresent(message *C.outlive_message, presentation *C.outlive_presentation, handle C.uintptr_t) {
	p := cgo.Handle(handle).Value().(*presenter)
	p.loop.guard(func() { p.Present(messageFromC(message), &Presentation{presentation}) })
}

//export outliveGoPresenterEnd
func outliveGoPresenterEnd(message *C.outlive_message, handle C.uintptr_t) {
	p := cgo.Handle(handle).Value().(*presenter)
	if p.End != nil {
		p.loop.guard(func() { p.End(messageFromC(message)) })
	}
}

//export outliveGoRespond
func outliveGoRespond(message *C.outlive_message, handle C.uintptr_t) C.int {
	r := cgo.Handle(handle).Value().(*responseHandler)
	took := false
	r.loop.guard(func() { took = r.fn(messageFromC(message)) })
	if took {
		return 1
	}
	return 0
}

// IDs lists the ids of stored messages in the order posted, of scope and
// category ("": any), after the message `after` ("": from the first), at
// most limit (0: no limit).
func (m Messages) IDs(scope, category, after string, limit int) ([]string, error) {
	const op = "outlive_message_list_new"
	store, err := m.s.handle(op)
	if err != nil {
		return nil, err
	}
	if limit < 0 {
		return nil, invalid(op, "a negative limit")
	}
	var strs cStrings
	defer strs.free()
	cScope, ok1 := strs.optional(scope)
	cCategory, ok2 := strs.optional(category)
	cAfter, ok3 := strs.optional(after)
	if !(ok1 && ok2 && ok3) {
		return nil, invalid(op, "a NUL byte in the scope, category or after")
	}
	var list *C.outlive_message_list
	err = check(op, func() C.outlive_status {
		return C.outlive_message_list_new(store, cScope, cCategory, cAfter, C.size_t(limit), &list)
	})
	if err != nil {
		return nil, err
	}
	defer C.outlive_message_list_free(list)
	ids := make([]string, int(C.outlive_message_list_count(list)))
	for i := range ids {
		ids[i] = C.GoString(C.outlive_message_list_id(list, C.size_t(i)))
	}
	return ids, nil
}

// RemoveScope removes every message of a scope; returns how many.
func (m Messages) RemoveScope(scope string) (int, error) {
	var count C.size_t
	err := m.withID("outlive_messages_remove_scope", scope, func(s *C.outlive_store, id *C.char) C.outlive_status {
		return C.outlive_messages_remove_scope(s, id, &count)
	})
	return int(count), err
}

// SetCategoryLimit is how many messages of one category posts through this
// handle allow; a post beyond it is StatusLimit.
func (m Messages) SetCategoryLimit(limit int) error {
	const op = "outlive_messages_set_category_limit"
	store, err := m.s.handle(op)
	if err != nil {
		return err
	}
	if limit < 0 {
		return invalid(op, "a negative limit")
	}
	return check(op, func() C.outlive_status { return C.outlive_messages_set_category_limit(store, C.size_t(limit)) })
}

// Reoffer offers the presenter again the messages it declined or did not present.
func (m Messages) Reoffer(presenterID string) error {
	return m.withID("outlive_presenter_reoffer", presenterID, func(s *C.outlive_store, id *C.char) C.outlive_status {
		return C.outlive_presenter_reoffer(s, id)
	})
}
