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
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use tokio::runtime::Handle;

/// What a caller-driven request carries.
#[derive(Clone)]
struct Scope {
    background: Handle,
    /// The longest a read of the body may wait for the network, ms, as the store's client
    /// options give it (`u64::MAX`: unbounded; 0: not reported).
    wait_millis: Arc<AtomicU64>,
}

tokio::task_local! {
    static SCOPE: Scope;
}

/// Runs `fut` as a caller-driven request: its connection is its own, long-lived work goes to
/// `background`, and the store reports into `wait_millis` how long a read may wait.
pub(crate) async fn scoped<F: Future>(
    background: Handle,
    wait_millis: Arc<AtomicU64>,
    fut: F,
) -> F::Output {
    SCOPE
        .scope(
            Scope {
                background,
                wait_millis,
            },
            fut,
        )
        .await
}

/// Whether the current task runs a caller-driven request (see the module docs).
pub(crate) fn in_scope() -> bool {
    SCOPE.try_with(|_| ()).is_ok()
}

/// Inside a caller-driven request: records how long a read of its body may wait for the
/// network (`None`: unbounded). Outside: nothing.
pub(crate) fn report_wait(wait: Option<Duration>) {
    let millis = wait.map_or(u64::MAX, |w| {
        u64::try_from(w.as_millis()).unwrap_or(u64::MAX).max(1)
    });
    let _ = SCOPE.try_with(|s| s.wait_millis.store(millis, Ordering::Relaxed));
}

/// Where work that outlives the current request is spawned: the background runtime of a
/// caller-driven scope, else the current runtime; `None` outside any runtime.
pub(crate) fn background() -> Option<Handle> {
    SCOPE
        .try_with(|s| s.background.clone())
        .ok()
        .or_else(|| Handle::try_current().ok())
}
