//! Per-store HTTP request counters, kept by the store's [`super::http::SharedHttpConnector`]:
//! every attempt `object_store` sends (after signing, each of its retries included) passes
//! through it once.

use std::sync::atomic::{AtomicU64, Ordering};

use object_store::client::{HttpError, HttpErrorKind, HttpResponse};

/// A snapshot of one store's request counters (`VendedStore::stats`).
///
/// All fields are counts since the store (its shared registry entry) was built; they only grow.
/// A request is one HTTP attempt: `object_store` retries a failed request as a new attempt, and
/// each attempt is counted. A caller-driven read's request is counted like any other. Requests
/// of `file://` and `memory://` stores do not exist: their counters stay 0.
///
/// The JNI binding flattens it into a `long[]` in field order.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RequestStats {
    /// HTTP requests sent (attempts), whatever their outcome.
    pub requests: u64,
    /// `GET` requests (object reads, ranges, listings).
    pub get: u64,
    /// `HEAD` requests (object metadata).
    pub head: u64,
    /// `PUT` requests (object writes, multipart parts, copies).
    pub put: u64,
    /// `POST` requests (multipart create/complete, bulk deletes).
    pub post: u64,
    /// `DELETE` requests (object deletes, multipart aborts).
    pub delete: u64,
    /// Attempts that failed in a way `object_store` retries: an answer with status 5xx, 429 or
    /// 408, or a transport error (connect, send, timeout, interrupted body). `object_store`
    /// retries such an attempt unless its retry budget (`max_retries`, `retry_timeout`) is
    /// spent, and a timeout or interrupted body only for idempotent requests; so this is an
    /// upper bound of the retries made, equal to them when no request exhausts its budget. A
    /// 409 retried under `retry_on_conflict` and a 200 whose body holds an error are not
    /// counted.
    pub retryable_failures: u64,
    /// Answers with status 429 (Too Many Requests) or 503 (Slow Down / Service Unavailable):
    /// the endpoint throttling (a subset of `retryable_failures`).
    pub throttled: u64,
    /// Calls of the store's credential provider (the refresher's
    /// [`crate::refresh::RefreshStats::fetches`]); 0 for stores without a provider.
    pub credential_refreshes: u64,
    /// Whole-object reads whose bytes had the checksum the service stores (see
    /// [`crate::cloud::integrity`]).
    pub checksums_matched: u64,
    /// Whole-object reads whose bytes did not (each was read once more, or failed).
    pub checksum_mismatches: u64,
}

/// The live counters behind [`RequestStats`] (atomics, relaxed: each is exact, a snapshot is
/// not one instant across fields).
#[derive(Debug, Default)]
pub struct RequestCounters {
    requests: AtomicU64,
    get: AtomicU64,
    head: AtomicU64,
    put: AtomicU64,
    post: AtomicU64,
    delete: AtomicU64,
    retryable_failures: AtomicU64,
    throttled: AtomicU64,
    checksums_matched: AtomicU64,
    checksum_mismatches: AtomicU64,
}

impl RequestCounters {
    /// Counts one attempt of `method`, when it is sent.
    pub(crate) fn sent(&self, method: &reqwest::Method) {
        let add = |c: &AtomicU64| c.fetch_add(1, Ordering::Relaxed);
        add(&self.requests);
        match *method {
            reqwest::Method::GET => add(&self.get),
            reqwest::Method::HEAD => add(&self.head),
            reqwest::Method::PUT => add(&self.put),
            reqwest::Method::POST => add(&self.post),
            reqwest::Method::DELETE => add(&self.delete),
            _ => 0,
        };
    }

    /// Counts the outcome of one attempt (see [`RequestStats::retryable_failures`]).
    pub(crate) fn answered(&self, outcome: &Result<HttpResponse, HttpError>) {
        let (retryable, throttled) = match outcome {
            Ok(r) => {
                let s = r.status().as_u16();
                (s >= 500 || s == 429 || s == 408, s == 429 || s == 503)
            }
            Err(e) => (
                matches!(
                    e.kind(),
                    HttpErrorKind::Connect
                        | HttpErrorKind::Request
                        | HttpErrorKind::Timeout
                        | HttpErrorKind::Interrupted
                ),
                false,
            ),
        };
        if retryable {
            self.retryable_failures.fetch_add(1, Ordering::Relaxed);
        }
        if throttled {
            self.throttled.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Counts one checked whole-object read: its bytes `matched` the stored checksum or not.
    pub(crate) fn checked(&self, matched: bool) {
        let counter = if matched {
            &self.checksums_matched
        } else {
            &self.checksum_mismatches
        };
        counter.fetch_add(1, Ordering::Relaxed);
    }

    /// The counters now, with `credential_refreshes` provider calls.
    pub fn snapshot(&self, credential_refreshes: u64) -> RequestStats {
        let get = |c: &AtomicU64| c.load(Ordering::Relaxed);
        RequestStats {
            requests: get(&self.requests),
            get: get(&self.get),
            head: get(&self.head),
            put: get(&self.put),
            post: get(&self.post),
            delete: get(&self.delete),
            retryable_failures: get(&self.retryable_failures),
            throttled: get(&self.throttled),
            credential_refreshes,
            checksums_matched: get(&self.checksums_matched),
            checksum_mismatches: get(&self.checksum_mismatches),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(status: u16) -> Result<HttpResponse, HttpError> {
        let mut r = HttpResponse::new(bytes::Bytes::new().into());
        *r.status_mut() = reqwest::StatusCode::from_u16(status).unwrap();
        Ok(r)
    }

    #[test]
    fn methods_retryable_failures_and_throttling_are_counted_per_attempt() {
        let c = RequestCounters::default();
        for m in [
            reqwest::Method::GET,
            reqwest::Method::GET,
            reqwest::Method::HEAD,
            reqwest::Method::PUT,
            reqwest::Method::POST,
            reqwest::Method::DELETE,
            reqwest::Method::OPTIONS,
        ] {
            c.sent(&m);
        }
        for status in [200, 404, 500, 503, 429, 408, 409] {
            c.answered(&answer(status));
        }
        let io = || std::io::Error::other("x");
        c.answered(&Err(HttpError::new(HttpErrorKind::Connect, io())));
        c.answered(&Err(HttpError::new(HttpErrorKind::Decode, io())));
        let s = c.snapshot(3);
        assert_eq!(
            s,
            RequestStats {
                requests: 7,
                get: 2,
                head: 1,
                put: 1,
                post: 1,
                delete: 1,
                retryable_failures: 5, // 500, 503, 429, 408, connect
                throttled: 2,          // 503, 429
                credential_refreshes: 3,
                checksums_matched: 0,
                checksum_mismatches: 0,
            }
        );
    }
}
