//! Store URIs: which cloud, which bucket/container, which prefix.
//!
//! | URI | store |
//! |---|---|
//! | `s3://bucket/prefix`, `s3a://bucket/prefix` | Amazon S3 or an S3-compatible endpoint |
//! | `az://container/prefix`, `azure://container/prefix`, `adl://container/prefix`, `abfs[s]://container@account.dfs.core.windows.net/prefix` | Azure Blob Storage / ADLS Gen2 |
//! | `gs://bucket/prefix` | Google Cloud Storage |
//! | `file:///absolute/dir` | local files |
//! | `memory://[name]` | memory (shared while the registry keeps it) |
//!
//! The kind of store is decided by `object_store`'s own parser
//! ([`object_store::ObjectStoreScheme`]). A URI never carries credentials: user info (other
//! than the container of an `abfs[s]` URI) and query strings (a pre-signed
//! `X-Amz-Security-Token=...`) are rejected, and no error ever prints them.

use object_store::path::Path;
use object_store::ObjectStoreScheme;

use crate::error::{Error, Result};

/// The kinds of store a URI can name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Scheme {
    /// Amazon S3 and S3-compatible endpoints.
    S3,
    /// Azure Blob Storage / ADLS Gen2.
    Azure,
    /// Google Cloud Storage.
    Gcs,
    /// `file:///absolute/path`.
    File,
    /// `memory://` (an in-memory store shared while the registry keeps it).
    Memory,
}

