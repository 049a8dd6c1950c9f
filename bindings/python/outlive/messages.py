"""`store.messages`: messages presented once by the best presenter of any
process, answered with a choice made anywhere, handled, then removed."""
from __future__ import annotations

import ctypes
import dataclasses
import typing

from . import _callbacks, _ffi
from .errors import check
from .values import Args, args_to_dict

if typing.TYPE_CHECKING:
    from .handlers import Handler
    from .store import Store

PresentFunction = typing.Callable[..., typing.Any]
"""present(message, presentation), or `async def present(message)` (see Messages.add_presenter)."""

CHOICE_KINDS = {"regular": 1, "cancel": 2, "destructive": 3, "default": 4}
_KIND_NAMES = {value: key for key, value in CHOICE_KINDS.items()}


@dataclasses.dataclass(frozen=True)
class Message:
    """A snapshot of a stored message."""
    id: str
    category: str
    title: str
    text: typing.Optional[str]
    scope: typing.Optional[str]
    thread: typing.Optional[str]
    choices: typing.Tuple[typing.Tuple[str, str, str], ...]
    payload: typing.Dict[str, typing.Any]
    date: float
    choice: typing.Optional[str]
    presented: bool
    handled: bool
    removed: bool
    has_response_handler: bool


def _text(pointer: typing.Optional[bytes]) -> typing.Any:
    return None if pointer is None else pointer.decode("utf-8")


def snapshot(view: typing.Any) -> Message:
    """A Message from a borrowed outlive_message view."""
    choices = []
    for index in range(_ffi.outlive_message_choice_count(view)):
        choice_id, label, kind = ctypes.c_char_p(), ctypes.c_char_p(), ctypes.c_int()
        check(_ffi.outlive_message_choice_at(view, index, ctypes.byref(choice_id), ctypes.byref(label), ctypes.byref(kind)))
        choices.append((_text(choice_id.value), _text(label.value), _KIND_NAMES.get(kind.value, "regular")))
    payload = _ffi.outlive_message_payload(view)
    return Message(
        id=_text(_ffi.outlive_message_id(view)), category=_text(_ffi.outlive_message_category(view)),
        title=_text(_ffi.outlive_message_title(view)), text=_text(_ffi.outlive_message_text(view)),
        scope=_text(_ffi.outlive_message_scope(view)), thread=_text(_ffi.outlive_message_thread(view)),
        choices=tuple(choices), payload=args_to_dict(payload) if payload else {},
        date=_ffi.outlive_message_date(view), choice=_text(_ffi.outlive_message_choice(view)),
        presented=bool(_ffi.outlive_message_is_presented(view)), handled=bool(_ffi.outlive_message_is_handled(view)),
        removed=bool(_ffi.outlive_message_is_removed(view)),
        has_response_handler=bool(_ffi.outlive_message_has_response_handler(view)))


class Presentation:
    """A presentation under way: finish it exactly once, from any thread."""

    __slots__ = ("_token", "message")

    def __init__(self, token: typing.Any, message: Message) -> None:
        self._token, self.message = token, message

    def finish(self, presented: bool = True, *, end_notification: bool = False, choice: typing.Optional[str] = None) -> None:
        """Ends the presentation: presented or not, with the user's choice if any."""
        check(_ffi.outlive_presentation_finish(self._token, 1 if presented else 2, end_notification,
                                               None if choice is None else choice.encode("utf-8")))


class _PresenterCallbacks:
    def __init__(self, priority: typing.Any, present: PresentFunction,
                 end: typing.Optional[typing.Callable[[Message], None]]) -> None:
        import inspect
        self.priority, self.present, self.end = priority, present, end
        self.awaitable = inspect.iscoroutinefunction(present)


def _priority_value(value: typing.Any) -> int:
    """An int32 priority; a float, str or bool is a TypeError, not truncated."""
    if isinstance(value, bool) or not hasattr(type(value), "__index__"):
        raise TypeError(f"a presenter's priority is an int, not {type(value).__name__}")
    number = int(value.__index__())
    if not -2**31 <= number < 2**31:
        raise OverflowError(f"a presenter's priority {number} does not fit an int32")
    return number


@_ffi.PRIORITY_FN
def _priority(view: typing.Any, context: typing.Optional[int]) -> int:
    presenter = _callbacks.lookup(context)
    try:
        priority = presenter.priority
        return _priority_value(priority(snapshot(view)) if callable(priority) else priority)
    except BaseException as error:
        _callbacks.keep(error)
        return 0


