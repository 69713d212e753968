//! The audit context of requests: a short text (e.g. the Spark job and task a request is made
//! for) appended to the `User-Agent` of every HTTP request, so that endpoint logs (S3 server
//! access logs, CloudTrail `userAgent`, GCS and Azure request logs) tell which task made it.
//!
//! A binding sets the context of a thread with [`set_thread_context`] when it changes (the JNI
//! binding: `NativeBridge.setAuditContext`, called by the Hadoop FileSystem inside Spark
//! tasks). An operation started on that thread captures it ([`thread_context`]) and runs its
//! future in [`scoped`]; the store's HTTP service reads it with [`current`] (the task's scope,
//! else the polling thread's own context, for futures polled on the caller's thread). Work an
//! operation spawns onto other runtime tasks (the parallel part uploads of a multipart writer)
//! carries no context.
//!
//! The context is sanitized when set: characters outside `[A-Za-z0-9._:/=-]` and spaces become
//! `_` (runs of spaces are kept as one), at most [`MAX_CONTEXT`] characters; it is never a
//! secret (the binding sends only ids).

use std::cell::RefCell;
use std::future::Future;
use std::sync::Arc;

/// The most characters of an audit context (longer ones are cut).
pub const MAX_CONTEXT: usize = 256;

thread_local! {
    static THREAD: RefCell<Option<Arc<str>>> = const { RefCell::new(None) };
}

tokio::task_local! {
    static TASK: Option<Arc<str>>;
}

/// Sets (or with `None` or an empty text, clears) the audit context of the calling thread,
/// sanitized (see the module docs).
pub fn set_thread_context(context: Option<&str>) {
    let value = context.map(sanitize).filter(|s| !s.is_empty());
    THREAD.with(|t| *t.borrow_mut() = value.map(Arc::from));
}

/// The audit context of the calling thread, if set.
pub fn thread_context() -> Option<Arc<str>> {
    THREAD.with(|t| t.borrow().clone())
}

/// Runs `fut` with `context` as the audit context of its requests.
pub async fn scoped<F: Future>(context: Option<Arc<str>>, fut: F) -> F::Output {
    TASK.scope(context, fut).await
}

/// The audit context of the request being made now: the enclosing [`scoped`] context if there
/// is one, else the polling thread's own.
pub fn current() -> Option<Arc<str>> {
    TASK.try_with(|c| c.clone())
        .unwrap_or_else(|_| thread_context())
}

/// `user_agent` followed by a space and `context`.
pub fn user_agent_with(user_agent: &str, context: &str) -> String {
    format!("{} {context}", user_agent.trim_end())
}

/// `s` reduced to header-safe characters and [`MAX_CONTEXT`] characters (module docs).
fn sanitize(s: &str) -> String {
    let mut out = String::with_capacity(s.len().min(MAX_CONTEXT));
    for c in s.trim().chars().take(MAX_CONTEXT) {
        let keep = c.is_ascii_alphanumeric() || "._:/=-".contains(c);
        if keep {
            out.push(c);
        } else if c == ' ' {
            if !out.ends_with(' ') {
                out.push(' ');
            }
        } else {
            out.push('_');
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn contexts_are_sanitized_and_bounded() {
        assert_eq!(
            sanitize(" spark-job/7  spark-task/3.12.0 x\r\nEvil: 1\u{e9} "),
            "spark-job/7 spark-task/3.12.0 x__Evil: 1_"
        );
        assert_eq!(sanitize(&"a".repeat(1000)).len(), MAX_CONTEXT);
        let ua = user_agent_with("vended-storage/1 table/t ", &sanitize("spark-task/1.2.0"));
        assert_eq!(ua, "vended-storage/1 table/t spark-task/1.2.0");
        assert!(http_header_ok(&ua));
    }

    fn http_header_ok(s: &str) -> bool {
        reqwest::header::HeaderValue::from_str(s).is_ok()
    }

    #[test]
    fn a_thread_context_reaches_its_scoped_futures_and_not_other_threads() {
        set_thread_context(Some("spark-task/1.2.0"));
        assert_eq!(current().as_deref(), Some("spark-task/1.2.0"));
        let captured = thread_context();
        let other = std::thread::spawn(current).join().unwrap();
        assert_eq!(other, None);
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let in_scope =
            std::thread::spawn(move || rt.block_on(scoped(captured, async { current() })))
                .join()
                .unwrap();
        assert_eq!(in_scope.as_deref(), Some("spark-task/1.2.0"));
        set_thread_context(Some(""));
        assert_eq!(current(), None);
    }
}
