//! Catalog specs: a catalog table described by plain strings (the form the JVM side holds and
//! passes over JNI), turned into the Rust provider.
//!
//! A spec is a `kind` and a flat map of string keys to string values:
//!
//! | kind | keys |
//! |---|---|
//! | `lance-namespace` | `endpoint` (required), `table_id` (required; parts joined by `delimiter`), `delimiter` (default `$`) |
//! | `iceberg-rest` | `uri`, `namespace`, `table`, `location` (all required; `namespace` parts joined by `namespace_separator`), `namespace_separator` (default the unit separator U+001F), `prefix` |
//! | both | `timeout_millis` (decimal milliseconds, > 0; default 10 s), `header.<Name>` = value, `bearer_token` |
//!
//! `header.<Name>` values and `bearer_token` (sent as `Authorization: Bearer <token>`) are
//! secrets: no error message and no `Debug` output ever contains one. An unknown key is an
//! error that names the key (never its value).
//!
//! ```
//! use std::collections::BTreeMap;
//! use vended_storage::catalog::CatalogSpec;
//!
//! let map = BTreeMap::from([
//!     ("endpoint".to_string(), "http://127.0.0.1:2333".to_string()),
//!     ("table_id".to_string(), "db$orders".to_string()),
//!     ("bearer_token".to_string(), "my-token".to_string()),
//! ]);
//! let spec = CatalogSpec::parse("lance-namespace", &map)?;
//! assert!(spec.provider_id()?.starts_with("lance-namespace:http://127.0.0.1:2333:db$orders:auth="));
//! assert!(!format!("{spec:?}").contains("my-token"));
//! # Ok::<(), vended_storage::Error>(())
//! ```

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use super::iceberg::{IcebergRestCredentialsProvider, DEFAULT_NAMESPACE_SEPARATOR};
use super::lance::{LanceNamespaceProvider, DEFAULT_DELIMITER};
use super::DEFAULT_CATALOG_TIMEOUT;
use crate::error::{Error, Result};
use crate::provider::StorageOptionsProvider;

/// The `kind` of a Lance Namespace REST spec.
pub const LANCE_NAMESPACE: &str = "lance-namespace";
/// The `kind` of an Iceberg REST spec.
pub const ICEBERG_REST: &str = "iceberg-rest";

/// The prefix of header keys: `header.<Name>`.
pub const HEADER_PREFIX: &str = "header.";

/// A catalog table as plain configuration: what the providers' builders take. Built by
/// [`CatalogSpec::parse`]; [`CatalogSpec::provider`] turns it into the provider. `Debug` shows
/// header names, never their values.
#[derive(Clone, PartialEq, Eq)]
pub enum CatalogSpec {
    /// A Lance Namespace REST table (`DescribeTable`).
    Lance {
        /// The namespace server, e.g. `http://127.0.0.1:2333`.
        endpoint: String,
        /// The table id's parts, outermost namespace first.
        table_id: Vec<String>,
        /// The delimiter that joins the parts in the URL path (default `$`).
        delimiter: String,
        /// Headers sent with every call (name, value); values are secrets.
        headers: Vec<(String, String)>,
        /// The timeout of one call.
        timeout: Duration,
    },
    /// An Iceberg REST table (`loadCredentials`).
    Iceberg {
        /// The catalog's base URL (without `/v1`).
        uri: String,
        /// The catalog's path prefix, if any.
        prefix: Option<String>,
        /// The namespace's parts, outermost first.
        namespace: Vec<String>,
        /// The table name.
        table: String,
        /// The table's location (credentials are chosen for it).
        location: String,
        /// The separator of namespace parts in the URL path (default U+001F).
        separator: String,
        /// Headers sent with every call (name, value); values are secrets.
        headers: Vec<(String, String)>,
        /// The timeout of one call.
        timeout: Duration,
    },
}

