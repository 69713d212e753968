//! Commit files ([`VendedStore::put_commit`]): one create-only PUT that recognises its own
//! retried attempt, on an endpoint checked once to honour create-only conditions.
//!
//! **Recognising our own retry.** `object_store` retries a PUT whose answer was lost (a 5xx, a
//! dropped connection). When the first attempt was stored, the retry meets our own object and
//! the endpoint refuses it (412 / 409): a plain create-only write reports a conflict although
//! it won, and a table format then commits the same actions again at the next version. Every
//! commit therefore carries a per-write id in the object's user metadata
//! ([`WRITE_ID_METADATA`]: `x-amz-meta-`, `x-ms-meta-`, `x-goog-meta-`; `object_store` sends
//! and returns user metadata on all three clouds), and a refused commit reads the object back
//! (one GET): it is ours when it carries our id. An object without any write id (an endpoint
//! that drops user metadata, or a writer that sets none) is ours only when its bytes equal
//! ours. The id, not the bytes, decides whenever it is there, because two writers may commit
//! identical bytes (a blind append of the same rows in the same millisecond) and only one of
//! them won.
//!
//! **Endpoints that ignore the condition.** An S3-compatible server that ignores
//! `If-None-Match: *` overwrites silently: both writers of a version "win" and one commit is
//! lost. Before its first commit, each store (one per bucket, credential source and options;
//! see [`crate::StoreKey`]) writes a probe object twice with create-only PUTs beside the commit
//! and deletes it: when the second write succeeds the endpoint ignores the condition and every
//! commit through the store fails with [`Error::ConditionIgnored`]. The verdict is kept for
//! the store's life; a probe that fails (credentials, network) is not kept and runs again.

use bytes::Bytes;
use object_store::path::Path;
use object_store::{
    Attribute, AttributeValue, Attributes, GetOptions, ObjectStoreExt, PutMode, PutOptions,
    PutPayload,
};

use super::WriteResult;
use crate::error::{Error, ErrorKind, Result};
use crate::store::VendedStore;
use crate::uri::Scheme;

/// The user-metadata key of a commit's per-write id (sent as `x-amz-meta-vendedwriteid` on
/// S3, `x-ms-meta-vendedwriteid` on Azure, `x-goog-meta-vendedwriteid` on GCS). Letters only:
/// Azure takes only C# identifiers as metadata names (a `-` is refused with 400
/// `InvalidMetadata`), and some proxies drop header names with `_`.
pub const WRITE_ID_METADATA: &str = "vendedwriteid";

/// The name prefix of the probe object [`VendedStore::put_commit`] writes (twice) and deletes
/// beside a store's first commit; the rest of the name is a random id.
pub const CONDITION_PROBE_PREFIX: &str = ".vended-create-only-probe-";

/// What a successful [`VendedStore::put_commit`] reports.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommitResult {
    /// The new object's ETag and version (from the PUT's answer; from the read-back when the
    /// commit was recognised as ours).
    pub write: WriteResult,
    /// Whether the endpoint refused a (retried) attempt and the object it holds was recognised
    /// as this write's: its first attempt was stored and its answer lost.
    pub recognised_retry: bool,
}

/// How the object found at a refused commit's path compares with ours.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Found {
    /// It carries our write id, or no id and our bytes.
    Ours,
    /// Another writer's.
    Theirs,
}

/// Decides whether an existing object is our write: by the write id when the object carries
/// one, else by exact bytes.
pub(crate) fn compare(
    their_id: Option<&str>,
    our_id: &str,
    their_bytes: &[u8],
    our_bytes: &[u8],
) -> Found {
    let ours = match their_id {
        Some(id) => id == our_id,
        None => their_bytes == our_bytes,
    };
    if ours {
        Found::Ours
    } else {
        Found::Theirs
    }
}

/// A fresh random id (128 bits, hex).
fn new_write_id() -> String {
    format!("{:032x}", rand::random::<u128>())
}

fn create_only(attributes: Attributes) -> PutOptions {
    PutOptions {
        mode: PutMode::Create,
        attributes,
        ..Default::default()
    }
}

