//! End-to-end checksums (storage option [`crate::options::CHECKSUMS`], on by default): what a
//! write sends for the service to verify, and the check of a whole-object read against the
//! checksum the service stores. The rules of each cloud (which headers, which algorithm) are in
//! its `integrity.rs`; this module is the machinery they share, run by the store's HTTP
//! service ([`crate::cloud::http`]) on every request and response.
//!
//! **Reads.** A `GET` answered `200` (the whole object, no `Content-Range`) whose headers carry
//! a stored checksum the cloud's rules know, and no `Content-Encoding` (the bytes are the
//! stored bytes), gets a [`BodyCheck`]: the body is hashed as it is read, and when it ends the
//! check holds a [`Verdict`]. The check is put into the response's extensions, which
//! `object_store` hands on in [`object_store::GetResult::extensions`]; [`check_of`] finds it.
//! The body itself is never failed (`object_store` would resume a failed body with a ranged
//! `GET` that cannot be checked): the caller of a whole read looks at the verdict before it
//! hands any byte on ([`crate::VendedStore::get`]). A body that breaks part way and is resumed
//! by `object_store` leaves the check [`Verdict::Incomplete`]: not verified.
//!
//! **Writes.** Before a request is sent, the cloud's rules may add a checksum header computed
//! over the request body (Azure `Content-MD5`, GCS `x-goog-hash`), which the service verifies.
//! S3's checksums are computed by `object_store` itself (`aws_checksum_algorithm`), before the
//! request is signed.

use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use base64::Engine as _;
use bytes::Bytes;
use http_body::{Body, Frame};
use md5::Digest as _;
use object_store::client::{HttpError, HttpRequest, HttpResponse, HttpResponseBody};
use object_store::HeaderMap;

/// A checksum algorithm a service stores for whole objects.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Algorithm {
    /// CRC-64/NVME (S3 `x-amz-checksum-crc64nvme`, full object).
    Crc64Nvme,
    /// CRC-32C, Castagnoli (S3 `x-amz-checksum-crc32c`, GCS `x-goog-hash: crc32c=`).
    Crc32c,
    /// MD5 (Azure `Content-MD5`).
    Md5,
}

impl Algorithm {
    /// The length of the algorithm's checksum, bytes.
    fn len(self) -> usize {
        match self {
            Algorithm::Crc64Nvme => 8,
            Algorithm::Crc32c => 4,
            Algorithm::Md5 => 16,
        }
    }

    /// The algorithm's name in messages: `CRC64NVME`, `CRC32C`, `MD5`.
    pub fn name(self) -> &'static str {
        match self {
            Algorithm::Crc64Nvme => "CRC64NVME",
            Algorithm::Crc32c => "CRC32C",
            Algorithm::Md5 => "MD5",
        }
    }
}

/// A running digest of one algorithm (one per checked read: the size difference is fine).
#[allow(clippy::large_enum_variant)]
enum Digest {
    Crc(crc_fast::Digest, usize),
    Md5(md5::Md5),
}

impl Digest {
    fn new(algorithm: Algorithm) -> Self {
        match algorithm {
            Algorithm::Crc64Nvme => {
                Digest::Crc(crc_fast::Digest::new(crc_fast::CrcAlgorithm::Crc64Nvme), 8)
            }
            Algorithm::Crc32c => {
                Digest::Crc(crc_fast::Digest::new(crc_fast::CrcAlgorithm::Crc32Iscsi), 4)
            }
            Algorithm::Md5 => Digest::Md5(md5::Md5::new()),
        }
    }

    fn update(&mut self, data: &[u8]) {
        match self {
            Digest::Crc(d, _) => d.update(data),
            Digest::Md5(d) => d.update(data),
        }
    }

    /// The digest's bytes, big-endian for CRCs (as the services print them, base64).
    fn finish(&self) -> Vec<u8> {
        match self {
            Digest::Crc(d, width) => d.finalize().to_be_bytes()[8 - width..].to_vec(),
            Digest::Md5(d) => d.clone().finalize().to_vec(),
        }
    }
}

/// The checksum of `data` by `algorithm`, base64 (as the services' headers carry it).
pub fn checksum_base64(algorithm: Algorithm, data: &[&[u8]]) -> String {
    let mut digest = Digest::new(algorithm);
    for part in data {
        digest.update(part);
    }
    BASE64.encode(digest.finish())
}

const BASE64: base64::engine::GeneralPurpose = base64::engine::general_purpose::STANDARD;

/// A checksum a service stores for an object, as its response header gave it (base64).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stored {
    /// The algorithm.
    pub algorithm: Algorithm,
    /// The value, base64 as the header carries it.
    pub base64: String,
}

