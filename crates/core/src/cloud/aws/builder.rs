//! The S3 store builder: non-credential options to `AmazonS3Builder` settings, credentials
//! from the options, a refresher, or none; the HTTP client shared between stores
//! ([`crate::cloud::http::SharedHttpConnector`]); and [`S3Store`], which sends a single-object
//! delete as one `DELETE` request. The store returned is wrapped in a [`LocatedStore`]: its
//! errors name `s3://bucket/path` and tell `NoSuchBucket` from `NoSuchKey`.

use std::fmt;
use std::ops::Range;
use std::sync::Arc;

use async_trait::async_trait;
use bytes::Bytes;
use futures::stream::{self, BoxStream, StreamExt, TryStreamExt};
use object_store::aws::{AmazonS3, AmazonS3Builder, AmazonS3ConfigKey, AwsCredential, Checksum};
use object_store::path::Path;
use object_store::{
    ClientOptions, CopyOptions, GetOptions, GetResult, ListResult, MultipartUpload, ObjectMeta,
    ObjectStore, PutMultipartOptions, PutOptions, PutPayload, PutResult, StaticCredentialProvider,
};
use reqwest::header::{HeaderMap, HeaderValue};

use super::credential::RefreshingAwsCredentialProvider;
use crate::cloud::http::SharedHttpConnector;
use crate::cloud::located::{enrich, CloudTerms, LocatedStore};
use crate::cloud::secrets::StoreSecrets;
use crate::error::{Error, Result};
use crate::options::{checksums_on, is_credential_key, StorageOptions};
use crate::refresh::{CredentialRefresher, RefresherHandle};

use crate::options::client::{is_retry_key, retry_config};

/// How S3 locations are named in messages (`s3://bucket/path`) and what its 404 answers say
/// is missing ([`super::auth::bucket_missing`]).
pub const TERMS: CloudTerms = CloudTerms {
    scheme: "s3",
    container: "bucket",
    container_missing: super::auth::bucket_missing,
    rejects_credential: super::auth::is_auth_failure,
};

/// Where an S3 store gets its credentials.
pub enum AwsCredentials {
    /// Fixed credentials from the options (never refreshed).
    Static(AwsCredential),
    /// Credentials kept fresh by a refresher.
    Refreshing(CredentialRefresher<AwsCredential>),
    /// Unsigned requests (`aws_skip_signature=true`).
    None,
}

/// Builds an S3 store for `bucket` from the non-credential `options` (endpoint, region,
/// allow-http, client options such as `timeout` and `connect_timeout`, retry options such as
/// [`crate::options::MAX_RETRIES`]) and `credentials`. Never falls back to environment or
/// instance-metadata credentials. The HTTP client is shared with every other store of equal
/// client options.
///
/// # Errors
/// [`Error::InvalidOption`] for an option `object_store` does not know (only keys starting with
/// `aws_` are checked; other keys are ignored as belonging to other layers) or rejects.
pub fn build_s3_store(
    bucket: &str,
    options: &StorageOptions,
    credentials: AwsCredentials,
) -> Result<Arc<LocatedStore<S3Store>>> {
    let observer: Option<Arc<dyn RefresherHandle>> = match &credentials {
        AwsCredentials::Refreshing(r) => Some(Arc::new(r.clone())),
        _ => None,
    };
    let checksums = checksums_on(options)?;
    let secrets = StoreSecrets::new(options, observer.clone());
    let mut connector = SharedHttpConnector::new(observer);
    if checksums {
        connector = connector.with_integrity(&super::integrity::RULES);
    }
    let counters = connector.counters();
    let mut builder = AmazonS3Builder::new()
        .with_bucket_name(bucket)
        .with_http_connector(connector)
        .with_retry(retry_config(options)?);
    if checksums {
        // Before the options: an explicit `aws_checksum_algorithm` wins.
        let (name, value) = super::integrity::CHECKSUM_MODE;
        let mut headers = HeaderMap::new();
        headers.insert(name, HeaderValue::from_static(value));
        builder = builder
            .with_checksum_algorithm(Checksum::CRC64NVME)
            .with_client_options(ClientOptions::new().with_default_headers(headers));
    }
    let mut keys: Vec<_> = options.keys().collect();
    keys.sort();
    for key in keys {
        if is_credential_key(key) || is_retry_key(key) {
            continue;
        }
        match key.parse::<AmazonS3ConfigKey>() {
            Ok(AmazonS3ConfigKey::Bucket) => {}
            Ok(k) => builder = builder.with_config(k, &options[key]),
            Err(_) if key.to_ascii_lowercase().starts_with("aws_") => {
                return Err(Error::invalid_option(key, "unknown S3 storage option"));
            }
            Err(_) => log::debug!("ignoring storage option '{key}' unknown to the S3 store"),
        }
    }
    builder = match credentials {
        AwsCredentials::Static(c) => {
            builder.with_credentials(Arc::new(StaticCredentialProvider::new(c)))
        }
        AwsCredentials::Refreshing(r) => {
            builder.with_credentials(Arc::new(RefreshingAwsCredentialProvider::new(r)))
        }
        AwsCredentials::None => builder.with_skip_signature(true),
    };
    let bad = |e: object_store::Error| {
        Error::invalid_option("s3", format!("cannot build the S3 store: {e}"))
    };
    let single = builder
        .clone()
        .with_disable_bulk_delete(true)
        .build()
        .map_err(bad)?;
    let bulk = builder.build().map_err(bad)?;
    let multipart = Arc::new(bulk.clone());
    let store = S3Store {
        bucket: bucket.to_string(),
        bulk,
        single,
    };
    Ok(Arc::new(
        LocatedStore::new(TERMS, bucket, store, multipart)
            .with_counters(counters)
            .with_secrets(secrets),
    ))
}

