//! One-shot bit flips of a [`super::Proxy`], to prove that a client or an emulator notices
//! corrupted bytes: armed for the next request body, or the next response body, whose request
//! path contains a given string; the lowest bit of the body's middle byte (`len / 2`) is
//! flipped, headers unchanged. An empty body leaves the flip armed. Counted per side.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use bytes::Bytes;

/// The flips armed on a proxy (at most one per side) and how many happened.
#[derive(Default, Debug)]
pub struct ProxyFlips {
    request: Mutex<Option<String>>,
    response: Mutex<Option<String>>,
    requests_flipped: AtomicUsize,
    responses_flipped: AtomicUsize,
}

impl ProxyFlips {
    /// Flips one bit of the next non-empty request body whose path contains `path_part`,
    /// before it is forwarded (replaces an armed request flip).
    pub fn arm_request(&self, path_part: &str) {
        *self.request.lock().unwrap() = Some(path_part.to_string());
    }

    /// Flips one bit of the next non-empty response body whose request path contains
    /// `path_part`, as it is sent back (replaces an armed response flip).
    pub fn arm_response(&self, path_part: &str) {
        *self.response.lock().unwrap() = Some(path_part.to_string());
    }

    /// Request bodies flipped so far.
    pub fn requests_flipped(&self) -> usize {
        self.requests_flipped.load(Ordering::SeqCst)
    }

    /// Response bodies flipped so far.
    pub fn responses_flipped(&self) -> usize {
        self.responses_flipped.load(Ordering::SeqCst)
    }

    /// `body` of a request to `path`, flipped if a request flip is armed for it.
    pub(super) fn request_body(&self, path: &str, body: Bytes) -> Bytes {
        flip_if_armed(&self.request, &self.requests_flipped, path, body)
    }

    /// `body` of the answer to a request to `path`, flipped if a response flip is armed for it.
    pub(super) fn response_body(&self, path: &str, body: Bytes) -> Bytes {
        flip_if_armed(&self.response, &self.responses_flipped, path, body)
    }
}

fn flip_if_armed(
    armed: &Mutex<Option<String>>,
    count: &AtomicUsize,
    path: &str,
    body: Bytes,
) -> Bytes {
    let mut armed = armed.lock().unwrap();
    let hit = armed
        .as_deref()
        .is_some_and(|part| path.contains(part) && !body.is_empty());
    if !hit {
        return body;
    }
    *armed = None;
    count.fetch_add(1, Ordering::SeqCst);
    let mut bytes = body.to_vec();
    let middle = bytes.len() / 2;
    bytes[middle] ^= 0x01;
    Bytes::from(bytes)
}
