//! Messages: drafts, presenters, response handlers and auto-resolvers as
//! Rust closures, on a real store.
mod common;
use common::{dispatch_until, TempDir};
use outlive::{
    Args, ChoiceKind, MessageDraft, PresentationResult, Presenter, Resolution, Status, Store, PRIORITY_DEFAULT,
};
use std::sync::{Arc, Mutex};

fn conflict_draft() -> MessageDraft {
    let mut payload = Args::new().unwrap();
    payload.set_string("file", "notes.txt").unwrap();
    let mut draft = MessageDraft::new("sync.conflict", "Conflict in notes.txt").unwrap();
    draft
        .text(Some("notes.txt changed here and on the server."))
        .unwrap()
        .scope(Some("account-1"))
        .unwrap()
        .choice("keep-both", "Keep both", ChoiceKind::Default)
        .unwrap()
        .choice("use-server", "Use the server's", ChoiceKind::Destructive)
        .unwrap()
        .payload(Some(&payload))
        .unwrap();
    draft
}

#[test]
fn a_presented_answer_reaches_the_response_handler_and_the_end_notification_follows() {
    let dir = TempDir::new("messages");
    let store = Store::open(dir.store(), "app").unwrap();
    let log = Arc::new(Mutex::new(Vec::<String>::new()));
    let (l1, l2, l3) = (log.clone(), log.clone(), log.clone());
    let presenter = Presenter::new(
        |message| if message.category() == "sync.conflict" { PRIORITY_DEFAULT } else { 0 },
        move |message, presentation| {
            let choices: Vec<_> = message.choices().into_iter().map(|c| (c.id, c.kind)).collect();
            assert_eq!(
                choices,
                [("keep-both".into(), ChoiceKind::Default), ("use-server".into(), ChoiceKind::Destructive)]
            );
            let file = message.payload().unwrap().get_string("file").unwrap().to_string();
            l1.lock().unwrap().push(format!("present {} ({file})", message.title()));
            presentation.finish(PresentationResult::Presented, true, Some("keep-both")).unwrap();
            let again = presentation.finish(PresentationResult::Presented, true, None).unwrap_err();
            assert_eq!(again.status, Status::State);
        },
    )
    .on_end(move |message| l2.lock().unwrap().push(format!("end {}", message.title())));
    let _presenter = store.presenter_add("dialog", presenter).unwrap();
    let _responses = store
        .response_handler_add("resolver", move |message| {
            l3.lock().unwrap().push(format!("response {} {}", message.choice().unwrap(), message.scope().unwrap()));
            true
        })
        .unwrap();
    let id = store.message_post(&conflict_draft()).unwrap();
    let snapshot = store.message_get(&id).unwrap().unwrap();
    assert_eq!((snapshot.id(), snapshot.text()), (id.as_str(), Some("notes.txt changed here and on the server.")));
    drop(snapshot);
    assert!(dispatch_until(store.event_loop(), 100, || store.messages_count(None).unwrap() == 0));
    assert!(dispatch_until(store.event_loop(), 20, || log.lock().unwrap().len() == 3));
    assert_eq!(
        *log.lock().unwrap(),
        ["present Conflict in notes.txt (notes.txt)", "response keep-both account-1", "end Conflict in notes.txt"]
    );
    assert!(store.message_get(&id).unwrap().is_none());
    assert_eq!(store.message_respond(&id, "keep-both").unwrap_err().status, Status::NotFound);
}

#[test]
fn an_auto_resolver_answers_before_any_presenter_is_asked() {
    let dir = TempDir::new("messages");
    let store = Store::open(dir.store(), "app").unwrap();
    let asked = Arc::new(Mutex::new(0));
    let asked_in = asked.clone();
    let _presenter = store
        .presenter_add(
            "dialog",
            Presenter::new(
                move |_| {
                    *asked_in.lock().unwrap() += 1;
                    PRIORITY_DEFAULT
                },
                |_, _| {},
            ),
        )
        .unwrap();
    let answers = Arc::new(Mutex::new(Vec::new()));
    let answers_in = answers.clone();
    let _responses = store
        .response_handler_add("log", move |m| {
            answers_in.lock().unwrap().push(m.choice().unwrap().to_string());
            true
        })
        .unwrap();
    let _resolver = store
        .auto_resolver_add("policy", |m| {
            if m.category() == "sync.conflict" {
                Resolution::Answer("use-server".into())
            } else {
                Resolution::Leave
            }
        })
        .unwrap();
    store.message_post(&conflict_draft()).unwrap();
    assert!(dispatch_until(store.event_loop(), 100, || !answers.lock().unwrap().is_empty()));
    assert_eq!(*answers.lock().unwrap(), ["use-server"]);
    assert_eq!(*asked.lock().unwrap(), 0);
}

#[test]
fn a_dropped_registration_frees_its_closures_and_a_taken_id_is_refused() {
    let dir = TempDir::new("messages");
    let store = Store::open(dir.store(), "app").unwrap();
    let witness = Arc::new(());
    let held = witness.clone();
    let registration = store
        .presenter_add(
            "dialog",
            Presenter::new(
                move |_| {
                    let _ = &held;
                    0
                },
                |_, _| {},
            ),
        )
        .unwrap();
    let refused = store.presenter_add("dialog", Presenter::new(|_| 0, |_, _| {})).err().unwrap();
    assert_eq!(refused.status, Status::State);
    assert_eq!(Arc::strong_count(&witness), 2);
    drop(registration);
    assert_eq!(Arc::strong_count(&witness), 1);
    assert_eq!(store.presenter_reoffer("dialog").unwrap_err().status, Status::NotFound);
}

#[test]
fn messages_are_listed_counted_and_removed_by_scope() {
    let dir = TempDir::new("messages");
    let store = Store::open(dir.store(), "app").unwrap();
    let first = store.message_post(&conflict_draft()).unwrap();
    let second = store.message_post(&conflict_draft()).unwrap();
    assert_eq!(store.messages_list(None, None, None, 0).unwrap(), [first.clone(), second.clone()]);
    assert_eq!(store.messages_list(Some("account-1"), Some("sync.conflict"), Some(&first), 0).unwrap(), [second]);
    assert_eq!(store.messages_count(Some("sync.conflict")).unwrap(), 2);
    assert_eq!(store.messages_remove_scope("account-1").unwrap(), 2);
    assert_eq!(store.messages_count(None).unwrap(), 0);
    assert_eq!(MessageDraft::new("", "title").err().unwrap().status, Status::InvalidArgument);
}
