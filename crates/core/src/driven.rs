//! Caller-driven requests: a request whose connection is driven by the thread that reads it.
//!
//! A blocking reader (the `io` module's `BlockingObjectReader`) runs its GET on a single-thread
//! runtime of its own, driven only while its caller reads. Inside that scope two things change:
//!
//! - The store's HTTP client opens a connection of the reader's own (HTTP/1.1, not pooled), so
//!   the socket is read on the caller's thread and no connection of that runtime outlives it
//!   or is shared with another runtime (the cloud module's shared HTTP connector).
//! - Work that must outlive the request (a credential refresh task that other requests join)
//!   is spawned on the **background** runtime the scope names, never on the reader's runtime,
//!   which stops being driven when the reader is idle and is dropped with it.

use std::future::Future;

use tokio::runtime::Handle;

tokio::task_local! {
    static SCOPE: Handle;
}

/// Runs `fut` as a caller-driven request: its connection is its own and long-lived work goes
/// to `background`.
pub(crate) async fn scoped<F: Future>(background: Handle, fut: F) -> F::Output {
    SCOPE.scope(background, fut).await
}

/// Whether the current task runs a caller-driven request (see the module docs).
pub(crate) fn in_scope() -> bool {
    SCOPE.try_with(|_| ()).is_ok()
}

/// Where work that outlives the current request is spawned: the background runtime of a
/// caller-driven scope, else the current runtime; `None` outside any runtime.
pub(crate) fn background() -> Option<Handle> {
    SCOPE
        .try_with(Handle::clone)
        .ok()
        .or_else(|| Handle::try_current().ok())
}