/// An S3 store: `object_store`'s [`AmazonS3`] with two changes.
///
/// - A delete of one object is one `DELETE /key` request (an `AmazonS3` built with
///   `aws_disable_bulk_delete`); only several keys go through the bulk `POST /?delete`
///   (`DeleteObjects`, up to 1,000 keys per request). S3-compatible servers such as moto
///   authorize a bulk delete at bucket level, so credentials scoped to a prefix can delete
///   single objects only this way.
/// - The error of a single delete names `s3://bucket/path` (a [`crate::error::RequestFailure`]);
///   the [`LocatedStore`] around it names the location in every other error.
#[derive(Debug)]
pub struct S3Store {
    bucket: String,
    /// Bulk deletes and every other call.
    bulk: AmazonS3,
    /// The same store (same credentials, same HTTP client) for single-object deletes.
    single: AmazonS3,
}

impl fmt::Display for S3Store {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "S3Store(s3://{})", self.bucket)
    }
}

#[async_trait]
impl ObjectStore for S3Store {
    async fn put_opts(
        &self,
        location: &Path,
        payload: PutPayload,
        opts: PutOptions,
    ) -> object_store::Result<PutResult> {
        self.bulk.put_opts(location, payload, opts).await
    }

    async fn put_multipart_opts(
        &self,
        location: &Path,
        opts: PutMultipartOptions,
    ) -> object_store::Result<Box<dyn MultipartUpload>> {
        self.bulk.put_multipart_opts(location, opts).await
    }

    async fn get_opts(
        &self,
        location: &Path,
        options: GetOptions,
    ) -> object_store::Result<GetResult> {
        self.bulk.get_opts(location, options).await
    }

    async fn get_ranges(
        &self,
        location: &Path,
        ranges: &[Range<u64>],
    ) -> object_store::Result<Vec<Bytes>> {
        self.bulk.get_ranges(location, ranges).await
    }

    /// Chunks of up to 1,000 keys: a chunk of one key is one `DELETE` request, larger chunks
    /// one `DeleteObjects` request each (up to 10 chunks at a time).
    fn delete_stream(
        &self,
        locations: BoxStream<'static, object_store::Result<Path>>,
    ) -> BoxStream<'static, object_store::Result<Path>> {
        let single = Arc::new(self.single.clone());
        let bulk = Arc::new(self.bulk.clone());
        let bucket: Arc<str> = Arc::from(self.bucket.as_str());
        locations
            .try_chunks(1_000)
            .map(move |chunk| {
                let (single, bulk, bucket) = (single.clone(), bulk.clone(), bucket.clone());
                async move {
                    let (paths, error) = match chunk {
                        Ok(paths) => (paths, None),
                        Err(stream::TryChunksError(paths, e)) => (paths, Some(e)),
                    };
                    let store: &AmazonS3 = if paths.len() == 1 { &single } else { &bulk };
                    // Errors name the key of a single delete, the bucket of a bulk one (whose
                    // per-key failures name their keys themselves).
                    let at = match paths.as_slice() {
                        [one] => one.to_string(),
                        _ => String::new(),
                    };
                    let mut results: Vec<object_store::Result<Path>> = if paths.is_empty() {
                        Vec::new()
                    } else {
                        store
                            .delete_stream(stream::iter(paths.into_iter().map(Ok)).boxed())
                            .map_err(|e| enrich(e, TERMS.location(&bucket, &at), None))
                            .collect()
                            .await
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
        self.bulk.list(prefix)
    }

    fn list_with_offset(
        &self,
        prefix: Option<&Path>,
        offset: &Path,
    ) -> BoxStream<'static, object_store::Result<ObjectMeta>> {
        self.bulk.list_with_offset(prefix, offset)
    }

    async fn list_with_delimiter(&self, prefix: Option<&Path>) -> object_store::Result<ListResult> {
        self.bulk.list_with_delimiter(prefix).await
    }

    async fn copy_opts(
        &self,
        from: &Path,
        to: &Path,
        options: CopyOptions,
    ) -> object_store::Result<()> {
        self.bulk.copy_opts(from, to, options).await
    }

    // `rename_opts`: the trait's default, a copy and then a delete through this store (so the
    // delete is one `DELETE` request).
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts(pairs: &[(&str, &str)]) -> StorageOptions {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn unknown_aws_option_is_rejected_by_name() {
        let e = build_s3_store(
            "b",
            &opts(&[("aws_endpont", "http://x")]),
            AwsCredentials::None,
        )
        .err()
        .unwrap();
        assert!(e.to_string().contains("aws_endpont"), "{e}");
    }
}
