//! The message queue: durable messages shown to the user once, by the best
//! presenter of whichever process has one, then answered and removed.
use crate::callback::{context_mut, into_context, release};
use crate::error::{check, Error, Result};
use crate::handler::HandlerView;
use crate::panics;
use crate::store::Store;
use crate::text::{borrowed, c_opt, c_string, id_from_buffer, opt_ptr};
use crate::values::ArgsView;
use outlive_sys as sys;
use std::ffi::{c_char, c_void, CString};
use std::marker::PhantomData;
use std::ptr::NonNull;

/// Presenter priorities: the highest wins; 0 declines.
pub const PRIORITY_WONT_PRESENT: i32 = sys::OUTLIVE_PRIORITY_WONT_PRESENT;
pub const PRIORITY_LOW: i32 = sys::OUTLIVE_PRIORITY_LOW;
pub const PRIORITY_DEFAULT: i32 = sys::OUTLIVE_PRIORITY_DEFAULT;
pub const PRIORITY_HIGH: i32 = sys::OUTLIVE_PRIORITY_HIGH;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ChoiceKind {
    Regular,
    Cancel,
    Destructive,
    Default,
}

impl ChoiceKind {
    fn to_raw(self) -> sys::outlive_choice_kind {
        match self {
            ChoiceKind::Regular => sys::OUTLIVE_CHOICE_REGULAR,
            ChoiceKind::Cancel => sys::OUTLIVE_CHOICE_CANCEL,
            ChoiceKind::Destructive => sys::OUTLIVE_CHOICE_DESTRUCTIVE,
            ChoiceKind::Default => sys::OUTLIVE_CHOICE_DEFAULT,
        }
    }

