//! [`AzureStore`]: `object_store`'s [`MicrosoftAzure`] with a single-blob delete that is one
//! `DELETE` request (case C21).
//!
//! `object_store` 0.14.2 deletes Azure blobs only through the Blob Batch API
//! (`MicrosoftAzure::delete_stream` → `bulk_delete_request`, a `POST ?comp=batch` even for one
//! key) and has neither a single-delete request nor an option to disable batching (S3 has
//! `aws_disable_bulk_delete`). A batch is authorized differently from a plain delete (a SAS needs
//! the account-level `srt=s` resource type; Azurite 3.35.0 answers a bodiless 500 to a container
//! batch under any account SAS, having no account-SAS permission entry for
//! `Container_SubmitBatch`, while it serves one under a container SAS), so a delete of one blob
//! is sent here as [Delete Blob] (`DELETE <container URL>/<path>`), signed by `object_store`'s
//! own public [`AzureAuthorizer`] with the store's current credential, over the store's shared
//! HTTP client. Several keys still go through `object_store`'s batch delete (tested against
//! Azurite with a container SAS: tests/azure_batch_delete.rs).
//!
//! [Delete Blob]: https://learn.microsoft.com/en-us/rest/api/storageservices/delete-blob

use std::fmt;
use std::ops::Range;
use std::sync::Arc;
use std::time::{Duration, Instant};

use async_trait::async_trait;
use bytes::Bytes;
use futures::stream::{self, BoxStream, StreamExt, TryStreamExt};
use object_store::azure::{AzureAuthorizer, AzureCredential, MicrosoftAzure};
use object_store::client::{HttpClient, HttpError, HttpRequest, HttpRequestBody};
use object_store::path::Path;
use object_store::{
    CopyOptions, CredentialProvider, GetOptions, GetResult, ListResult, MultipartUpload,
    ObjectMeta, ObjectStore, PutMultipartOptions, PutOptions, PutPayload, PutResult,
};

use crate::error::RequestFailure;

/// The Azure credential provider a store signs with.
pub type AzureCredentialSource = Arc<dyn CredentialProvider<Credential = AzureCredential>>;

/// The `x-ms-version` sent when there is no credential to sign with (the authorizer sets it
/// otherwise); the version `object_store` 0.14.2 uses.
const API_VERSION: &str = "2023-11-03";
/// Most attempts of a single delete that fails with a transport error, 429 or 5xx (Delete Blob
/// is idempotent: a repeated delete of a deleted blob answers 404).
pub const SINGLE_DELETE_ATTEMPTS: usize = 3;
/// Wait before the second attempt; doubled before each further one.
const FIRST_BACKOFF: Duration = Duration::from_millis(100);
/// Most bytes of an error answer kept for the error message.
const MAX_ERROR_BODY: usize = 4096;

/// Where and how single-blob deletes are sent.
pub struct SingleDelete {
    /// The HTTP client the store uses (same connection pool, same `Date` observer).
    pub client: HttpClient,
    /// The store's credentials; `None` sends unsigned requests (`azure_skip_signature`).
    pub credentials: Option<AzureCredentialSource>,
    /// The storage account (SharedKey signatures name it).
    pub account: String,
    /// The container's URL, e.g. `https://acct.blob.core.windows.net/container` or, for an
    /// emulator, `http://127.0.0.1:10000/devstoreaccount1/container`.
    pub container_url: url::Url,
}

/// An Azure Blob store: [`MicrosoftAzure`] for every call, except that a delete of one blob is
/// one `DELETE` request (see the module docs).
pub struct AzureStore {
    container: String,
    inner: Arc<MicrosoftAzure>,
    single: Arc<SingleDelete>,
}

impl fmt::Debug for AzureStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // No credential here: the inner store's Debug prints none either.
        f.debug_struct("AzureStore")
            .field("inner", &self.inner)
            .finish()
    }
}

impl fmt::Display for AzureStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "AzureStore(az://{})", self.container)
    }
}

impl AzureStore {
    /// Wraps `inner` (the store of `container`); single deletes go through `single`.
    pub fn new(container: &str, inner: MicrosoftAzure, single: SingleDelete) -> Self {
        Self {
            container: container.to_string(),
            inner: Arc::new(inner),
            single: Arc::new(single),
        }
    }
}

/// The text of a failed delete, in `object_store`'s request-error format (`Error performing
/// DELETE <location> in <elapsed>[, after <n> retries] - <reason>`) so that
/// [`RequestFailure::parse`] and the adapters' auth-failure rules read it like any other
/// request error. The location is `az://container/path`, never the URL (it may carry a SAS).
#[derive(Debug)]
struct DeleteFailed {
    text: String,
    transport: Option<HttpError>,
}