impl Stored {
    /// Whether the value is a checksum of the algorithm (base64 of its length): an
    /// S3-compatible server may return a checksum of another kind under the name (moto 5.2.5
    /// returns 4 bytes as `x-amz-checksum-crc64nvme`), which cannot be compared.
    pub fn well_formed(&self) -> bool {
        BASE64
            .decode(&self.base64)
            .is_ok_and(|raw| raw.len() == self.algorithm.len())
    }

    /// The checksum's bytes (big-endian for CRCs); `None` when not [`well_formed`](Self::well_formed).
    pub fn bytes(&self) -> Option<Vec<u8>> {
        BASE64
            .decode(&self.base64)
            .ok()
            .filter(|raw| raw.len() == self.algorithm.len())
    }
}

/// What the check of a whole-object read found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// The body has not been read to its end yet.
    Pending,
    /// The bytes received have the stored checksum.
    Matched,
    /// The bytes received do not have the stored checksum.
    Mismatch {
        /// The algorithm.
        algorithm: Algorithm,
        /// The stored checksum (base64).
        expected: String,
        /// The checksum of the bytes received (base64).
        actual: String,
    },
    /// The body broke part way (and may have been resumed with a ranged request): not
    /// verified.
    Incomplete,
}

/// The check of one whole-object response body: the stored checksum and the running digest.
pub struct BodyCheck {
    stored: Stored,
    state: Mutex<CheckState>,
}

struct CheckState {
    digest: Digest,
    verdict: Verdict,
}

impl std::fmt::Debug for BodyCheck {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BodyCheck")
            .field("stored", &self.stored)
            .field("verdict", &self.verdict())
            .finish()
    }
}

impl BodyCheck {
    fn new(stored: Stored) -> Self {
        Self {
            state: Mutex::new(CheckState {
                digest: Digest::new(stored.algorithm),
                verdict: Verdict::Pending,
            }),
            stored,
        }
    }

