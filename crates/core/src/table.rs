//! Opening a catalog table's store: one catalog call, then the registry.
//!
//! The catalog providers ([`crate::catalog`]) sit beside the other providers and know nothing
//! of stores; this module sits above both. It holds
//! [`LanceNamespaceProvider::open_table`] (open a Lance table by name with one `DescribeTable`
//! call), [`open_catalog_table`] (the same from a [`CatalogSpec`]), [`describe_catalog_table`]
//! and [`open_options`] (how the caller's options and the vended ones combine).
//!
//! **Failed opens are remembered, per process.** Every describe made to open or locate a table
//! (and every Unity Catalog `getTable` made to locate one, [`locate_unity_table`]) goes through
//! [`TableOpens`], keyed by the provider's id (catalog endpoint, table id,
//! a fingerprint of the auth headers: never a secret), so every caller in the process shares
//! it: concurrent describes of one table are one call (single-flight), and a failed one is
//! remembered for a backoff, the credential refresher's [`Backoff`] with the caller's
//! [`RefreshConfig`]. A caller whose open failed has nothing valid to serve with, so the rule
//! of a refresher with nothing valid left applies ([`Serving::Nothing`], case C22): a
//! transient failure is retried after the fixed `initial_backoff` (default 1 s, never
//! growing), so opens work again within about a second of the catalog's return; a failure the
//! catalog calls permanent waits `max_backoff` (default 30 s, see
//! [`CatalogError::is_retryable`]). Until the backoff has passed, callers
//! get the remembered error at once (same kind and catalog failure, the message saying when the
//! next attempt is) and the catalog is not called. A success is not remembered: each open
//! describes afresh (the registry shares the store).

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures::future::{BoxFuture, FutureExt, Shared};
use moka::sync::Cache;
use once_cell::sync::Lazy;

use crate::catalog::lance::TableDescription;
use crate::catalog::unity::UnityTable;
use crate::catalog::{CatalogError, CatalogSpec, LanceNamespaceProvider, UnityCatalogProvider};
use crate::error::{Error, Result, SharedSource};
use crate::options::{merge, StorageOptions};
use crate::provider::StorageOptionsProvider;
use crate::refresh::{Backoff, RefreshConfig, Serving};
use crate::registry::ObjectStoreRegistry;
use crate::store::VendedStore;

/// Options that configure the data rather than the signer and that a catalog does not vend: the
/// SSE-C customer key and the SSE-KMS key id. Opening a table keeps the caller's values (unless
/// the catalog vends its own): dropping them would write data unencrypted, or with the wrong key.
pub const DATA_PLANE_KEYS: [&str; 2] = ["aws_sse_customer_key_base64", "aws_sse_kms_key_id"];

/// The initial options of a table's store: the caller's own (`mine`: endpoint, region,
/// allow-http, encryption keys...) overlaid by the catalog's `vended` ones. Vended credentials
/// replace the caller's credentials as a set ([`merge`]); every other key of the caller is
/// kept unless the answer sets it, and the [`DATA_PLANE_KEYS`] always are; the
/// [`ACCESS_MODE`](crate::options::ACCESS_MODE) is the caller's alone (a vended one is dropped).
pub fn open_options(mine: &StorageOptions, vended: &StorageOptions) -> StorageOptions {
    let mut merged = merge(mine, vended);
    // The access mode is the caller's to choose (`crate::access`), never the catalog's.
    merged.remove(crate::options::ACCESS_MODE);
    if let Some(mode) = mine.get(crate::options::ACCESS_MODE) {
        merged.insert(crate::options::ACCESS_MODE.to_string(), mode.clone());
    }
    for key in DATA_PLANE_KEYS {
        if let Some(value) = mine.get(key) {
            merged
                .entry(key.to_string())
                .or_insert_with(|| value.clone());
        }
    }
    merged
}