impl fmt::Display for DeleteFailed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl std::error::Error for DeleteFailed {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.transport
            .as_ref()
            .map(|e| e as &(dyn std::error::Error + 'static))
    }
}

enum Outcome {
    Done,
    Status(u16, String),
    Transport(HttpError),
}

impl SingleDelete {
    async fn attempt(&self, path: &Path) -> object_store::Result<Outcome> {
        let mut url = self.container_url.clone();
        url.path_segments_mut()
            .map_err(|_| object_store::Error::Generic {
                store: "MicrosoftAzure",
                source: "the container URL cannot take a path".into(),
            })?
            .extend(path.parts());
        let mut request = HttpRequest::new(HttpRequestBody::from(Bytes::new()));
        *request.method_mut() = "DELETE".parse().expect("DELETE is a method");
        *request.uri_mut() = url
            .as_str()
            .parse()
            .map_err(|e| object_store::Error::Generic {
                store: "MicrosoftAzure",
                source: Box::new(e),
            })?;
        request
            .headers_mut()
            .insert("content-length", "0".parse().expect("valid header"));
        match &self.credentials {
            Some(provider) => {
                let credential = provider.get_credential().await?;
                AzureAuthorizer::new(&credential, &self.account).try_authorize(&mut request)?;
            }
            None => {
                let date = httpdate::fmt_http_date(std::time::SystemTime::now());
                let headers = request.headers_mut();
                headers.insert("x-ms-version", API_VERSION.parse().expect("valid header"));
                if let Ok(date) = date.parse() {
                    headers.insert("x-ms-date", date);
                }
            }
        }
        let response = match self.client.execute(request).await {
            Ok(r) => r,
            Err(e) => return Ok(Outcome::Transport(e)),
        };
        let status = response.status();
        if status.is_success() {
            return Ok(Outcome::Done);
        }
        let reason = status.canonical_reason().unwrap_or("");
        let mut body = response.into_body().bytes().await.unwrap_or_default();
        body.truncate(MAX_ERROR_BODY);
        let body = String::from_utf8_lossy(&body).into_owned();
        Ok(Outcome::Status(
            status.as_u16(),
            format!("{} {reason}: {body}", status.as_u16()),
        ))
    }

    /// Deletes `path` with one `DELETE` request (more only after a transport error, 429 or 5xx,
    /// at most [`SINGLE_DELETE_ATTEMPTS`]). A missing blob is `NotFound`, like `object_store`'s
    /// batch delete reports it.
    async fn delete(&self, container: &str, path: &Path) -> object_store::Result<()> {
        let started = Instant::now();
        let mut backoff = FIRST_BACKOFF;
        let mut attempt = 1;
        loop {
            let outcome = self.attempt(path).await?;
            let retryable = match &outcome {
                Outcome::Done => return Ok(()),
                Outcome::Status(status, _) => *status == 429 || *status >= 500,
                Outcome::Transport(_) => true,
            };
            if retryable && attempt < SINGLE_DELETE_ATTEMPTS {
                tokio::time::sleep(backoff).await;
                backoff *= 2;
                attempt += 1;
                continue;
            }
            return Err(delete_error(
                container,
                path,
                outcome,
                started.elapsed(),
                attempt,
            ));
        }
    }
}

/// The `object_store` error for a failed single delete: the variant its status calls for, with
/// a [`RequestFailure`] naming `az://container/path` as its source.
fn delete_error(
    container: &str,
    path: &Path,
    outcome: Outcome,
    elapsed: Duration,
    attempts: usize,
) -> object_store::Error {
    let location = format!("az://{container}/{path}");
    let retries = if attempts > 1 {
        format!(", after {} retries", attempts - 1)
    } else {
        String::new()
    };
    let (status, reason, transport) = match outcome {
        Outcome::Status(status, text) => (
            Some(status),
            format!("Server returned non-2xx status code: {text}"),
            None,
        ),
        Outcome::Transport(e) => (None, format!("HTTP error: {e}"), Some(e)),
        Outcome::Done => (None, "no error".to_string(), None),
    };
    let failed = DeleteFailed {
        text: format!("Error performing DELETE {location} in {elapsed:?}{retries} - {reason}"),
        transport,
    };
    let source: Box<dyn std::error::Error + Send + Sync> = match RequestFailure::parse(&failed) {
        Some(f) => Box::new(f.with_location(location).with_source(Box::new(failed))),
        None => Box::new(failed),
    };
    let path = path.to_string();
    match status {
        Some(404) => object_store::Error::NotFound { path, source },
        Some(401) => object_store::Error::Unauthenticated { path, source },
        Some(403) => object_store::Error::PermissionDenied { path, source },
        Some(412) => object_store::Error::Precondition { path, source },
        _ => object_store::Error::Generic {
            store: "MicrosoftAzure",
            source,
        },
    }
}

#[async_trait]
impl ObjectStore for AzureStore {
    async fn put_opts(
        &self,
        location: &Path,
        payload: PutPayload,
        opts: PutOptions,
    ) -> object_store::Result<PutResult> {
        self.inner.put_opts(location, payload, opts).await
    }