@_ffi.PRESENT_FN
def _present(view: typing.Any, token: typing.Any, context: typing.Optional[int]) -> None:
    presenter = _callbacks.lookup(context)
    message = snapshot(view)
    presentation = Presentation(token, message)
    try:
        if presenter.awaitable:
            _present_async(presenter, message, presentation)
        else:
            presenter.present(message, presentation)
    except BaseException as error:
        _callbacks.keep(error)


def _present_async(presenter: _PresenterCallbacks, message: Message, presentation: Presentation) -> None:
    """An `async def` presenter: awaited on the running asyncio loop; what it
    returns finishes the presentation — a choice id (presented and answered),
    None (presented, no answer yet) or False (not presented: offer it elsewhere)."""
    import asyncio

    async def run() -> None:
        try:
            outcome = await presenter.present(message)
        except BaseException:
            presentation.finish(presented=False)
            raise
        if outcome is False:
            presentation.finish(presented=False)
        else:
            presentation.finish(presented=True, end_notification=presenter.end is not None,
                                choice=outcome if isinstance(outcome, str) else None)

    asyncio.get_running_loop().create_task(run())


@_ffi.END_FN
def _end(view: typing.Any, context: typing.Optional[int]) -> None:
    presenter = _callbacks.lookup(context)
    if presenter is None or presenter.end is None:
        return
    try:
        presenter.end(snapshot(view))
    except BaseException as error:
        _callbacks.keep(error)


@_ffi.RESPONSE_FN
def _respond(view: typing.Any, context: typing.Optional[int]) -> bool:
    function = _callbacks.lookup(context)
    try:
        return bool(function(snapshot(view)))
    except BaseException as error:
        _callbacks.keep(error)
        return False


@_ffi.AUTO_RESOLVER_FN
def _auto_resolve(view: typing.Any, choice_out: typing.Any, context: typing.Optional[int]) -> bool:
    function = _callbacks.lookup(context)
    try:
        answer = function(snapshot(view))
    except BaseException as error:
        _callbacks.keep(error)
        return False
    if answer is None or answer is False:
        return False
    if isinstance(answer, str):
        data = answer.encode("utf-8")[:63]
        ctypes.memmove(choice_out, data + b"\0", len(data) + 1)
    else:
        ctypes.memmove(choice_out, b"\0", 1)
    return True


def _register(add: typing.Any, store: Store, callback_id: str, trampoline: typing.Any, obj: typing.Any) -> None:
    key = _callbacks.register(obj)
    status = add(store.handle, callback_id.encode("utf-8"), trampoline, key, _callbacks.release)
    if status != 0:
        _callbacks.forget(key)
    check(status)