impl LanceNamespaceProvider {
    /// Opens the table's store by name with one describe call (shared with concurrent opens of
    /// the table, and not made during the backoff after a failed one: see the [module
    /// docs](self)): the store's URI is the answer's
    /// `table_uri` (else `location`), its initial options are `options` (the caller's own:
    /// endpoint, region, allow-http, encryption keys...) overlaid by the vended
    /// `storage_options` (see [`open_options`]), and this provider refreshes them before they
    /// expire. The describe answer seeds the credential cache, so opening costs no second call.
    ///
    /// # Errors
    /// The errors of [`describe_table`](Self::describe_table) (during the backoff after a failed
    /// describe: that error, remembered); [`Error::Provider`]
    /// (kind [`CatalogErrorKind::MissingField`](crate::catalog::CatalogErrorKind::MissingField))
    /// when the answer has no location or no `storage_options`; and the errors of
    /// [`ObjectStoreRegistry::open`] (unsupported URI, bad options).
    pub async fn open_table(
        self: &Arc<Self>,
        registry: &ObjectStoreRegistry,
        options: StorageOptions,
        refresh: RefreshConfig,
    ) -> Result<VendedStore> {
        let description = TableOpens::global().describe(self, &refresh).await?;
        let (uri, vended) = self.open_parts(description)?;
        let initial = open_options(&options, &vended);
        let provider: Arc<dyn StorageOptionsProvider> = self.clone();
        registry.open(&uri, initial, Some(provider), refresh)
    }
}

/// Opens the table `spec` names, as [`LanceNamespaceProvider::open_table`] does (one describe
/// call; the answer seeds the credentials).
///
/// # Errors
/// [`Error::InvalidOption`] (key `kind`) for a spec that is not a
/// Lance Namespace table (an Iceberg table is opened at its location with
/// [`CatalogSpec::provider`]), the errors of [`CatalogSpec::lance_provider`], and those of
/// [`LanceNamespaceProvider::open_table`].
pub async fn open_catalog_table(
    spec: &CatalogSpec,
    registry: &ObjectStoreRegistry,
    options: StorageOptions,
    refresh: RefreshConfig,
) -> Result<VendedStore> {
    let provider = Arc::new(spec.lance_provider()?);
    provider.open_table(registry, options, refresh).await
}

/// Describes the table `spec` names (one `DescribeTable` call, shared and remembered as
/// opens are: see the [module docs](self)), with the default backoff.
///
/// # Errors
/// [`Error::InvalidOption`] (key `kind`) for a spec that is not a Lance Namespace table, the
/// errors of [`CatalogSpec::lance_provider`] and of
/// [`LanceNamespaceProvider::describe_table`] (during the backoff after a failure: that
/// failure, remembered).
pub async fn describe_catalog_table(spec: &CatalogSpec) -> Result<TableDescription> {
    let provider = Arc::new(spec.lance_provider()?);
    TableOpens::global()
        .describe(&provider, &RefreshConfig::default())
        .await
}

type SharedCall<T> = Shared<BoxFuture<'static, Result<T>>>;

/// The catalog calls made to open or locate tables, by provider id: single-flight, with the last
/// failure remembered for a backoff (see the [module docs](self)). `T` is what a call answers:
/// a Lance [`TableDescription`] or a Unity Catalog [`UnityTable`], each with a process-wide
/// memory of its own ([`TableOpens::global`], [`TableOpens::unity`]).
pub struct TableOpens<T = TableDescription> {
    slots: Cache<String, Arc<Mutex<Slot<T>>>>,
}

struct Slot<T> {
    in_flight: Option<SharedCall<T>>,
    /// The last failure and when the next call may be made.
    failure: Option<(Error, Instant)>,
    backoff: Backoff,
}

impl<T> Default for Slot<T> {
    fn default() -> Self {
        Self {
            in_flight: None,
            failure: None,
            backoff: Backoff::default(),
        }
    }
}

static GLOBAL_OPENS: Lazy<TableOpens> = Lazy::new(TableOpens::new);
static GLOBAL_UNITY_TABLES: Lazy<TableOpens<UnityTable>> = Lazy::new(TableOpens::new);