    fn from_raw(raw: sys::outlive_choice_kind) -> ChoiceKind {
        match raw {
            sys::OUTLIVE_CHOICE_CANCEL => ChoiceKind::Cancel,
            sys::OUTLIVE_CHOICE_DESTRUCTIVE => ChoiceKind::Destructive,
            sys::OUTLIVE_CHOICE_DEFAULT => ChoiceKind::Default,
            _ => ChoiceKind::Regular,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Choice {
    pub id: String,
    pub label: String,
    pub kind: ChoiceKind,
}

/// A draft of a message, posted with `Store::message_post` (and reusable).
/// Send, not Sync: the C API lets one thread at a time use a draft.
pub struct MessageDraft(NonNull<sys::outlive_message_draft>);
unsafe impl Send for MessageDraft {}

impl MessageDraft {
    pub fn new(category: &str, title: &str) -> Result<MessageDraft> {
        let (category, title) = (c_string(category)?, c_string(title)?);
        let mut out = std::ptr::null_mut();
        check(unsafe { sys::outlive_message_draft_new(category.as_ptr(), title.as_ptr(), &mut out) })?;
        Ok(MessageDraft(NonNull::new(out).expect("a draft")))
    }

    fn raw(&self) -> *mut sys::outlive_message_draft {
        self.0.as_ptr()
    }

    pub fn text(&mut self, text: Option<&str>) -> Result<&mut Self> {
        let text = c_opt(text)?;
        check(unsafe { sys::outlive_message_draft_set_text(self.raw(), opt_ptr(&text)) })?;
        Ok(self)
    }

    pub fn scope(&mut self, scope: Option<&str>) -> Result<&mut Self> {
        let scope = c_opt(scope)?;
        check(unsafe { sys::outlive_message_draft_set_scope(self.raw(), opt_ptr(&scope)) })?;
        Ok(self)
    }

    pub fn thread(&mut self, thread: Option<&str>) -> Result<&mut Self> {
        let thread = c_opt(thread)?;
        check(unsafe { sys::outlive_message_draft_set_thread(self.raw(), opt_ptr(&thread)) })?;
        Ok(self)
    }

    pub fn choice(&mut self, id: &str, label: &str, kind: ChoiceKind) -> Result<&mut Self> {
        let (id, label) = (c_string(id)?, c_string(label)?);
        check(unsafe {
            sys::outlive_message_draft_add_choice(self.raw(), id.as_ptr(), label.as_ptr(), kind.to_raw())
        })?;
        Ok(self)
    }

    pub fn payload(&mut self, payload: Option<&ArgsView>) -> Result<&mut Self> {
        check(unsafe {
            sys::outlive_message_draft_set_payload(self.raw(), payload.map_or(std::ptr::null(), ArgsView::raw))
        })?;
        Ok(self)
    }

    /// The durable response handler, called in a process that resolves it
    /// with `message_id`, `choice` and `scope` once the message is answered.
    pub fn response_handler(&mut self, handler: Option<&HandlerView>) -> Result<&mut Self> {
        check(unsafe {
            sys::outlive_message_draft_set_response_handler(
                self.raw(),
                handler.map_or(std::ptr::null(), HandlerView::raw),
            )
        })?;
        Ok(self)
    }

    pub fn auto_remove(&mut self, auto_remove: bool) -> Result<&mut Self> {
        check(unsafe { sys::outlive_message_draft_set_auto_remove(self.raw(), auto_remove) })?;
        Ok(self)
    }
}

impl Drop for MessageDraft {
    fn drop(&mut self) {
        unsafe { sys::outlive_message_draft_free(self.raw()) }
    }
}

/// A message, reached as `&Message`: a callback's view (valid during the
/// call only) or a [`MessageSnapshot`] you own.
#[repr(C)]
pub struct Message {
    _opaque: [u8; 0],
    _not_send: PhantomData<*mut u8>,
}

impl Message {
    unsafe fn from_raw<'a>(raw: *const sys::outlive_message) -> &'a Message {
        unsafe { &*(raw as *const Message) }
    }

    fn raw(&self) -> *const sys::outlive_message {
        self as *const Message as *const sys::outlive_message
    }

    pub fn id(&self) -> &str {
        unsafe { borrowed(sys::outlive_message_id(self.raw())) }.unwrap_or("")
    }
    pub fn category(&self) -> &str {
        unsafe { borrowed(sys::outlive_message_category(self.raw())) }.unwrap_or("")
    }
    pub fn title(&self) -> &str {
        unsafe { borrowed(sys::outlive_message_title(self.raw())) }.unwrap_or("")
    }
    pub fn text(&self) -> Option<&str> {
        unsafe { borrowed(sys::outlive_message_text(self.raw())) }
    }
    pub fn scope(&self) -> Option<&str> {
        unsafe { borrowed(sys::outlive_message_scope(self.raw())) }
    }
    pub fn thread(&self) -> Option<&str> {
        unsafe { borrowed(sys::outlive_message_thread(self.raw())) }
    }
    /// The answer, once it was answered.
    pub fn choice(&self) -> Option<&str> {
        unsafe { borrowed(sys::outlive_message_choice(self.raw())) }
    }
    pub fn payload(&self) -> Option<&ArgsView> {
        unsafe { ArgsView::from_raw(sys::outlive_message_payload(self.raw())) }
    }
    /// Seconds since the epoch when it was posted.
    pub fn date(&self) -> f64 {
        unsafe { sys::outlive_message_date(self.raw()) }
    }
    pub fn choices(&self) -> Vec<Choice> {
        (0..unsafe { sys::outlive_message_choice_count(self.raw()) })
            .filter_map(|i| {
                let (mut id, mut label, mut kind) = (std::ptr::null(), std::ptr::null(), 0);
                let status = unsafe { sys::outlive_message_choice_at(self.raw(), i, &mut id, &mut label, &mut kind) };
                (status == sys::OUTLIVE_OK).then(|| Choice {
                    id: unsafe { borrowed(id) }.unwrap_or("").to_string(),
                    label: unsafe { borrowed(label) }.unwrap_or("").to_string(),
                    kind: ChoiceKind::from_raw(kind),
                })
            })
            .collect()
    }
    pub fn is_presented(&self) -> bool {
        unsafe { sys::outlive_message_is_presented(self.raw()) }
    }
    pub fn is_handled(&self) -> bool {
        unsafe { sys::outlive_message_is_handled(self.raw()) }
    }
    pub fn is_removed(&self) -> bool {
        unsafe { sys::outlive_message_is_removed(self.raw()) }
    }
    pub fn auto_removes(&self) -> bool {
        unsafe { sys::outlive_message_auto_removes(self.raw()) }
    }
    pub fn has_response_handler(&self) -> bool {
        unsafe { sys::outlive_message_has_response_handler(self.raw()) }
    }
}

impl std::fmt::Debug for Message {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Message({} {:?}: {:?})", self.id(), self.category(), self.title())
    }
}

/// A stored message read with `Store::message_get`, freed on drop. Send: a
/// snapshot is the caller's memory, read by one thread at a time through `&`.
pub struct MessageSnapshot(NonNull<sys::outlive_message>);
unsafe impl Send for MessageSnapshot {}

impl std::ops::Deref for MessageSnapshot {
    type Target = Message;
    fn deref(&self) -> &Message {
        unsafe { Message::from_raw(self.0.as_ptr()) }
    }
}

impl Drop for MessageSnapshot {
    fn drop(&mut self) {
        unsafe { sys::outlive_message_free(self.0.as_ptr()) }
    }
}

/// A presentation token: finish it exactly once, from any thread, now or
/// later (after the store was closed too: then it changes nothing). Send and
/// Sync: `outlive_presentation_finish` may be called from any thread, and the
/// token is a handle, not memory (it needs no freeing).
pub struct Presentation(*mut sys::outlive_presentation);
unsafe impl Send for Presentation {}
unsafe impl Sync for Presentation {}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PresentationResult {
    /// The user saw it: it is offered to nobody else.
    Presented,
    /// Other presenters and processes may have it.
    NotPresented,
}

impl Presentation {
    /// Ends the presentation; `choice` is the user's answer, if any. A second
    /// finish is `Status::State`; an unknown choice `Status::NotFound` (the
    /// token stays unfinished).
    pub fn finish(
        &self,
        result: PresentationResult,
        requires_end_notification: bool,
        choice: Option<&str>,
    ) -> Result<()> {
        let choice = c_opt(choice)?;
        let result = match result {
            PresentationResult::Presented => sys::OUTLIVE_PRESENTATION_PRESENTED,
            PresentationResult::NotPresented => sys::OUTLIVE_PRESENTATION_NOT_PRESENTED,
        };
        check(unsafe { sys::outlive_presentation_finish(self.0, result, requires_end_notification, opt_ptr(&choice)) })
    }
}

/// A presenter's closures: `priority` (0 declines), `present` (finish the
/// token it gets, now or later) and optionally `end`. `Send`: they run on the
/// store's loop, whichever thread dispatches it.
pub struct Presenter {
    priority: Box<dyn FnMut(&Message) -> i32 + Send>,
    present: Box<dyn FnMut(&Message, Presentation) + Send>,
    end: Option<Box<dyn FnMut(&Message) + Send>>,
}

impl Presenter {
    pub fn new(
        priority: impl FnMut(&Message) -> i32 + Send + 'static,
        present: impl FnMut(&Message, Presentation) + Send + 'static,
    ) -> Presenter {
        Presenter { priority: Box::new(priority), present: Box::new(present), end: None }
    }

    /// Called before a message it presented with an end notification is deleted.
    pub fn on_end(mut self, end: impl FnMut(&Message) + Send + 'static) -> Presenter {
        self.end = Some(Box::new(end));
        self
    }
}

/// What an auto-resolver does with a message not yet answered.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Resolution {
    /// Leave it to presenters.
    Leave,
    /// Answer it with this choice, as the user would.
    Answer(String),
    /// Remove it without an answer (the problem went away).
    Resolve,
}

#[derive(Clone, Copy)]
enum Kind {
    Presenter,
    ResponseHandler,
    AutoResolver,
}

/// A presenter, response handler or auto-resolver registration: removed when
/// dropped (its closures are freed by the library's release once no call of
/// them is under way). It borrows the store; closing the store ends it too.
#[must_use = "dropping the registration removes it at once"]
pub struct Registration<'s> {
    store: &'s Store,
    id: CString,
    kind: Kind,
}

