//! Tables of open objects behind the `long` handles Java holds. A handle is a number, never a
//! pointer: a call on a closed handle finds nothing (IllegalStateException), and a call racing
//! with `close` keeps its own `Arc` until it finishes, so there is no use-after-free.

use std::collections::HashMap;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, RwLock};

use once_cell::sync::Lazy;

use vended_storage::session::Session;
use vended_storage::store::VendedStore;

/// Open stores.
pub(crate) static STORES: Lazy<HandleTable<VendedStore>> = Lazy::new(HandleTable::default);
/// Open sessions.
pub(crate) static SESSIONS: Lazy<HandleTable<Session>> = Lazy::new(HandleTable::default);

/// Handles are unique across both tables and never reused within a process.
static NEXT: AtomicI64 = AtomicI64::new(1);

pub(crate) struct HandleTable<T> {
    entries: RwLock<HashMap<i64, Arc<T>>>,
}

impl<T> Default for HandleTable<T> {
    fn default() -> Self {
        Self {
            entries: RwLock::new(HashMap::new()),
        }
    }
}

impl<T> HandleTable<T> {
    /// Registers `value` and returns its handle (> 0).
    pub(crate) fn insert(&self, value: Arc<T>) -> i64 {
        let handle = NEXT.fetch_add(1, Ordering::Relaxed);
        self.entries
            .write()
            .unwrap_or_else(|p| p.into_inner())
            .insert(handle, value);
        handle
    }

    /// The value behind `handle`, if it is open.
    pub(crate) fn get(&self, handle: i64) -> Option<Arc<T>> {
        self.entries
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .get(&handle)
            .cloned()
    }

    /// The number of open handles.
    pub(crate) fn len(&self) -> usize {
        self.entries.read().unwrap_or_else(|p| p.into_inner()).len()
    }

    /// Closes `handle`; the value is dropped once in-flight calls release it.
    pub(crate) fn remove(&self, handle: i64) -> Option<Arc<T>> {
        self.entries
            .write()
            .unwrap_or_else(|p| p.into_inner())
            .remove(&handle)
    }
}
