//! # vended-storage
//!
//! Cloud object storage through [`object_store`] with credentials that a catalog *vends* per
//! table and that this crate refreshes before they expire.
//!
//! - [`StorageOptionsProvider`]: where fresh storage options (credentials plus
//!   `expires_at_millis`) come from: a catalog client, a Java provider over JNI, or static
//!   options.
//! - [`CredentialRefresher`]: keeps one store's credential valid (prefetch before expiry, one
//!   refresh at a time, bounded waits, keep-valid-on-error).
//! - [`ObjectStoreRegistry`]: shares stores between opens with an equal [`StoreKey`], whose
//!   credential source (the provider's identity) keeps tables apart.
//! - [`VendedStore`]: an opened URI with byte-level calls; [`VendedStore::object_store`] gives
//!   the `object_store` for other libraries.
//!
//! ```no_run
//! # async fn example() -> vended_storage::Result<()> {
//! use std::collections::HashMap;
//! use std::sync::Arc;
//! use vended_storage::{ObjectStoreRegistry, RefreshConfig, StaticProvider};
//!
//! let initial: HashMap<String, String> = HashMap::from([
//!     ("aws_endpoint".into(), "http://127.0.0.1:9000".into()),
//!     ("aws_region".into(), "us-east-1".into()),
//!     ("aws_allow_http".into(), "true".into()),
//! ]);
//! let provider = Arc::new(StaticProvider::new("my-table", initial.clone()));
//! let store = ObjectStoreRegistry::global().open("s3://bucket/table", initial, Some(provider), RefreshConfig::default())?;
//! store.put("part-0", bytes::Bytes::from_static(b"hello")).await?;
//! # Ok(()) }
//! ```
//!
//! ## Where to start (the README's sections)
//!
//! - **Write a provider**: implement [`StorageOptionsProvider`]; return the complete options
//!   to use now, with `expires_at_millis` (epoch milliseconds, a decimal string). Refresh is
//!   driven by requests: an idle store makes no provider call, and a busy one calls it about
//!   once or twice per credential lifetime ([`RefreshConfig`]).
//! - **Open a store**: [`ObjectStoreRegistry::open`] returns a [`VendedStore`]; stores are
//!   shared by equal [`StoreKey`]s. Every option key: `docs/configuration.md` in the
//!   repository (generated from [`options`] and [`cloud`]).
//! - **Open a table by name from a catalog**: [`LanceNamespaceProvider`] and
//!   [`IcebergRestCredentialsProvider`] in [`catalog`].
//! - **Streams and I/O**: [`io`]: [`ObjectWriter`] (multipart), [`ObjectBody`], ranged reads
//!   into your buffers, [`DelimitedListing`], conditional puts.
//! - **Errors**: [`Error`] with an [`ErrorKind`] and `is_retryable()`.
//! - **Monitoring**: [`VendedStore::refresh_stats`] ([`RefreshStats`]); [`Session`] is a read
//!   cache with [`SessionStats`].

pub mod access;
pub mod audit;
pub mod catalog;
pub mod cloud;
mod driven;
pub mod error;
pub mod fingerprint;
pub mod io;
pub mod key;
pub mod object;
pub mod options;
pub mod provider;
pub mod redact;
pub mod refresh;
pub mod registry;
pub mod session;
pub mod store;
pub mod table;
pub mod uri;

pub use access::AccessMode;
pub use catalog::{
    CatalogError, CatalogErrorKind, CatalogSpec, IcebergRestCredentialsProvider,
    LanceNamespaceProvider,
};
pub use error::{Error, ErrorKind, Result};
pub use io::{DelimitedListing, ObjectBody, ObjectWriter, WriteMode, WriteResult, WriterOptions};
pub use key::StoreKey;
pub use object::ObjectInfo;
pub use options::StorageOptions;
pub use provider::{ObjectIdentity, ProviderIdentity, StaticProvider, StorageOptionsProvider};
pub use refresh::{
    Clock, CredentialRefresher, ManualClock, RefreshConfig, RefreshStats, RefresherHandle,
    SystemClock,
};
pub use registry::{ObjectStoreRegistry, RegistryConfig};
pub use session::{Session, SessionConfig, SessionStats};
pub use store::VendedStore;