impl Registration<'_> {
    /// Keeps the registration until the store is closed.
    pub fn keep(self) {
        std::mem::forget(self)
    }
}

impl Drop for Registration<'_> {
    fn drop(&mut self) {
        let (store, id) = (self.store.raw(), self.id.as_ptr());
        // NOT_FOUND cannot happen for a live registration; nothing to report from drop.
        let _ = unsafe {
            match self.kind {
                Kind::Presenter => sys::outlive_presenter_remove(store, id),
                Kind::ResponseHandler => sys::outlive_response_handler_remove(store, id),
                Kind::AutoResolver => sys::outlive_auto_resolver_remove(store, id),
            }
        };
    }
}

unsafe extern "C" fn presenter_priority(message: *const sys::outlive_message, context: *mut c_void) -> i32 {
    let presenter = unsafe { context_mut::<Presenter>(context) };
    panics::catch(0, || (presenter.priority)(unsafe { Message::from_raw(message) }))
}

unsafe extern "C" fn presenter_present(
    message: *const sys::outlive_message,
    presentation: *mut sys::outlive_presentation,
    context: *mut c_void,
) {
    let presenter = unsafe { context_mut::<Presenter>(context) };
    panics::catch((), || (presenter.present)(unsafe { Message::from_raw(message) }, Presentation(presentation)))
}

