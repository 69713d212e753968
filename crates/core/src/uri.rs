//! Store URIs: `s3://bucket/prefix`, `file:///absolute/path`, `memory://[name]`.

use object_store::path::Path;

use crate::error::{Error, Result};

/// The kinds of store a URI can name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Scheme {
    /// `s3://bucket/prefix` (also `s3a://`).
    S3,
    /// `file:///absolute/path`.
    File,
    /// `memory://` (an in-memory store shared while the registry keeps it).
    Memory,
}

impl Scheme {
    /// The canonical scheme name.
    pub fn as_str(self) -> &'static str {
        match self {
            Scheme::S3 => "s3",
            Scheme::File => "file",
            Scheme::Memory => "memory",
        }
    }
}

/// A parsed store URI.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoreUri {
    /// The kind of store.
    pub scheme: Scheme,
    /// Bucket for S3, the root directory for `file`, the name for `memory`.
    pub authority: String,
    /// The prefix inside the store that relative paths are resolved against.
    pub base: Path,
}

/// Parses a store URI.
///
/// # Errors
/// [`Error::InvalidUri`] for an unparsable URI, an unknown scheme (the message lists the
/// supported ones), an S3 URI without a bucket, or a relative `file` path.
pub fn parse_store_uri(uri: &str) -> Result<StoreUri> {
    let bad = |m: &str| Error::InvalidUri {
        uri: uri.to_string(),
        message: m.to_string(),
    };
    let parsed = url::Url::parse(uri).map_err(|e| bad(&format!("not a URI ({e})")))?;
    // The URL parser silently resolves `.`/`..` segments, drops `?query`/`#fragment`, and reads
    // `file:relative` as `/relative`: refuse all of these rather than open another location.
    let rest = uri.split_once(':').map_or("", |(_, r)| r);
    if !rest.starts_with('/') {
        return Err(bad(
            "expected scheme://...; a file URI needs an absolute path: file:///path",
        ));
    }
    if parsed.query().is_some() || parsed.fragment().is_some() {
        return Err(bad("a store URI must not have a query (?) or fragment (#)"));
    }
    let raw_path = rest.trim_start_matches('/');
    let raw_path = raw_path.split_once(['?', '#']).map_or(raw_path, |(p, _)| p);
    if raw_path.split(['/', '\\']).any(|seg| {
        let seg = seg.to_ascii_lowercase().replace("%2e", ".");
        seg == "." || seg == ".."
    }) {
        return Err(bad("'.' and '..' path segments are not allowed"));
    }
    match parsed.scheme() {
        "s3" | "s3a" => {
            let bucket = parsed.host_str().unwrap_or("").to_string();
            if bucket.is_empty() {
                return Err(bad("an S3 URI needs a bucket: s3://bucket/prefix"));
            }
            let base = prefix_of(&parsed).map_err(|e| bad(&e))?;
            Ok(StoreUri {
                scheme: Scheme::S3,
                authority: bucket,
                base,
            })
        }
        "file" => {
            if parsed
                .host_str()
                .is_some_and(|h| !h.is_empty() && h != "localhost")
            {
                return Err(bad("a file URI needs an absolute path: file:///path"));
            }
            let path = parsed
                .to_file_path()
                .map_err(|_| bad("a file URI needs an absolute path: file:///path"))?;
            Ok(StoreUri {
                scheme: Scheme::File,
                authority: path.to_string_lossy().into_owned(),
                base: Path::default(),
            })
        }
        "memory" => Ok(StoreUri {
            scheme: Scheme::Memory,
            authority: parsed.host_str().unwrap_or("").to_string(),
            base: prefix_of(&parsed).map_err(|e| bad(&e))?,
        }),
        other => Err(bad(&format!(
            "unsupported scheme '{other}' (supported: s3, s3a, file, memory)"
        ))),
    }
}

/// The URI's path as an object-store prefix. The URL parser percent-encodes the path
/// (`täble` becomes `t%C3%A4ble`, a space `%20`): decode it, or objects would land under the
/// literal escaped name.
fn prefix_of(parsed: &url::Url) -> std::result::Result<Path, String> {
    let decoded = percent_encoding::percent_decode_str(parsed.path())
        .decode_utf8()
        .map_err(|e| format!("bad prefix: not UTF-8 after percent-decoding ({e})"))?;
    Path::parse(decoded.trim_matches('/')).map_err(|e| format!("bad prefix: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_supported_uris() {
        let u = parse_store_uri("s3://bucket/a/b/").unwrap();
        assert_eq!(
            (u.scheme, u.authority.as_str(), u.base.as_ref()),
            (Scheme::S3, "bucket", "a/b")
        );
        let u = parse_store_uri("file:///tmp/x").unwrap();
        assert_eq!((u.scheme, u.authority.as_str()), (Scheme::File, "/tmp/x"));
        let u = parse_store_uri("memory://").unwrap();
        assert_eq!(u.scheme, Scheme::Memory);
    }

    #[test]
    fn rejects_bad_uris_with_reasons() {
        for (uri, needle) in [
            ("foo://x", "unsupported scheme 'foo'"),
            ("s3://", "needs a bucket"),
            ("s3:///path", "needs a bucket"),
            ("not a uri", "not a URI"),
            ("file://host/x", "absolute path"),
        ] {
            let e = parse_store_uri(uri).unwrap_err().to_string();
            assert!(e.contains(needle), "{uri}: {e}");
        }
    }
}