impl<T: Clone + Send + Sync + 'static> Default for TableOpens<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T> std::fmt::Debug for TableOpens<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TableOpens")
            .field("tables", &self.slots.entry_count())
            .finish()
    }
}

impl TableOpens {
    /// The process-wide memory of Lance describes, used by
    /// [`LanceNamespaceProvider::open_table`], [`open_catalog_table`] and
    /// [`describe_catalog_table`].
    pub fn global() -> &'static TableOpens {
        &GLOBAL_OPENS
    }

    /// One `DescribeTable` call of `provider`'s table, joined by the concurrent callers of the
    /// same provider id; during the backoff after a failed one (per `config`'s
    /// `initial_backoff`/`max_backoff`), that failure at once, with no call.
    ///
    /// # Errors
    /// The errors of [`LanceNamespaceProvider::describe_table`], or the remembered one (same
    /// kind and catalog failure; the message ends with when the next attempt is).
    pub async fn describe(
        &self,
        provider: &Arc<LanceNamespaceProvider>,
        config: &RefreshConfig,
    ) -> Result<TableDescription> {
        let p = provider.clone();
        self.call(provider.provider_id(), config, move || {
            async move { p.describe_table().await }.boxed()
        })
        .await
    }
}

impl TableOpens<UnityTable> {
    /// The process-wide memory of Unity Catalog `getTable` calls, used by
    /// [`locate_unity_table`].
    pub fn unity() -> &'static TableOpens<UnityTable> {
        &GLOBAL_UNITY_TABLES
    }
}

impl<T: Clone + Send + Sync + 'static> TableOpens<T> {
    /// An empty memory (tables unused for an hour are forgotten; at most 10,000 kept).
    pub fn new() -> Self {
        Self {
            slots: Cache::builder()
                .max_capacity(10_000)
                .time_to_idle(Duration::from_secs(3600))
                .build(),
        }
    }

    /// Runs `call` for the table whose provider id is `key`, joined by the concurrent callers
    /// of the same key; during the backoff after a failed call (per `config`'s
    /// `initial_backoff`/`max_backoff`, the rule of [`Serving::Nothing`]), that failure at once,
    /// without calling. A success is not remembered.
    ///
    /// # Errors
    /// The errors of `call`, or the remembered one (same kind and catalog failure; the message
    /// ends with when the next attempt is).
    pub async fn call<F>(&self, key: String, config: &RefreshConfig, call: F) -> Result<T>
    where
        F: FnOnce() -> BoxFuture<'static, Result<T>>,
    {
        let slot = self.slots.get_with(key.clone(), Default::default);
        let shared = {
            let mut s = slot.lock().unwrap_or_else(|p| p.into_inner());
            match &s.in_flight {
                Some(shared) => shared.clone(),
                None => {
                    if let Some((e, retry_at)) = &s.failure {
                        let now = Instant::now();
                        if now < *retry_at {
                            return Err(remembered(e, *retry_at - now));
                        }
                    }
                    let config = config.clone();
                    let slot = slot.clone();
                    let call = call();
                    let shared = async move {
                        // In its own task when there is a runtime (as the refresher's refreshes):
                        // the call completes even if every caller went away (the next caller
                        // finds its outcome), and a panic becomes an error instead of poisoning
                        // the shared call.
                        let answer = match tokio::runtime::Handle::try_current() {
                            Ok(handle) => handle.spawn(call).await.unwrap_or_else(|e| {
                                Err(Error::provider(
                                    key.clone(),
                                    format!("the catalog call's task failed: {e}"),
                                ))
                            }),
                            Err(_) => call.await,
                        };
                        let mut s = slot.lock().unwrap_or_else(|p| p.into_inner());
                        s.in_flight = None;
                        match &answer {
                            Ok(_) => {
                                s.failure = None;
                                s.backoff.reset();
                            }
                            Err(e) => {
                                // A table that could not be opened has nothing valid to
                                // serve with: retried at the fixed initial delay (C22).
                                let delay = s.backoff.next_delay(
                                    &config,
                                    e.is_retryable(),
                                    Serving::Nothing,
                                );
                                log::warn!(
                                    "opening a table failed (provider '{key}', next attempt in {delay} ms): {e}"
                                );
                                let delay = Duration::from_millis(delay as u64);
                                s.failure = Some((e.clone(), Instant::now() + delay));
                            }
                        }
                        answer
                    }
                    .boxed()
                    .shared();
                    s.in_flight = Some(shared.clone());
                    shared
                }
            }
        };
        shared.await
    }
}

