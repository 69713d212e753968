//! Opening a catalog table's store: one catalog call, then the registry.
//!
//! The catalog providers ([`crate::catalog`]) sit beside the other providers and know nothing
//! of stores; this module sits above both. It holds
//! [`LanceNamespaceProvider::open_table`] (open a Lance table by name with one `DescribeTable`
//! call), [`open_catalog_table`] (the same from a [`CatalogSpec`]) and [`open_options`] (how
//! the caller's options and the vended ones combine).

use std::sync::Arc;

use crate::catalog::{CatalogSpec, LanceNamespaceProvider};
use crate::error::Result;
use crate::options::{merge, StorageOptions};
use crate::provider::StorageOptionsProvider;
use crate::refresh::RefreshConfig;
use crate::registry::ObjectStoreRegistry;
use crate::store::VendedStore;

/// Options that configure the data rather than the signer and that a catalog does not vend: the
/// SSE-C customer key and the SSE-KMS key id. Opening a table keeps the caller's values (unless
/// the catalog vends its own): dropping them would write data unencrypted, or with the wrong key.
pub const DATA_PLANE_KEYS: [&str; 2] = ["aws_sse_customer_key_base64", "aws_sse_kms_key_id"];

/// The initial options of a table's store: the caller's own (`mine`: endpoint, region,
/// allow-http, encryption keys...) overlaid by the catalog's `vended` ones. Vended credentials
/// replace the caller's credentials as a set ([`merge`]); every other key of the caller is
/// kept unless the answer sets it, and the [`DATA_PLANE_KEYS`] always are.
pub fn open_options(mine: &StorageOptions, vended: &StorageOptions) -> StorageOptions {
    let mut merged = merge(mine, vended);
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
    /// Opens the table's store by name with one describe call: the store's URI is the answer's
    /// `table_uri` (else `location`), its initial options are `options` (the caller's own:
    /// endpoint, region, allow-http, encryption keys...) overlaid by the vended
    /// `storage_options` (see [`open_options`]), and this provider refreshes them before they
    /// expire. The describe answer seeds the credential cache, so opening costs no second call.
    ///
    /// # Errors
    /// The errors of [`describe_table`](Self::describe_table); [`Error::Provider`](crate::Error::Provider)
    /// (kind [`CatalogErrorKind::MissingField`](crate::catalog::CatalogErrorKind::MissingField))
    /// when the answer has no location or no `storage_options`; and the errors of
    /// [`ObjectStoreRegistry::open`] (unsupported URI, bad options).
    pub async fn open_table(
        self: &Arc<Self>,
        registry: &ObjectStoreRegistry,
        options: StorageOptions,
        refresh: RefreshConfig,
    ) -> Result<VendedStore> {
        let (uri, vended) = self.describe_for_open().await?;
        let initial = open_options(&options, &vended);
        let provider: Arc<dyn StorageOptionsProvider> = self.clone();
        registry.open(&uri, initial, Some(provider), refresh)
    }
}

/// Opens the table `spec` names, as [`LanceNamespaceProvider::open_table`] does (one describe
/// call; the answer seeds the credentials).
///
/// # Errors
/// [`Error::InvalidOption`](crate::Error::InvalidOption) (key `kind`) for a spec that is not a
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
