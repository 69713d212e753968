//! Listings: a lazy stream of every object under a prefix, and one level with a delimiter.

use futures::stream::{BoxStream, StreamExt};
use object_store::path::Path;
use object_store::ObjectStore;

use super::{head_has_whole_seconds, info_from, relative_to};
use crate::error::{Error, Result};
use crate::object::ObjectInfo;
use crate::store::VendedStore;

/// One level of a listing with the `/` delimiter.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct DelimitedListing {
    /// Objects directly under the prefix.
    pub objects: Vec<ObjectInfo>,
    /// "Directories" directly under the prefix: paths relative to the store's prefix, without
    /// a trailing `/` (e.g. `year=2024`), each one a prefix of at least one object.
    pub common_prefixes: Vec<String>,
}

/// A listing consumed page by page (for bindings that cannot hold a stream): see
/// [`VendedStore::lister`].
pub struct ObjectLister {
    stream: BoxStream<'static, Result<ObjectInfo>>,
    done: bool,
}

impl std::fmt::Debug for ObjectLister {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ObjectLister")
            .field("done", &self.done)
            .finish()
    }
}

impl ObjectLister {
    /// The next entries, at most `max` (at least one is asked for); empty at the end of the
    /// listing. Fetches further pages from the store as needed.
    ///
    /// # Errors
    /// Permission/credential, provider and I/O errors of the page being fetched.
    pub async fn next_page(&mut self, max: usize) -> Result<Vec<ObjectInfo>> {
        let mut page = Vec::new();
        while !self.done && page.len() < max.max(1) {
            match self.stream.next().await {
                Some(item) => page.push(item?),
                None => self.done = true,
            }
        }
        Ok(page)
    }
}

impl VendedStore {
    /// [`list_stream`](Self::list_stream) as an [`ObjectLister`].
    ///
    /// # Errors
    /// As [`list_stream`](Self::list_stream).
    pub fn lister(&self, prefix: Option<&str>) -> Result<ObjectLister> {
        Ok(ObjectLister {
            stream: self.list_stream(prefix)?,
            done: false,
        })
    }

    fn list_prefix(&self, relative: Option<&str>) -> Result<Option<Path>> {
        match relative
            .map(|r| r.trim_matches('/'))
            .filter(|r| !r.is_empty())
        {
            Some(r) => Ok(Some(self.path(r)?)),
            None if self.base.as_ref().is_empty() => Ok(None),
            None => Ok(Some(self.base.clone())),
        }
    }

    /// Lists every object under `prefix` (relative, whole path segments: `a` matches `a/x`,
    /// not `ab`; `None` for everything under the URI) as a stream that fetches one page
    /// (S3: up to 1,000 keys) at a time, as the consumer pulls. Paths are relative to the
    /// store's prefix; ETags and last modifications are as [`VendedStore::head`] reports them
    /// (S3: whole seconds).
    ///
    /// # Errors
    /// [`Error::InvalidOption`] (key `path`) for a bad prefix, at once; permission/credential,
    /// provider and I/O errors as items of the stream (a rejected first page is retried once
    /// with a fresh credential).
    pub fn list_stream(
        &self,
        prefix: Option<&str>,
    ) -> Result<BoxStream<'static, Result<ObjectInfo>>> {
        let p = self.list_prefix(prefix)?;
        let base = self.base.clone();
        let whole_seconds = head_has_whole_seconds(self.entry.key.scheme);
        Ok(self
            .entry
            .store
            .list(p.as_ref())
            .map(move |item| {
                item.map(|meta| info_from(&base, meta, whole_seconds))
                    .map_err(Error::from)
            })
            .boxed())
    }

    /// Lists the objects and common prefixes directly under `prefix` (relative; `None` for the
    /// URI's prefix), all pages of that one level.
    ///
    /// # Errors
    /// [`Error::InvalidOption`] (key `path`) for a bad prefix; permission/credential, provider
    /// and I/O errors.
    pub async fn list_with_delimiter(&self, prefix: Option<&str>) -> Result<DelimitedListing> {
        let p = self.list_prefix(prefix)?;
        let result = self.entry.store.list_with_delimiter(p.as_ref()).await?;
        let whole_seconds = head_has_whole_seconds(self.entry.key.scheme);
        Ok(DelimitedListing {
            objects: result
                .objects
                .into_iter()
                .map(|m| info_from(&self.base, m, whole_seconds))
                .collect(),
            common_prefixes: result
                .common_prefixes
                .iter()
                .map(|c| relative_to(&self.base, c))
                .collect(),
        })
    }
}
