//! What the library reports about an object.

/// Metadata of an object, with its path relative to the store's base prefix.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ObjectInfo {
    /// Path relative to the URI's prefix.
    pub path: String,
    /// Size in bytes.
    pub size: u64,
    /// Last modification, epoch milliseconds.
    pub last_modified_millis: i64,
    /// ETag, if the store gives one.
    pub e_tag: Option<String>,
    /// Version, if the store gives one.
    pub version: Option<String>,
}
