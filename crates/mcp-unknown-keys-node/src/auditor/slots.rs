//! Each live auditor of this thread by number, so that the package's
//! `audit` reaches its auditor through a plain function call: napi-rs's
//! bookkeeping for a method's `this` costs more than a small call's whole
//! audit. A JavaScript thread (the main one, each worker) has its own.

use std::cell::RefCell;
use std::rc::{Rc, Weak};

use super::State;

thread_local! {
    static SLOTS: RefCell<Vec<Weak<State>>> = const { RefCell::new(Vec::new()) };
}

/// Keeps `state` in a free slot; its number.
pub fn insert(state: &Rc<State>) -> u32 {
    SLOTS.with_borrow_mut(|slots| {
        let weak = Rc::downgrade(state);
        match slots.iter().position(|slot| slot.strong_count() == 0) {
            Some(free) => {
                slots[free] = weak;
                free as u32
            }
            None => {
                slots.push(weak);
                (slots.len() - 1) as u32
            }
        }
    })
}

/// The auditor in `slot`, if it is still alive.
pub fn get(slot: u32) -> Option<Rc<State>> {
    SLOTS.with_borrow(|slots| slots.get(slot as usize)?.upgrade())
}

/// Frees `slot` (its auditor is being dropped).
pub fn remove(slot: u32) {
    SLOTS.with_borrow_mut(|slots| {
        if let Some(slot) = slots.get_mut(slot as usize) {
            *slot = Weak::new();
        }
    });
}