unsafe extern "C" fn presenter_end(message: *const sys::outlive_message, context: *mut c_void) {
    let presenter = unsafe { context_mut::<Presenter>(context) };
    if let Some(end) = presenter.end.as_mut() {
        panics::catch((), || end(unsafe { Message::from_raw(message) }))
    }
}

type ResponseHandler = Box<dyn FnMut(&Message) -> bool + Send>;
type AutoResolver = Box<dyn FnMut(&Message) -> Resolution + Send>;

unsafe extern "C" fn response_handler(message: *const sys::outlive_message, context: *mut c_void) -> bool {
    let handler = unsafe { context_mut::<ResponseHandler>(context) };
    panics::catch(false, || handler(unsafe { Message::from_raw(message) }))
}

unsafe extern "C" fn auto_resolver(
    message: *const sys::outlive_message,
    out_choice: *mut c_char,
    context: *mut c_void,
) -> bool {
    let resolver = unsafe { context_mut::<AutoResolver>(context) };
    panics::catch(false, || match resolver(unsafe { Message::from_raw(message) }) {
        Resolution::Leave => false,
        Resolution::Resolve => {
            unsafe { *out_choice = 0 };
            true
        }
        Resolution::Answer(choice) => {
            // The buffer holds OUTLIVE_MESSAGE_MAX_CHOICE_ID_SIZE bytes and a NUL;
            // a longer (or NUL-holding) id is no choice of any message: leave it.
            let bytes = choice.as_bytes();
            if bytes.is_empty() || bytes.len() > sys::OUTLIVE_MESSAGE_MAX_CHOICE_ID_SIZE || bytes.contains(&0) {
                return false;
            }
            unsafe {
                std::ptr::copy_nonoverlapping(bytes.as_ptr() as *const c_char, out_choice, bytes.len());
                *out_choice.add(bytes.len()) = 0;
            }
            true
        }
    })
}

impl Store {
    /// Stores the draft as a new message; returns its id.
    pub fn message_post(&self, draft: &MessageDraft) -> Result<String> {
        let mut id = [0 as c_char; sys::OUTLIVE_ID_SIZE];
        check(unsafe { sys::outlive_message_post(self.raw(), draft.raw(), id.as_mut_ptr()) })?;
        Ok(id_from_buffer(&id))
    }

    /// Answers a message with one of its choices, from any process.
    pub fn message_respond(&self, message_id: &str, choice_id: &str) -> Result<()> {
        let (id, choice) = (c_string(message_id)?, c_string(choice_id)?);
        check(unsafe { sys::outlive_message_respond(self.raw(), id.as_ptr(), choice.as_ptr()) })
    }

    pub fn message_mute(&self, message_id: &str) -> Result<()> {
        let id = c_string(message_id)?;
        check(unsafe { sys::outlive_message_mute(self.raw(), id.as_ptr()) })
    }

    pub fn message_remove(&self, message_id: &str) -> Result<()> {
        let id = c_string(message_id)?;
        check(unsafe { sys::outlive_message_remove(self.raw(), id.as_ptr()) })
    }

    /// Removes every message of a scope; returns how many.
    pub fn messages_remove_scope(&self, scope: &str) -> Result<usize> {
        let scope = c_string(scope)?;
        let mut count = 0;
        check(unsafe { sys::outlive_messages_remove_scope(self.raw(), scope.as_ptr(), &mut count) })?;
        Ok(count)
    }

    /// Stored messages of a category (None: of all).
    pub fn messages_count(&self, category: Option<&str>) -> Result<usize> {
        let category = c_opt(category)?;
        let mut count = 0;
        check(unsafe { sys::outlive_messages_count(self.raw(), opt_ptr(&category), &mut count) })?;
        Ok(count)
    }

