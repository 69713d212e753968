//! The table of open stores behind the `long` handles Java holds. A handle is a number, never a
//! pointer: a call on a closed handle finds nothing (IllegalStateException), and a call racing
//! with `close` keeps its own `Arc` until it finishes, so there is no use-after-free.

use std::collections::HashMap;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, RwLock};

use once_cell::sync::Lazy;

use crate::store::VendedStore;

static STORES: Lazy<RwLock<HashMap<i64, Arc<VendedStore>>>> = Lazy::new(|| RwLock::new(HashMap::new()));
static NEXT: AtomicI64 = AtomicI64::new(1);

/// Registers `store` and returns its handle (> 0).
pub(crate) fn insert(store: VendedStore) -> i64 {
    let handle = NEXT.fetch_add(1, Ordering::Relaxed);
    STORES
        .write()
        .unwrap_or_else(|p| p.into_inner())
        .insert(handle, Arc::new(store));
    handle
}

/// The store behind `handle`, if it is open.
pub(crate) fn get(handle: i64) -> Option<Arc<VendedStore>> {
    STORES.read().unwrap_or_else(|p| p.into_inner()).get(&handle).cloned()
}

/// Closes `handle`; returns whether it was open.
pub(crate) fn remove(handle: i64) -> bool {
    let removed = STORES.write().unwrap_or_else(|p| p.into_inner()).remove(&handle);
    removed.is_some()
}