    async fn put_multipart_opts(
        &self,
        location: &Path,
        opts: PutMultipartOptions,
    ) -> object_store::Result<Box<dyn MultipartUpload>> {
        self.inner.put_multipart_opts(location, opts).await
    }

    async fn get_opts(
        &self,
        location: &Path,
        options: GetOptions,
    ) -> object_store::Result<GetResult> {
        self.inner.get_opts(location, options).await
    }

    async fn get_ranges(
        &self,
        location: &Path,
        ranges: &[Range<u64>],
    ) -> object_store::Result<Vec<Bytes>> {
        self.inner.get_ranges(location, ranges).await
    }

    /// Chunks of up to 256 keys (the Blob Batch limit): a chunk of one key is one `DELETE`
    /// request, larger chunks one batch request each (up to 10 chunks at a time).
    fn delete_stream(
        &self,
        locations: BoxStream<'static, object_store::Result<Path>>,
    ) -> BoxStream<'static, object_store::Result<Path>> {
        let single = self.single.clone();
        let inner = self.inner.clone();
        let container: Arc<str> = Arc::from(self.container.as_str());
        locations
            .try_chunks(256)
            .map(move |chunk| {
                let (single, inner, container) = (single.clone(), inner.clone(), container.clone());
                async move {
                    let (mut paths, error) = match chunk {
                        Ok(paths) => (paths, None),
                        Err(stream::TryChunksError(paths, e)) => (paths, Some(e)),
                    };
                    let mut results: Vec<object_store::Result<Path>> = match paths.len() {
                        0 => Vec::new(),
                        1 => {
                            let path = paths.pop().expect("one path");
                            vec![single.delete(&container, &path).await.map(|()| path)]
                        }
                        _ => {
                            inner
                                .delete_stream(stream::iter(paths.into_iter().map(Ok)).boxed())
                                .collect()
                                .await
                        }
                    };
                    results.extend(error.map(Err));
                    stream::iter(results)
                }
            })
            .buffered(10)
            .flatten()
            .boxed()
    }

    fn list(&self, prefix: Option<&Path>) -> BoxStream<'static, object_store::Result<ObjectMeta>> {
        self.inner.list(prefix)
    }

    fn list_with_offset(
        &self,
        prefix: Option<&Path>,
        offset: &Path,
    ) -> BoxStream<'static, object_store::Result<ObjectMeta>> {
        self.inner.list_with_offset(prefix, offset)
    }

    async fn list_with_delimiter(&self, prefix: Option<&Path>) -> object_store::Result<ListResult> {
        self.inner.list_with_delimiter(prefix).await
    }

    async fn copy_opts(
        &self,
        from: &Path,
        to: &Path,
        options: CopyOptions,
    ) -> object_store::Result<()> {
        self.inner.copy_opts(from, to, options).await
    }

    // `rename_opts`: the trait's default, a copy and then a delete through this store (so the
    // delete is one `DELETE` request).
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failed_deletes_read_like_object_store_request_errors() {
        let e = delete_error(
            "c",
            &Path::from("a/b"),
            Outcome::Status(
                403,
                "403 Forbidden: <Error><Code>AuthorizationFailure</Code><Message>no</Message></Error>"
                    .into(),
            ),
            Duration::from_millis(3),
            1,
        );
        assert!(matches!(e, object_store::Error::PermissionDenied { .. }));
        assert!(super::super::auth::is_auth_failure(&e), "{e}");
        let f = RequestFailure::find(&e).expect("a RequestFailure in the chain");
        assert_eq!(f.location, "az://c/a/b");
        assert_eq!(f.status, Some(403));
        assert_eq!(f.code.as_deref(), Some("AuthorizationFailure"));
        let e = delete_error(
            "c",
            &Path::from("x"),
            Outcome::Status(
                404,
                "404 Not Found: <Error><Code>BlobNotFound</Code></Error>".into(),
            ),
            Duration::from_millis(3),
            1,
        );
        assert!(matches!(e, object_store::Error::NotFound { .. }));
        assert!(!super::super::auth::is_auth_failure(&e));
        let e = delete_error(
            "c",
            &Path::from("x"),
            Outcome::Status(503, "503 Service Unavailable: ".into()),
            Duration::from_millis(300),
            3,
        );
        let f = RequestFailure::find(&e).unwrap();
        assert_eq!((f.status, f.attempts), (Some(503), 3));
    }
}