    /// Ids of stored messages in posting order, of a scope and/or category.
    pub fn messages_list(
        &self,
        scope: Option<&str>,
        category: Option<&str>,
        after: Option<&str>,
        limit: usize,
    ) -> Result<Vec<String>> {
        let (scope, category, after) = (c_opt(scope)?, c_opt(category)?, c_opt(after)?);
        let mut list = std::ptr::null_mut();
        check(unsafe {
            sys::outlive_message_list_new(
                self.raw(),
                opt_ptr(&scope),
                opt_ptr(&category),
                opt_ptr(&after),
                limit,
                &mut list,
            )
        })?;
        let ids = (0..unsafe { sys::outlive_message_list_count(list) })
            .map(|i| unsafe { borrowed(sys::outlive_message_list_id(list, i)) }.unwrap_or("").to_string())
            .collect();
        unsafe { sys::outlive_message_list_free(list) };
        Ok(ids)
    }

    /// A snapshot of a stored message; `Ok(None)` when there is none.
    pub fn message_get(&self, message_id: &str) -> Result<Option<MessageSnapshot>> {
        let id = c_string(message_id)?;
        let mut out = std::ptr::null_mut();
        let status = unsafe { sys::outlive_message_get(self.raw(), id.as_ptr(), &mut out) };
        if status == sys::OUTLIVE_E_NOT_FOUND {
            return Ok(None);
        }
        check(status)?;
        Ok(Some(MessageSnapshot(NonNull::new(out).expect("a message"))))
    }

    pub fn messages_set_category_limit(&self, limit: usize) -> Result<()> {
        check(unsafe { sys::outlive_messages_set_category_limit(self.raw(), limit) })
    }

    /// Registers a presenter on this handle under `id` (unique per handle).
    pub fn presenter_add(&self, id: &str, presenter: Presenter) -> Result<Registration<'_>> {
        let c_id = c_string(id)?;
        let callbacks = sys::outlive_presenter {
            version: sys::OUTLIVE_PRESENTER_VERSION,
            priority: Some(presenter_priority),
            present: Some(presenter_present),
            end: Some(presenter_end),
        };
        let context = into_context(presenter);
        let status = unsafe {
            sys::outlive_presenter_add(self.raw(), c_id.as_ptr(), &callbacks, context, Some(release::<Presenter>))
        };
        self.registered(status, context, release::<Presenter>, c_id, Kind::Presenter)
    }

    /// Offers the presenter again the messages it declined or did not present.
    pub fn presenter_reoffer(&self, id: &str) -> Result<()> {
        let id = c_string(id)?;
        check(unsafe { sys::outlive_presenter_reoffer(self.raw(), id.as_ptr()) })
    }

    /// Registers a response handler: called for an answered message
    /// (`Message::choice`); returning true removes the message.
    pub fn response_handler_add(
        &self,
        id: &str,
        handler: impl FnMut(&Message) -> bool + Send + 'static,
    ) -> Result<Registration<'_>> {
        let c_id = c_string(id)?;
        let context = into_context::<ResponseHandler>(Box::new(handler));
        let status = unsafe {
            sys::outlive_response_handler_add(
                self.raw(),
                c_id.as_ptr(),
                Some(response_handler),
                context,
                Some(release::<ResponseHandler>),
            )
        };
        self.registered(status, context, release::<ResponseHandler>, c_id, Kind::ResponseHandler)
    }

    /// Registers an auto-resolver, asked about each message not yet answered
    /// before presenters see it.
    pub fn auto_resolver_add(
        &self,
        id: &str,
        resolver: impl FnMut(&Message) -> Resolution + Send + 'static,
    ) -> Result<Registration<'_>> {
        let c_id = c_string(id)?;
        let context = into_context::<AutoResolver>(Box::new(resolver));
        let status = unsafe {
            sys::outlive_auto_resolver_add(
                self.raw(),
                c_id.as_ptr(),
                Some(auto_resolver),
                context,
                Some(release::<AutoResolver>),
            )
        };
        self.registered(status, context, release::<AutoResolver>, c_id, Kind::AutoResolver)
    }

    fn registered(
        &self,
        status: sys::outlive_status,
        context: *mut c_void,
        free: unsafe extern "C" fn(*mut c_void),
        id: CString,
        kind: Kind,
    ) -> Result<Registration<'_>> {
        if status != sys::OUTLIVE_OK {
            // The library does not release the context of a failed registration.
            let error = Error::last(status);
            unsafe { free(context) };
            return Err(error);
        }
        Ok(Registration { store: self, id, kind })
    }
}
