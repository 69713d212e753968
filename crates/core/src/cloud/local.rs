//! Local files (`file:///dir`) and memory (`memory://name`): stores without credentials.

use std::sync::Arc;

use super::{CloudAdapter, CloudStore};
use crate::error::{Error, Result};
use crate::options::StorageOptions;
use crate::provider::StorageOptionsProvider;
use crate::refresh::RefreshConfig;
use crate::uri::{Scheme, StoreUri};

/// The adapter for `file://` and `memory://` URIs. Storage options are ignored; a provider,
/// if given, is never called (there is nothing to sign).
#[derive(Debug)]
pub struct LocalAdapter;

impl CloudAdapter for LocalAdapter {
    fn name(&self) -> &'static str {
        "local"
    }

    fn build(
        &self,
        uri: &StoreUri,
        _options: &StorageOptions,
        _provider: Option<Arc<dyn StorageOptionsProvider>>,
        _refresh: RefreshConfig,
    ) -> Result<CloudStore> {
        let mut multipart: Option<Arc<dyn object_store::multipart::MultipartStore>> = None;
        let store: Arc<dyn object_store::ObjectStore> = match uri.scheme {
            Scheme::File => {
                let root = &uri.authority;
                let bad = |message: String| Error::InvalidUri {
                    uri: format!("file://{root}"),
                    message,
                };
                std::fs::create_dir_all(root)
                    .map_err(|e| bad(format!("cannot create the directory: {e}")))?;
                Arc::new(
                    object_store::local::LocalFileSystem::new_with_prefix(root)
                        .map_err(|e| bad(e.to_string()))?,
                )
            }
            _ => {
                let memory = Arc::new(object_store::memory::InMemory::new());
                multipart = Some(memory.clone());
                memory
            }
        };
        Ok(CloudStore {
            store,
            multipart,
            refresher: None,
            counters: Default::default(),
        })
    }

    fn is_auth_failure(&self, _error: &object_store::Error) -> bool {
        false
    }
}
