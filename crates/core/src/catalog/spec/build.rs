//! Building the provider a [`CatalogSpec`] describes (no request is sent).

use std::sync::Arc;

use super::{CatalogSpec, ICEBERG_REST, LANCE_NAMESPACE, UNITY_CATALOG};
use crate::catalog::iceberg::IcebergRestCredentialsProvider;
use crate::catalog::lance::LanceNamespaceProvider;
use crate::catalog::unity::UnityCatalogProvider;
use crate::error::{Error, Result};
use crate::provider::StorageOptionsProvider;

impl CatalogSpec {
    /// Builds the Lance Namespace provider of a `lance-namespace` spec.
    ///
    /// # Errors
    /// [`Error::InvalidOption`] (key `kind`) for another kind; the errors of
    /// [`LanceNamespaceProviderBuilder::build`](crate::catalog::LanceNamespaceProviderBuilder::build).
    pub fn lance_provider(&self) -> Result<LanceNamespaceProvider> {
        match self {
            CatalogSpec::Lance {
                endpoint,
                table_id,
                delimiter,
                headers,
                timeout,
            } => headers
                .iter()
                .fold(
                    LanceNamespaceProvider::builder(endpoint.clone(), table_id.clone())
                        .delimiter(delimiter.clone())
                        .timeout(*timeout),
                    |b, (name, value)| b.header(name.clone(), value.clone()),
                )
                .build(),
            other => Err(Error::invalid_option(
                "kind",
                format!(
                    "this needs a {LANCE_NAMESPACE} catalog spec, not {}",
                    other.kind()
                ),
            )),
        }
    }

    /// Builds the Iceberg REST provider of an `iceberg-rest` spec.
    ///
    /// # Errors
    /// [`Error::InvalidOption`] (key `kind`) for another kind; the errors of
    /// [`IcebergRestCredentialsProviderBuilder::build`](crate::catalog::IcebergRestCredentialsProviderBuilder::build).
    pub fn iceberg_provider(&self) -> Result<IcebergRestCredentialsProvider> {
        match self {
            CatalogSpec::Iceberg {
                uri,
                prefix,
                namespace,
                table,
                location,
                separator,
                headers,
                timeout,
                vended,
            } => {
                let mut b = IcebergRestCredentialsProvider::builder(
                    uri.clone(),
                    namespace.clone(),
                    table.clone(),
                    location.clone(),
                )
                .namespace_separator(separator.clone())
                .timeout(*timeout)
                .table_credentials(vended.clone());
                if let Some(prefix) = prefix {
                    b = b.prefix(prefix.clone());
                }
                headers
                    .iter()
                    .fold(b, |b, (name, value)| b.header(name.clone(), value.clone()))
                    .build()
            }
            other => Err(Error::invalid_option(
                "kind",
                format!(
                    "this needs an {ICEBERG_REST} catalog spec, not {}",
                    other.kind()
                ),
            )),
        }
    }

    /// Builds the Unity Catalog provider of a `unity-catalog` spec.
    ///
    /// # Errors
    /// [`Error::InvalidOption`] (key `kind`) for another kind; the errors of
    /// [`UnityCatalogProviderBuilder::build`](crate::catalog::UnityCatalogProviderBuilder::build).
    pub fn unity_provider(&self) -> Result<UnityCatalogProvider> {
        match self {
            CatalogSpec::Unity {
                uri,
                target,
                operation,
                location,
                name,
                headers,
                timeout,
            } => {
                let mut b = UnityCatalogProvider::builder(uri.clone(), target.clone())
                    .operation(*operation)
                    .timeout(*timeout);
                if let Some(location) = location {
                    b = b.location(location.clone());
                }
                if let Some(name) = name {
                    b = b.table_name(name.clone());
                }
                headers
                    .iter()
                    .fold(b, |b, (name, value)| b.header(name.clone(), value.clone()))
                    .build()
            }
            other => Err(Error::invalid_option(
                "kind",
                format!(
                    "this needs a {UNITY_CATALOG} catalog spec, not {}",
                    other.kind()
                ),
            )),
        }
    }

    /// Builds the provider the spec describes. No request is sent.
    ///
    /// # Errors
    /// The errors of the provider's builder ([`Error::InvalidOption`]: a bad URL, an empty
    /// part, a header HTTP does not allow...; never quoting a header value).
    pub fn provider(&self) -> Result<Arc<dyn StorageOptionsProvider>> {
        Ok(match self {
            CatalogSpec::Lance { .. } => Arc::new(self.lance_provider()?),
            CatalogSpec::Iceberg { .. } => Arc::new(self.iceberg_provider()?),
            CatalogSpec::Unity { .. } => Arc::new(self.unity_provider()?),
        })
    }

    /// The id of the provider the spec describes (see
    /// [`StorageOptionsProvider::provider_id`]): equal specs give equal ids within a process.
    ///
    /// # Errors
    /// The errors of [`provider`](Self::provider).
    pub fn provider_id(&self) -> Result<String> {
        Ok(self.provider()?.provider_id())
    }
}