impl Scheme {
    /// The canonical scheme name (`s3`, `az`, `gs`, `file`, `memory`).
    pub fn as_str(self) -> &'static str {
        match self {
            Scheme::S3 => "s3",
            Scheme::Azure => "az",
            Scheme::Gcs => "gs",
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
    /// Bucket (S3, GCS), container (Azure), the root directory (`file`), the name (`memory`).
    pub authority: String,
    /// The storage account an `abfs[s]://container@account.dfs.core.windows.net` URI names;
    /// `None` for every other URI (Azure then takes the account from the options).
    pub account: Option<String>,
    /// The prefix inside the store that relative paths are resolved against.
    pub base: Path,
}

/// `uri` as it may be printed: without user info, query or fragment.
pub fn printable_uri(uri: &str) -> String {
    let cut = uri.find(['?', '#']).unwrap_or(uri.len());
    let uri = &uri[..cut];
    match uri.split_once("://") {
        Some((scheme, rest)) => {
            let (authority, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
            let host = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
            let user = if authority.contains('@') { "***@" } else { "" };
            format!("{scheme}://{user}{host}{path}")
        }
        None => uri.to_string(),
    }
}

/// Parses a store URI.
///
/// # Errors
/// [`Error::InvalidUri`] (which prints the URI without user info or query) for an unparsable
/// URI, an unknown scheme (the message lists the supported ones), a URI without a bucket or
/// container, user info or a query or fragment in the URI, `.`/`..` segments, or a relative
/// `file` path.
pub fn parse_store_uri(uri: &str) -> Result<StoreUri> {
    let bad = |m: &str| Error::InvalidUri {
        uri: printable_uri(uri),
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
        return Err(bad(
            "a store URI must not have a query (?...) or fragment (#...): pass credentials as storage options",
        ));
    }
    let abfs = matches!(parsed.scheme(), "abfs" | "abfss");
    if parsed.password().is_some() || (!parsed.username().is_empty() && !abfs) {
        return Err(bad(
            "a store URI must not carry user info (user:secret@): pass credentials as storage options",
        ));
    }
    let raw_path = rest.trim_start_matches('/');
    let raw_path = raw_path.split_once(['?', '#']).map_or(raw_path, |(p, _)| p);
    if raw_path.split(['/', '\\']).any(|seg| {
        let seg = seg.to_ascii_lowercase().replace("%2e", ".");
        seg == "." || seg == ".."
    }) {
        return Err(bad("'.' and '..' path segments are not allowed"));
    }
    if parsed.scheme() == "memory" {
        return Ok(StoreUri {
            scheme: Scheme::Memory,
            authority: parsed.host_str().unwrap_or("").to_string(),
            account: None,
            base: prefix_of(parsed.path()).map_err(|e| bad(&e))?,
        });
    }
    let host = parsed.host_str().unwrap_or("").to_string();
    if parsed.scheme() != "file" {
        // A bad prefix is reported as such, before object_store's parser fails on it.
        prefix_of(parsed.path()).map_err(|e| bad(&e))?;
    }
    let kind = match ObjectStoreScheme::parse(&parsed) {
        Ok((kind, _)) => kind,
        Err(_) if parsed.scheme() == "file" => {
            return Err(bad("a file URI needs an absolute path: file:///path"))
        }
        Err(_) if matches!(parsed.scheme(), "s3" | "s3a" | "gs" | "az" | "azure" | "adl") => {
            return Err(bad(&format!(
                "a {} URI needs a bucket or container: {}://name/prefix",
                parsed.scheme(),
                parsed.scheme()
            )))
        }
        Err(_) => {
            return Err(bad(&format!(
                "unsupported scheme '{}' (supported: s3, s3a, az, azure, adl, abfs, abfss, gs, file, memory)",
                parsed.scheme()
            )))
        }
    };
    let base = || prefix_of(parsed.path()).map_err(|e| bad(&e));
    let needs_name = |what: &str| {
        bad(&format!(
            "a {} URI needs a {what}: {}://{what}/prefix",
            parsed.scheme(),
            parsed.scheme()
        ))
    };
    match kind {
        ObjectStoreScheme::AmazonS3 if matches!(parsed.scheme(), "s3" | "s3a") => {
            if host.is_empty() {
                return Err(needs_name("bucket"));
            }
            Ok(StoreUri {
                scheme: Scheme::S3,
                authority: host,
                account: None,
                base: base()?,
            })
        }
        ObjectStoreScheme::GoogleCloudStorage => {
            if host.is_empty() {
                return Err(needs_name("bucket"));
            }
            Ok(StoreUri {
                scheme: Scheme::Gcs,
                authority: host,
                account: None,
                base: base()?,
            })
        }
        ObjectStoreScheme::MicrosoftAzure if abfs => {
            let container = parsed.username();
            let account = host.split('.').next().unwrap_or("");
            if container.is_empty() || account.is_empty() || !host.contains('.') {
                return Err(bad(
                    "an abfs(s) URI names container and account: abfss://container@account.dfs.core.windows.net/prefix",
                ));
            }
            Ok(StoreUri {
                scheme: Scheme::Azure,
                authority: container.to_string(),
                account: Some(account.to_string()),
                base: base()?,
            })
        }
        ObjectStoreScheme::MicrosoftAzure if matches!(parsed.scheme(), "az" | "azure" | "adl") => {
            if host.is_empty() {
                return Err(needs_name("container"));
            }
            Ok(StoreUri {
                scheme: Scheme::Azure,
                authority: host,
                account: None,
                base: base()?,
            })
        }
        ObjectStoreScheme::Local => {
            let path = parsed
                .to_file_path()
                .map_err(|_| bad("a file URI needs an absolute path: file:///path"))?;
            Ok(StoreUri {
                scheme: Scheme::File,
                authority: path.to_string_lossy().into_owned(),
                account: None,
                base: Path::default(),
            })
        }
        _ if parsed.scheme() == "file" => {
            Err(bad("a file URI needs an absolute path: file:///path"))
        }
        _ => Err(bad(&format!(
            "unsupported scheme '{}' (supported: s3, s3a, az, azure, adl, abfs, abfss, gs, file, memory)",
            parsed.scheme()
        ))),
    }
}

/// The URI's path as an object-store prefix. The URL parser percent-encodes the path
/// (`täble` becomes `t%C3%A4ble`, a space `%20`): decode it, or objects would land under the
/// literal escaped name.
fn prefix_of(url_path: &str) -> std::result::Result<Path, String> {
    let decoded = percent_encoding::percent_decode_str(url_path)
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
        let u = parse_store_uri("s3a://bucket/t%C3%A4ble").unwrap();
        assert_eq!(u.base.as_ref(), "täble");
        let u = parse_store_uri("file:///tmp/x").unwrap();
        assert_eq!((u.scheme, u.authority.as_str()), (Scheme::File, "/tmp/x"));
        let u = parse_store_uri("memory://").unwrap();
        assert_eq!(u.scheme, Scheme::Memory);
        let u = parse_store_uri("gs://b/p").unwrap();
        assert_eq!((u.scheme, u.authority.as_str()), (Scheme::Gcs, "b"));
        let u = parse_store_uri("az://c/p").unwrap();
        assert_eq!(
            (u.scheme, u.authority.as_str(), u.account),
            (Scheme::Azure, "c", None)
        );
        let u = parse_store_uri("abfss://c@acct.dfs.core.windows.net/p/q").unwrap();
        assert_eq!(
            (
                u.scheme,
                u.authority.as_str(),
                u.account.as_deref(),
                u.base.as_ref()
            ),
            (Scheme::Azure, "c", Some("acct"), "p/q")
        );
    }

    #[test]
    fn rejects_bad_uris_with_reasons() {
        for (uri, needle) in [
            ("foo://x", "unsupported scheme 'foo'"),
            ("s3://", "needs a bucket"),
            ("s3:///path", "needs a bucket"),
            ("az:///path", "needs a bucket or container"),
            ("not a uri", "not a URI"),
            ("file://host/x", "absolute path"),
            (
                "abfss://acct.dfs.core.windows.net/p",
                "names container and account",
            ),
        ] {
            let e = parse_store_uri(uri).unwrap_err().to_string();
            assert!(e.contains(needle), "{uri}: {e}");
        }
    }

    #[test]
    fn c19_uri_secrets_are_rejected_and_never_printed() {
        for uri in [
            "s3://b/p/?X-Amz-Security-Token=SECRET",
            "s3://AKID:SECRET@b/p",
            "s3://SECRET@b/p",
            "gs://b/p#SECRET",
        ] {
            let e = parse_store_uri(uri).unwrap_err().to_string();
            assert!(!e.contains("SECRET"), "{uri}: {e}");
            assert!(e.contains("query") || e.contains("user info"), "{uri}: {e}");
        }
        assert_eq!(printable_uri("s3://a:b@h/p?x=1"), "s3://***@h/p");
    }
}