    /// The verdict so far.
    pub fn verdict(&self) -> Verdict {
        self.lock().verdict.clone()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, CheckState> {
        // A panic while holding the lock leaves a digest that is merely incomplete.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn update(&self, data: &[u8]) {
        let mut s = self.lock();
        if s.verdict == Verdict::Pending {
            s.digest.update(data);
        }
    }

    fn finish(&self) {
        let mut s = self.lock();
        if s.verdict != Verdict::Pending {
            return;
        }
        let actual = BASE64.encode(s.digest.finish());
        s.verdict = if actual == self.stored.base64 {
            Verdict::Matched
        } else {
            Verdict::Mismatch {
                algorithm: self.stored.algorithm,
                expected: self.stored.base64.clone(),
                actual,
            }
        };
    }

    fn interrupt(&self) {
        let mut s = self.lock();
        if s.verdict == Verdict::Pending {
            s.verdict = Verdict::Incomplete;
        }
    }
}

/// One cloud's checksum rules (each cloud's `integrity::RULES`).
#[derive(Debug)]
pub struct Rules {
    /// The checksum a whole-object response's headers say the service stores, if any.
    pub stored: fn(&HeaderMap) -> Option<Stored>,
    /// Adds the checksum headers the service verifies to a request about to be sent (a no-op
    /// for requests without a body, and for S3, whose checksums `object_store` adds).
    pub prepare: fn(&mut HttpRequest),
}

/// Runs `rules` on a response: a whole-object `GET` answer with a stored checksum gets its
/// body checked (see the module docs); any other response is returned as it is.
pub fn watch(rules: &Rules, method: &http::Method, response: HttpResponse) -> HttpResponse {
    if response.status() != http::StatusCode::OK {
        return response;
    }
    if method == http::Method::HEAD {
        // The stored checksum, for `VendedStore::stored_checksum` (no body to check).
        let (mut parts, body) = response.into_parts();
        if let Some(stored) = (rules.stored)(&parts.headers).filter(Stored::well_formed) {
            parts.extensions.insert(stored);
        }
        return HttpResponse::from_parts(parts, body);
    }
    if method != http::Method::GET {
        return response;
    }
    let headers = response.headers();
    if headers.contains_key(http::header::CONTENT_RANGE)
        || headers
            .get(http::header::CONTENT_ENCODING)
            .is_some_and(|v| v.as_bytes() != b"identity")
    {
        return response;
    }
    let Some(stored) = (rules.stored)(headers) else {
        return response;
    };
    if !stored.well_formed() {
        log::debug!(
            "a {} checksum header that is not one ({} characters): the read is not checked",
            stored.algorithm.name(),
            stored.base64.len()
        );
        return response;
    }
    let check = Arc::new(BodyCheck::new(stored));
    let (mut parts, body) = response.into_parts();
    parts.extensions.insert(check.clone());
    let body = HttpResponseBody::new(CheckedBody { inner: body, check });
    HttpResponse::from_parts(parts, body)
}

/// The check [`watch`] put into a response's extensions (`None` when the read is not
/// checked: no stored checksum, a ranged read, checksums off). Its verdict is final once the
/// body has been read to its end.
pub fn check_of(extensions: &http::Extensions) -> Option<Arc<BodyCheck>> {
    extensions.get::<Arc<BodyCheck>>().cloned()
}

/// A response body that feeds a [`BodyCheck`] as it is read.
struct CheckedBody {
    inner: HttpResponseBody,
    check: Arc<BodyCheck>,
}

impl Body for CheckedBody {
    type Data = Bytes;
    type Error = HttpError;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, HttpError>>> {
        let polled = Pin::new(&mut self.inner).poll_frame(cx);
        match &polled {
            Poll::Ready(Some(Ok(frame))) => {
                if let Some(data) = frame.data_ref() {
                    self.check.update(data);
                }
            }
            Poll::Ready(Some(Err(_))) => self.check.interrupt(),
            Poll::Ready(None) => self.check.finish(),
            Poll::Pending => {}
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.inner.size_hint()
    }
}

impl Drop for CheckedBody {
    fn drop(&mut self) {
        // A body dropped before its end (a stream closed early) was not verified.
        self.check.interrupt();
    }
}

/// Parses one `name=value` entry of a comma-separated header (GCS `x-goog-hash`).
pub fn header_entry(headers: &HeaderMap, header: &str, name: &str) -> Option<String> {
    headers.get_all(header).iter().find_map(|v| {
        v.to_str().ok()?.split(',').find_map(|entry| {
            let (k, v) = entry.trim().split_once('=')?;
            (k == name).then(|| v.to_string())
        })
    })
}

/// The request body's bytes (every body `object_store` sends is in memory); `None` for an
/// empty body.
pub fn body_parts(req: &HttpRequest) -> Option<Vec<Bytes>> {
    let body = req.body();
    if body.content_length() == 0 {
        return None;
    }
    if let Some(b) = body.as_bytes() {
        return Some(vec![b.clone()]);
    }
    // An in-memory body's frames are always ready.
    let mut body = body.clone();
    let mut cx = Context::from_waker(std::task::Waker::noop());
    let mut parts = Vec::new();
    loop {
        match Pin::new(&mut body).poll_frame(&mut cx) {
            Poll::Ready(Some(Ok(frame))) => {
                if let Ok(data) = frame.into_data() {
                    parts.push(data);
                }
            }
            Poll::Ready(None) => return Some(parts),
            _ => return None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_values() {
        // CRC-32C of "123456789" is 0xE3069283; CRC-64/NVME of it is 0xAE8B14860A799888.
        let crc32c = checksum_base64(Algorithm::Crc32c, &[b"1234", b"56789"]);
        assert_eq!(crc32c, BASE64.encode(0xE306_9283u32.to_be_bytes()));
        let crc64 = checksum_base64(Algorithm::Crc64Nvme, &[b"123456789"]);
        assert_eq!(crc64, BASE64.encode(0xAE8B_1486_0A79_9888u64.to_be_bytes()));
        assert_eq!(
            checksum_base64(Algorithm::Md5, &[b""]),
            "1B2M2Y8AsgTpgAmY7PhCfg=="
        );
    }

    #[test]
    fn a_check_matches_mismatches_or_stays_incomplete() {
        let stored = Stored {
            algorithm: Algorithm::Crc32c,
            base64: checksum_base64(Algorithm::Crc32c, &[b"hello"]),
        };
        let ok = BodyCheck::new(stored.clone());
        ok.update(b"hel");
        ok.update(b"lo");
        assert_eq!(ok.verdict(), Verdict::Pending);
        ok.finish();
        assert_eq!(ok.verdict(), Verdict::Matched);

        let bad = BodyCheck::new(stored.clone());
        bad.update(b"hellp");
        bad.finish();
        assert!(matches!(bad.verdict(), Verdict::Mismatch { .. }));

        let cut = BodyCheck::new(stored);
        cut.update(b"he");
        cut.interrupt();
        cut.finish();
        assert_eq!(cut.verdict(), Verdict::Incomplete);
    }

    #[test]
    fn header_entries_are_found_among_several() {
        let mut h = HeaderMap::new();
        h.append("x-goog-hash", "crc32c=AAAAAA==".parse().unwrap());
        h.append("x-goog-hash", "md5=BBBB".parse().unwrap());
        assert_eq!(
            header_entry(&h, "x-goog-hash", "crc32c").as_deref(),
            Some("AAAAAA==")
        );
        assert_eq!(
            header_entry(&h, "x-goog-hash", "md5").as_deref(),
            Some("BBBB")
        );
        let mut one = HeaderMap::new();
        one.insert("x-goog-hash", "crc32c=CC==, md5=DD==".parse().unwrap());
        assert_eq!(
            header_entry(&one, "x-goog-hash", "md5").as_deref(),
            Some("DD==")
        );
    }
}