impl fmt::Debug for CatalogSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names = |headers: &[(String, String)]| -> Vec<String> {
            headers.iter().map(|(k, _)| k.clone()).collect()
        };
        match self {
            CatalogSpec::Lance {
                endpoint,
                table_id,
                delimiter,
                headers,
                timeout,
            } => f
                .debug_struct("Lance")
                .field("endpoint", endpoint)
                .field("table_id", table_id)
                .field("delimiter", delimiter)
                .field("headers", &names(headers))
                .field("timeout", timeout)
                .finish(),
            CatalogSpec::Iceberg {
                uri,
                prefix,
                namespace,
                table,
                location,
                separator,
                headers,
                timeout,
            } => f
                .debug_struct("Iceberg")
                .field("uri", uri)
                .field("prefix", prefix)
                .field("namespace", namespace)
                .field("table", table)
                .field("location", location)
                .field("separator", separator)
                .field("headers", &names(headers))
                .field("timeout", timeout)
                .finish(),
        }
    }
}

/// The keys of one spec while they are read: each taken at most once, the rest are unknown.
struct Keys {
    kind: &'static str,
    map: BTreeMap<String, String>,
}

impl Keys {
    fn optional(&mut self, key: &str) -> Option<String> {
        self.map.remove(key)
    }

    fn required(&mut self, key: &str) -> Result<String> {
        self.optional(key).ok_or_else(|| {
            Error::invalid_option(key, format!("a {} catalog spec needs '{key}'", self.kind))
        })
    }

    /// `key` split by `separator` (which must not be empty).
    fn parts(&mut self, key: &str, separator: &str) -> Result<Vec<String>> {
        Ok(self
            .required(key)?
            .split(separator)
            .map(str::to_string)
            .collect())
    }

    fn timeout(&mut self) -> Result<Duration> {
        let Some(text) = self.optional("timeout_millis") else {
            return Ok(DEFAULT_CATALOG_TIMEOUT);
        };
        match text.trim().parse::<u64>() {
            Ok(ms) if ms > 0 => Ok(Duration::from_millis(ms)),
            _ => Err(Error::invalid_option(
                "timeout_millis",
                "must be a positive whole number of milliseconds",
            )),
        }
    }

    /// `header.<Name>` entries and `bearer_token`, as headers. Values are never printed.
    fn headers(&mut self) -> Result<Vec<(String, String)>> {
        let keys: Vec<String> = self
            .map
            .keys()
            .filter(|k| k.starts_with(HEADER_PREFIX))
            .cloned()
            .collect();
        let mut headers: Vec<(String, String)> = Vec::with_capacity(keys.len() + 1);
        for key in keys {
            let value = self.map.remove(&key).unwrap_or_default();
            let name = key[HEADER_PREFIX.len()..].to_string();
            if name.is_empty() {
                return Err(Error::invalid_option(
                    key,
                    "a header key needs a name after 'header.'",
                ));
            }
            if headers.iter().any(|(n, _)| n.eq_ignore_ascii_case(&name)) {
                return Err(Error::invalid_option(
                    key,
                    format!("header '{name}' is given more than once (names ignore case)"),
                ));
            }
            headers.push((name, value));
        }
        if let Some(token) = self.optional("bearer_token") {
            if headers
                .iter()
                .any(|(n, _)| n.eq_ignore_ascii_case("authorization"))
            {
                return Err(Error::invalid_option(
                    "bearer_token",
                    "give either 'bearer_token' or 'header.Authorization', not both",
                ));
            }
            if token.trim().is_empty() {
                return Err(Error::invalid_option("bearer_token", "must not be empty"));
            }
            headers.push(("Authorization".to_string(), format!("Bearer {token}")));
        }
        Ok(headers)
    }

    /// Fails on the first key left over (in key order), naming it but not its value.
    fn finish(self) -> Result<()> {
        match self.map.into_keys().next() {
            None => Ok(()),
            Some(key) => Err(Error::invalid_option(
                key.clone(),
                format!(
                    "unknown key '{key}' for a {} catalog spec (known: {})",
                    self.kind,
                    known_keys(self.kind)
                ),
            )),
        }
    }
}