class Messages:
    """The store's messages (docs/messages.md)."""

    def __init__(self, store: Store) -> None:
        self._store = store

    def post(self, category: str, title: str, *, text: typing.Optional[str] = None, scope: typing.Optional[str] = None,
             thread: typing.Optional[str] = None, choices: typing.Iterable[typing.Sequence[str]] = (),
             payload: typing.Optional[typing.Mapping[str, typing.Any]] = None,
             response_handler: typing.Optional[Handler] = None, auto_remove: bool = False) -> str:
        """Posts a message; choices are (id, label[, kind]) with kind one of
        regular, cancel, destructive, default. Returns its id."""
        draft = _ffi.MessageDraftP()
        check(_ffi.outlive_message_draft_new(category.encode("utf-8"), title.encode("utf-8"), ctypes.byref(draft)))
        try:
            if text is not None:
                check(_ffi.outlive_message_draft_set_text(draft, text.encode("utf-8")))
            if scope is not None:
                check(_ffi.outlive_message_draft_set_scope(draft, scope.encode("utf-8")))
            if thread is not None:
                check(_ffi.outlive_message_draft_set_thread(draft, thread.encode("utf-8")))
            for choice in choices:
                choice_id, label = choice[0], choice[1]
                kind = CHOICE_KINDS[choice[2]] if len(choice) > 2 else 1
                check(_ffi.outlive_message_draft_add_choice(draft, choice_id.encode("utf-8"), label.encode("utf-8"), kind))
            if payload:
                with Args(payload) as args:
                    check(_ffi.outlive_message_draft_set_payload(draft, args.handle))
            if response_handler is not None:
                check(_ffi.outlive_message_draft_set_response_handler(draft, response_handler.handle))
            if auto_remove:
                check(_ffi.outlive_message_draft_set_auto_remove(draft, True))
            out = ctypes.create_string_buffer(_ffi.ID_SIZE)
            check(_ffi.outlive_message_post(self._store.handle, draft, out))
            return str(out.value.decode())
        finally:
            _ffi.outlive_message_draft_free(draft)

    def respond(self, message_id: str, choice: str) -> None:
        """Answers a message with the choice `choice` (from any process)."""
        check(_ffi.outlive_message_respond(self._store.handle, message_id.encode(), choice.encode("utf-8")))

    def mute(self, message_id: str) -> None:
        """Marks a message handled without an answer."""
        check(_ffi.outlive_message_mute(self._store.handle, message_id.encode()))

    def remove(self, message_id: str) -> None:
        """Removes a message."""
        check(_ffi.outlive_message_remove(self._store.handle, message_id.encode()))

    def remove_scope(self, scope: str) -> int:
        """Removes every message of `scope`; returns how many."""
        count = ctypes.c_size_t()
        check(_ffi.outlive_messages_remove_scope(self._store.handle, scope.encode("utf-8"), ctypes.byref(count)))
        return count.value

    def get(self, message_id: str) -> Message:
        """A snapshot of one message."""
        out = _ffi.MessageP()
        check(_ffi.outlive_message_get(self._store.handle, message_id.encode(), ctypes.byref(out)))
        try:
            return snapshot(out)
        finally:
            _ffi.outlive_message_free(out)

    def ids(self, scope: typing.Optional[str] = None, category: typing.Optional[str] = None) -> typing.List[str]:
        """The ids of the stored messages (of `scope`, of `category`)."""
        out = _ffi.MessageListP()
        check(_ffi.outlive_message_list_new(self._store.handle, None if scope is None else scope.encode("utf-8"),
                                            None if category is None else category.encode("utf-8"), None, 0,
                                            ctypes.byref(out)))
        try:
            return [str(_ffi.outlive_message_list_id(out, i).decode()) for i in range(_ffi.outlive_message_list_count(out))]
        finally:
            _ffi.outlive_message_list_free(out)

    def __iter__(self) -> typing.Iterator[Message]:
        for message_id in self.ids():
            yield self.get(message_id)

    def __len__(self) -> int:
        count = ctypes.c_size_t()
        check(_ffi.outlive_messages_count(self._store.handle, None, ctypes.byref(count)))
        return count.value

    def set_category_limit(self, limit: int) -> None:
        """How many messages a category keeps at most."""
        check(_ffi.outlive_messages_set_category_limit(self._store.handle, limit))

    def add_presenter(self, presenter_id: str, present: PresentFunction, *,
                      priority: typing.Union[int, typing.Callable[[Message], int]] = 200,
                      end: typing.Optional[typing.Callable[[Message], None]] = None) -> None:
        """present(message, presentation) on the loop; the presentation must be
        finished (presentation.finish(...)) once. Or `async def present(message)`,
        awaited on the asyncio loop the store's loop is attached to: it returns a
        choice id, None (presented, unanswered) or False (declined). priority: an
        int, or a function of the message (0 declines)."""
        callbacks = _PresenterCallbacks(priority if callable(priority) else _priority_value(priority), present, end)
        key = _callbacks.register(callbacks)
        table = _ffi.Presenter(1, _priority, _present, _end)  # OUTLIVE_PRESENTER_VERSION
        status = _ffi.outlive_presenter_add(self._store.handle, presenter_id.encode("utf-8"),
                                                         ctypes.byref(table), key, _callbacks.release)
        if status != 0:
            _callbacks.forget(key)
        check(status)

    def remove_presenter(self, presenter_id: str) -> None:
        """Removes a presenter of this process."""
        check(_ffi.outlive_presenter_remove(self._store.handle, presenter_id.encode("utf-8")))

    def reoffer(self, presenter_id: str) -> None:
        """Offers the messages this presenter declined to it again."""
        check(_ffi.outlive_presenter_reoffer(self._store.handle, presenter_id.encode("utf-8")))

    def add_response_handler(self, handler_id: str, function: typing.Callable[[Message], bool]) -> None:
        """function(message) -> bool for answered messages; True removes it."""
        _register(_ffi.outlive_response_handler_add, self._store, handler_id, _respond, function)

    def remove_response_handler(self, handler_id: str) -> None:
        """Removes a response handler of this process."""
        check(_ffi.outlive_response_handler_remove(self._store.handle, handler_id.encode("utf-8")))

    def add_auto_resolver(self, resolver_id: str,
                          function: typing.Callable[[Message], typing.Union[str, bool, None]]) -> None:
        """function(message) -> a choice id (answer), True (resolve without an
        answer) or None (leave it), before presenters see it."""
        _register(_ffi.outlive_auto_resolver_add, self._store, resolver_id, _auto_resolve, function)

    def remove_auto_resolver(self, resolver_id: str) -> None:
        """Removes an auto resolver of this process."""
        check(_ffi.outlive_auto_resolver_remove(self._store.handle, resolver_id.encode("utf-8")))