impl VendedStore {
    /// Writes a commit file (a table format's log entry) with one create-only PUT carrying a
    /// per-write id (user metadata [`WRITE_ID_METADATA`]): of racing writers exactly one
    /// succeeds. A refused attempt reads the object back (one GET) and succeeds when it is its
    /// own (it carries this write's id, or no id and this write's bytes): a retry whose first
    /// attempt was stored, reported with [`CommitResult::recognised_retry`]. Before the store's first commit, the endpoint is
    /// checked once to honour create-only writes (2 PUTs and 1 DELETE of a probe object beside
    /// `path`, see [`CONDITION_PROBE_PREFIX`]).
    ///
    /// # Errors
    /// [`crate::ErrorKind::AlreadyExists`] when another writer's object is at `path`;
    /// [`Error::ConditionIgnored`] (kind [`crate::ErrorKind::Io`]) when the endpoint ignores
    /// create-only conditions; [`Error::InvalidOption`] (key `path`) for a bad path;
    /// permission/credential, provider and I/O errors as [`VendedStore::put_opts`].
    pub async fn put_commit(&self, path: &str, data: Bytes) -> Result<CommitResult> {
        let p = self.path(path)?;
        self.check_create_only(&p).await?;
        let id = new_write_id();
        let mut attributes = Attributes::new();
        attributes.insert(
            Attribute::Metadata(WRITE_ID_METADATA.into()),
            AttributeValue::from(id.clone()),
        );
        self.forget_path(&p);
        let put = self
            .entry
            .store
            .put_opts(&p, PutPayload::from(data.clone()), create_only(attributes))
            .await;
        self.forget_path(&p);
        match put.map_err(|e| super::WriteMode::Create.refusal(e)) {
            Ok(r) => Ok(CommitResult {
                write: r.into(),
                recognised_retry: false,
            }),
            Err(e) => {
                let e = Error::from(e);
                if e.kind() != ErrorKind::AlreadyExists {
                    return Err(e);
                }
                let found = self.entry.store.get_opts(&p, GetOptions::default()).await?;
                let their_id = found
                    .attributes
                    .get(&Attribute::Metadata(WRITE_ID_METADATA.into()))
                    .map(|v| v.as_ref().to_owned());
                let write = WriteResult {
                    e_tag: found.meta.e_tag.clone(),
                    version: found.meta.version.clone(),
                };
                let bytes = found.bytes().await?;
                match compare(their_id.as_deref(), &id, &bytes, &data) {
                    Found::Ours => Ok(CommitResult {
                        write,
                        recognised_retry: true,
                    }),
                    Found::Theirs => Err(e),
                }
            }
        }
    }

    /// Whether this store's endpoint honours create-only PUTs, probed once beside `path`.
    async fn check_create_only(&self, path: &Path) -> Result<()> {
        let honoured = self
            .entry
            .create_only_honoured
            .get_or_try_init(|| self.probe_create_only(path))
            .await?;
        if *honoured {
            return Ok(());
        }
        Err(Error::ConditionIgnored {
            location: format!(
                "{}://{}/{}",
                self.key().scheme.as_str(),
                self.key().authority,
                path
            ),
            endpoint: self.endpoint_name(),
            condition: match self.key().scheme {
                Scheme::Gcs => "x-goog-if-generation-match: 0",
                _ => "If-None-Match: *",
            },
        })
    }

    /// Writes a probe object twice with create-only PUTs, then deletes it: `false` when the
    /// second write succeeded.
    async fn probe_create_only(&self, path: &Path) -> Result<bool> {
        let name = format!("{CONDITION_PROBE_PREFIX}{}", new_write_id());
        let mut parts: Vec<_> = path.parts().collect();
        parts.pop();
        let probe: Path = parts
            .into_iter()
            .chain(std::iter::once(name.as_str().into()))
            .collect();
        let store = &self.entry.store;
        let put = || {
            store.put_opts(
                &probe,
                PutPayload::from_static(b"probe"),
                create_only(Attributes::new()),
            )
        };
        put().await?;
        let second = put().await.map_err(|e| super::WriteMode::Create.refusal(e));
        let deleted = store.delete(&probe).await;
        let honoured = match second {
            Ok(_) => false,
            Err(e) => {
                let e = Error::from(e);
                if e.kind() != ErrorKind::AlreadyExists {
                    return Err(e);
                }
                true
            }
        };
        if let Err(e) = deleted {
            log::warn!(
                "could not delete the create-only probe {}: {}",
                probe,
                Error::from(e)
            );
        }
        Ok(honoured)
    }

    /// The endpoint the store sends requests to, for messages: `the endpoint <url>` from its
    /// `*endpoint` or `*_base_url` option (`google_base_url`), else the cloud's default service.
    fn endpoint_name(&self) -> String {
        let key = self.key();
        key.options
            .iter()
            .find(|(k, _)| k == "endpoint" || k.ends_with("_endpoint") || k.ends_with("_base_url"))
            .map(|(_, v)| format!("the endpoint {v}"))
            .unwrap_or_else(|| format!("the default {} service", key.scheme.as_str()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_write_id_decides_when_the_object_carries_one() {
        assert_eq!(compare(Some("a"), "a", b"x", b"y"), Found::Ours);
        assert_eq!(compare(Some("b"), "a", b"same", b"same"), Found::Theirs);
    }

    #[test]
    fn an_object_without_an_id_is_ours_only_with_our_exact_bytes() {
        assert_eq!(compare(None, "a", b"same", b"same"), Found::Ours);
        assert_eq!(compare(None, "a", b"same", b"samE"), Found::Theirs);
        assert_eq!(compare(None, "a", b"", b"x"), Found::Theirs);
    }

    #[test]
    fn write_ids_are_distinct_hex() {
        let (a, b) = (new_write_id(), new_write_id());
        assert_eq!(a.len(), 32);
        assert!(a.chars().all(|c| c.is_ascii_hexdigit()), "{a}");
        assert_ne!(a, b);
    }
}