fn known_keys(kind: &str) -> &'static str {
    if kind == LANCE_NAMESPACE {
        "endpoint, table_id, delimiter, timeout_millis, bearer_token, header.<Name>"
    } else {
        "uri, prefix, namespace, namespace_separator, table, location, timeout_millis, \
         bearer_token, header.<Name>"
    }
}

fn separator(keys: &mut Keys, key: &str, default: &str) -> Result<String> {
    let value = keys.optional(key).unwrap_or_else(|| default.to_string());
    if value.is_empty() {
        return Err(Error::invalid_option(key, "must not be empty"));
    }
    Ok(value)
}

impl CatalogSpec {
    /// Reads a spec from its `kind` (`lance-namespace` or `iceberg-rest`) and its keys (see the
    /// [module documentation](self)). Only the keys' presence and form are checked here; the
    /// provider's builder checks the rest (URLs, empty parts...) in [`provider`](Self::provider).
    ///
    /// # Errors
    /// [`Error::InvalidOption`] naming the key (never a value): an unknown kind (key `kind`), a
    /// missing required key, an unknown key, a key given twice, an empty delimiter or
    /// separator, a `timeout_millis` that is not a positive number, a `header.` key without a
    /// name or a header given twice, or both `bearer_token` and `header.Authorization`.
    pub fn parse<I, K, V>(kind: &str, entries: I) -> Result<CatalogSpec>
    where
        I: IntoIterator<Item = (K, V)>,
        K: AsRef<str>,
        V: AsRef<str>,
    {
        let kind: &'static str = match kind {
            LANCE_NAMESPACE => LANCE_NAMESPACE,
            ICEBERG_REST => ICEBERG_REST,
            _ => {
                return Err(Error::invalid_option(
                    "kind",
                    format!(
                        "unknown catalog kind {kind:?} (known: {LANCE_NAMESPACE}, {ICEBERG_REST})"
                    ),
                ))
            }
        };
        let mut map = BTreeMap::new();
        for (k, v) in entries {
            let k = k.as_ref().to_string();
            if map.contains_key(&k) {
                return Err(Error::invalid_option(k, "the key is given more than once"));
            }
            map.insert(k, v.as_ref().to_string());
        }
        let mut keys = Keys { kind, map };
        let headers = keys.headers()?;
        let timeout = keys.timeout()?;
        let spec = if kind == LANCE_NAMESPACE {
            let delimiter = separator(&mut keys, "delimiter", DEFAULT_DELIMITER)?;
            CatalogSpec::Lance {
                endpoint: keys.required("endpoint")?,
                table_id: keys.parts("table_id", &delimiter)?,
                delimiter,
                headers,
                timeout,
            }
        } else {
            let separator = separator(
                &mut keys,
                "namespace_separator",
                DEFAULT_NAMESPACE_SEPARATOR,
            )?;
            CatalogSpec::Iceberg {
                uri: keys.required("uri")?,
                prefix: keys.optional("prefix").filter(|p| !p.is_empty()),
                namespace: keys.parts("namespace", &separator)?,
                table: keys.required("table")?,
                location: keys.required("location")?,
                separator,
                headers,
                timeout,
            }
        };
        keys.finish()?;
        Ok(spec)
    }

    /// The spec's kind: [`LANCE_NAMESPACE`] or [`ICEBERG_REST`].
    pub fn kind(&self) -> &'static str {
        match self {
            CatalogSpec::Lance { .. } => LANCE_NAMESPACE,
            CatalogSpec::Iceberg { .. } => ICEBERG_REST,
        }
    }

    /// Builds the Lance Namespace provider of a `lance-namespace` spec.
    ///
    /// # Errors
    /// [`Error::InvalidOption`] (key `kind`) for another kind; the errors of
    /// [`LanceNamespaceProviderBuilder::build`](super::LanceNamespaceProviderBuilder::build).
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
    /// [`IcebergRestCredentialsProviderBuilder::build`](super::IcebergRestCredentialsProviderBuilder::build).
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
            } => {
                let mut b = IcebergRestCredentialsProvider::builder(
                    uri.clone(),
                    namespace.clone(),
                    table.clone(),
                    location.clone(),
                )
                .namespace_separator(separator.clone())
                .timeout(*timeout);
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

    /// Builds the provider the spec describes. No request is sent.
    ///
    /// # Errors
    /// The errors of the provider's builder ([`Error::InvalidOption`]: a bad URL, an empty
    /// part, a header HTTP does not allow...; never quoting a header value).
    pub fn provider(&self) -> Result<Arc<dyn StorageOptionsProvider>> {
        Ok(match self {
            CatalogSpec::Lance { .. } => Arc::new(self.lance_provider()?),
            CatalogSpec::Iceberg { .. } => Arc::new(self.iceberg_provider()?),
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    const TOKEN: &str = "spec-secret-token-0123";
    const API_KEY: &str = "spec-secret-api-key-4567";

    fn lance(extra: &[(&str, &str)]) -> Result<CatalogSpec> {
        let mut map: HashMap<String, String> = HashMap::from([
            ("endpoint".into(), "http://127.0.0.1:2333".into()),
            ("table_id".into(), "db$orders".into()),
        ]);
        for (k, v) in extra {
            map.insert(k.to_string(), v.to_string());
        }
        CatalogSpec::parse(LANCE_NAMESPACE, &map)
    }

    fn iceberg(extra: &[(&str, &str)]) -> Result<CatalogSpec> {
        let mut map: BTreeMap<String, String> = BTreeMap::from([
            ("uri".into(), "http://127.0.0.1:8181/api/catalog".into()),
            ("namespace".into(), "db".into()),
            ("table".into(), "orders".into()),
            ("location".into(), "s3://wh/db/orders".into()),
        ]);
        for (k, v) in extra {
            map.insert(k.to_string(), v.to_string());
        }
        CatalogSpec::parse(ICEBERG_REST, &map)
    }

    /// The error text, checked to contain no secret, neither in Display nor in Debug.
    fn err(r: Result<CatalogSpec>) -> String {
        let e = r.unwrap_err();
        let text = format!("{e} {e:?}");
        for secret in [TOKEN, API_KEY] {
            assert!(!text.contains(secret), "leaked: {text}");
        }
        assert!(matches!(e, Error::InvalidOption { .. }), "{e:?}");
        e.to_string()
    }

    #[test]
    fn lance_spec_with_defaults() {
        let spec = lance(&[]).unwrap();
        assert_eq!(
            spec,
            CatalogSpec::Lance {
                endpoint: "http://127.0.0.1:2333".into(),
                table_id: vec!["db".into(), "orders".into()],
                delimiter: "$".into(),
                headers: vec![],
                timeout: DEFAULT_CATALOG_TIMEOUT,
            }
        );
        assert_eq!(spec.kind(), LANCE_NAMESPACE);
        assert_eq!(
            spec.provider_id().unwrap(),
            "lance-namespace:http://127.0.0.1:2333:db$orders:auth=none"
        );
        assert_eq!(
            spec.provider_id().unwrap(),
            spec.provider().unwrap().provider_id()
        );
    }

    #[test]
    fn lance_spec_with_every_key() {
        let spec = lance(&[
            ("table_id", "a.b.c"),
            ("delimiter", "."),
            ("timeout_millis", "1500"),
            ("bearer_token", TOKEN),
            ("header.x-api-key", API_KEY),
        ])
        .unwrap();
        let CatalogSpec::Lance {
            table_id,
            delimiter,
            headers,
            timeout,
            ..
        } = &spec
        else {
            panic!("{spec:?}")
        };
        assert_eq!(table_id, &["a", "b", "c"]);
        assert_eq!(delimiter, ".");
        assert_eq!(*timeout, Duration::from_millis(1500));
        assert!(headers.contains(&("x-api-key".into(), API_KEY.into())));
        assert!(headers.contains(&("Authorization".into(), format!("Bearer {TOKEN}"))));
        let p = spec.lance_provider().unwrap();
        assert_eq!(p.table_id(), ["a", "b", "c"]);
        let id = spec.provider_id().unwrap();
        assert!(id.starts_with("lance-namespace:http://127.0.0.1:2333:a.b.c:auth="));
        assert!(!id.ends_with("auth=none"));
        // Equal specs, equal ids; another token, another id.
        assert_eq!(
            id,
            lance(&[
                ("table_id", "a.b.c"),
                ("delimiter", "."),
                ("timeout_millis", "1500"),
                ("bearer_token", TOKEN),
                ("header.x-api-key", API_KEY)
            ])
            .unwrap()
            .provider_id()
            .unwrap()
        );
        assert_ne!(
            id,
            lance(&[
                ("table_id", "a.b.c"),
                ("delimiter", "."),
                ("bearer_token", "other")
            ])
            .unwrap()
            .provider_id()
            .unwrap()
        );
        let shown = format!("{spec:?} {id} {p:?}");
        for secret in [TOKEN, API_KEY] {
            assert!(!shown.contains(secret), "leaked: {shown}");
        }
        assert!(
            shown.contains("x-api-key") && shown.contains("Authorization"),
            "{shown}"
        );
    }

    #[test]
    fn iceberg_spec_with_defaults_and_every_key() {
        let spec = iceberg(&[]).unwrap();
        assert_eq!(
            spec,
            CatalogSpec::Iceberg {
                uri: "http://127.0.0.1:8181/api/catalog".into(),
                prefix: None,
                namespace: vec!["db".into()],
                table: "orders".into(),
                location: "s3://wh/db/orders".into(),
                separator: "\u{1f}".into(),
                headers: vec![],
                timeout: DEFAULT_CATALOG_TIMEOUT,
            }
        );
        assert_eq!(spec.kind(), ICEBERG_REST);
        assert_eq!(
            spec.provider_id().unwrap(),
            "iceberg-rest:http://127.0.0.1:8181/api/catalog::db.orders:s3://wh/db/orders:auth=none"
        );
        let spec = iceberg(&[
            ("namespace", "a\u{1f}b"),
            ("prefix", "wh/main"),
            ("timeout_millis", "250"),
            ("bearer_token", TOKEN),
            ("header.X-Iceberg-Access-Delegation", "vended-credentials"),
        ])
        .unwrap();
        let p = spec.iceberg_provider().unwrap();
        assert_eq!(
            p.credentials_url(),
            "http://127.0.0.1:8181/api/catalog/v1/wh/main/namespaces/a%1Fb/tables/orders/credentials"
        );
        let spec = iceberg(&[("namespace", "a.b"), ("namespace_separator", ".")]).unwrap();
        let CatalogSpec::Iceberg {
            namespace,
            separator,
            ..
        } = &spec
        else {
            panic!("{spec:?}")
        };
        assert_eq!(
            (namespace.as_slice(), separator.as_str()),
            (&["a".to_string(), "b".to_string()][..], ".")
        );
        assert_eq!(
            spec.iceberg_provider().unwrap().credentials_url(),
            "http://127.0.0.1:8181/api/catalog/v1/namespaces/a.b/tables/orders/credentials"
        );
        // An empty prefix is none.
        let spec = iceberg(&[("prefix", "")]).unwrap();
        assert!(matches!(spec, CatalogSpec::Iceberg { prefix: None, .. }));
    }

    #[test]
    fn unknown_kinds_and_keys_are_named_without_values() {
        let e = err(CatalogSpec::parse("unity", [("endpoint", "x")]));
        assert!(e.contains("'kind'") && e.contains("unity"), "{e}");
        let e = err(lance(&[("bearer-token", TOKEN)]));
        assert!(e.contains("unknown key 'bearer-token'"), "{e}");
        // A key of the other kind is unknown too.
        let e = err(lance(&[("uri", TOKEN)]));
        assert!(e.contains("unknown key 'uri'"), "{e}");
        let e = err(iceberg(&[("delimiter", API_KEY)]));
        assert!(e.contains("unknown key 'delimiter'"), "{e}");
        let e = err(CatalogSpec::parse(
            LANCE_NAMESPACE,
            [
                ("endpoint", "http://h"),
                ("table_id", "t"),
                ("table_id", "u"),
            ],
        ));
        assert!(
            e.contains("'table_id'") && e.contains("more than once"),
            "{e}"
        );
    }

    #[test]
    fn required_keys_are_named() {
        for missing in ["endpoint", "table_id"] {
            let map: BTreeMap<&str, &str> = [("endpoint", "http://h"), ("table_id", "t")]
                .into_iter()
                .filter(|(k, _)| *k != missing)
                .collect();
            let e = err(CatalogSpec::parse(LANCE_NAMESPACE, map));
            assert!(e.contains(&format!("needs '{missing}'")), "{e}");
        }
        for missing in ["uri", "namespace", "table", "location"] {
            let map: BTreeMap<&str, &str> = [
                ("uri", "http://h"),
                ("namespace", "db"),
                ("table", "t"),
                ("location", "s3://b/t"),
            ]
            .into_iter()
            .filter(|(k, _)| *k != missing)
            .collect();
            let e = err(CatalogSpec::parse(ICEBERG_REST, map));
            assert!(e.contains(&format!("needs '{missing}'")), "{e}");
        }
    }

    #[test]
    fn bad_values_are_named_without_secrets() {
        for bad in ["0", "-5", "1.5", "soon", TOKEN] {
            let e = err(lance(&[("timeout_millis", bad), ("bearer_token", TOKEN)]));
            assert!(
                e.contains("timeout_millis") && e.contains("positive"),
                "{e}"
            );
        }
        let e = err(lance(&[("delimiter", "")]));
        assert!(e.contains("'delimiter'"), "{e}");
        let e = err(iceberg(&[("namespace_separator", "")]));
        assert!(e.contains("'namespace_separator'"), "{e}");
        let e = err(lance(&[("header.", API_KEY)]));
        assert!(e.contains("'header.'") && e.contains("name"), "{e}");
        let e = err(lance(&[
            ("header.X-Key", API_KEY),
            ("header.x-key", API_KEY),
        ]));
        assert!(e.contains("more than once"), "{e}");
        let e = err(lance(&[
            ("bearer_token", TOKEN),
            ("header.authorization", &format!("Bearer {API_KEY}")),
        ]));
        assert!(e.contains("bearer_token") && e.contains("not both"), "{e}");
        let e = err(lance(&[("bearer_token", " ")]));
        assert!(e.contains("bearer_token"), "{e}");
    }

    #[test]
    fn builder_errors_surface_from_provider_without_secrets() {
        // parse checks keys; the builder checks values.
        let spec = lance(&[("endpoint", "ftp://h"), ("bearer_token", TOKEN)]).unwrap();
        let e = spec.provider().map(|_| ()).unwrap_err().to_string();
        assert!(e.contains("endpoint") && !e.contains(TOKEN), "{e}");
        let spec = lance(&[("table_id", "db$$t")]).unwrap();
        let e = spec.provider_id().unwrap_err().to_string();
        assert!(e.contains("empty part"), "{e}");
        let spec = lance(&[("header.X-Key", &format!("line\n{API_KEY}"))]).unwrap();
        let e = spec.provider().map(|_| ()).unwrap_err();
        let text = format!("{e} {e:?}");
        assert!(text.contains("X-Key") && !text.contains(API_KEY), "{text}");
        let spec = iceberg(&[("location", " ")]).unwrap();
        assert!(spec
            .provider_id()
            .unwrap_err()
            .to_string()
            .contains("location"));
        // The wrong kind for a kind-specific builder.
        let e = iceberg(&[])
            .unwrap()
            .lance_provider()
            .unwrap_err()
            .to_string();
        assert!(e.contains("'kind'") && e.contains(LANCE_NAMESPACE), "{e}");
        let e = lance(&[])
            .unwrap()
            .iceberg_provider()
            .unwrap_err()
            .to_string();
        assert!(e.contains("'kind'") && e.contains(ICEBERG_REST), "{e}");
    }
}