/// The table a Unity Catalog provider vends for, as [`UnityCatalogProvider::table_info`] gives
/// it (one `getTable` call for a table given by name, none for one given by id), shared and
/// remembered as Lance describes are: concurrent callers with the same provider id make one
/// call, and after a failed one callers get that failure at once, without a call, until the
/// backoff has passed ([`RefreshConfig::default`]: 1 s after a transient failure, 30 s after
/// one the catalog calls permanent). See the [module docs](self).
///
/// # Errors
/// The errors of [`UnityCatalogProvider::table_info`] (during the backoff after a failure: that
/// failure, remembered).
pub async fn locate_unity_table(provider: &Arc<UnityCatalogProvider>) -> Result<UnityTable> {
    let p = provider.clone();
    TableOpens::unity()
        .call(
            provider.provider_id(),
            &RefreshConfig::default(),
            move || async move { p.table_info().await }.boxed(),
        )
        .await
}

/// `e` as returned again during the backoff: the same error (kind, retryability, catalog
/// failure), its messages saying that it is remembered and when the next attempt is.
fn remembered(e: &Error, wait: Duration) -> Error {
    let note = format!(
        " (a recent attempt failed; next attempt in {} ms)",
        wait.as_millis()
    );
    match e {
        Error::Provider {
            provider,
            message,
            retryable,
            source,
        } => {
            let catalog = source.as_ref().and_then(|s| {
                let s: &(dyn std::error::Error + 'static) = s.as_ref();
                s.downcast_ref::<CatalogError>()
            });
            let source = match catalog {
                Some(c) => Some(Arc::new(CatalogError {
                    message: format!("{}{note}", c.message),
                    ..c.clone()
                }) as SharedSource),
                None => source.clone(),
            };
            Error::Provider {
                provider: provider.clone(),
                message: format!("{message}{note}"),
                retryable: *retryable,
                source,
            }
        }
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(pairs: &[(&str, &str)]) -> StorageOptions {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn open_options_keep_the_callers_data_plane_secrets_and_endpoint() {
        let mine = map(&[
            ("aws_endpoint", "http://127.0.0.1:9"),
            ("aws_region", "us-east-1"),
            ("aws_access_key_id", "MINE"),
            ("aws_secret_access_key", "mine-secret"),
            ("aws_sse_customer_key_base64", "c3NlLWMta2V5"),
            ("aws_sse_kms_key_id", "arn:aws:kms:us-east-1:1:key/k"),
        ]);
        let vended = map(&[
            ("aws_access_key_id", "VENDED"),
            ("aws_secret_access_key", "vended-secret"),
            ("expires_at_millis", "1767225600000"),
        ]);
        let o = open_options(&mine, &vended);
        assert_eq!(o["aws_access_key_id"], "VENDED");
        assert_eq!(o["aws_secret_access_key"], "vended-secret");
        assert_eq!(o["aws_endpoint"], "http://127.0.0.1:9");
        assert_eq!(o["aws_region"], "us-east-1");
        assert_eq!(o["aws_sse_customer_key_base64"], "c3NlLWMta2V5");
        assert_eq!(o["aws_sse_kms_key_id"], "arn:aws:kms:us-east-1:1:key/k");
        // A key the catalog vends itself wins.
        let o = open_options(&mine, &map(&[("aws_sse_kms_key_id", "vended-kms")]));
        assert_eq!(o["aws_sse_kms_key_id"], "vended-kms");
    }
}
