//! Reading a [`CatalogSpec`] from its kind and string keys: each key taken at most once,
//! unknown keys and secrets' values never quoted.

use std::collections::BTreeMap;
use std::time::Duration;

use super::{CatalogSpec, HEADER_PREFIX, ICEBERG_REST, LANCE_NAMESPACE, UNITY_CATALOG};
use crate::catalog::iceberg::{IcebergTableCredentials, DEFAULT_NAMESPACE_SEPARATOR};
use crate::catalog::lance::DEFAULT_DELIMITER;
use crate::catalog::unity::{UnityOperation, UnityTarget};
use crate::catalog::DEFAULT_CATALOG_TIMEOUT;
use crate::error::{Error, Result};
use crate::options::ACCESS_MODE;

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
        "endpoint, table_id, delimiter, timeout_millis, bearer_token, header.<Name>, access_mode"
    } else if kind == UNITY_CATALOG {
        "uri, table, table_id, path, operation, location, timeout_millis, bearer_token, \
         header.<Name>, access_mode"
    } else {
        "uri, prefix, namespace, namespace_separator, table, location, timeout_millis, \
         bearer_token, header.<Name>, config.<key>, storage_credential.<n>.prefix, \
         storage_credential.<n>.config.<key>, plan_id, staged, access_mode"
    }
}

/// `config.<key>`, `storage_credential.<n>.prefix`, `storage_credential.<n>.config.<key>`,
/// `plan_id` and `staged` of an Iceberg spec. Values are never quoted.
fn iceberg_vended(keys: &mut Keys) -> Result<IcebergTableCredentials> {
    const CONFIG: &str = "config.";
    const CREDENTIAL: &str = "storage_credential.";
    let mut vended = IcebergTableCredentials::default();
    let mut credentials: BTreeMap<usize, (Option<String>, BTreeMap<String, String>)> =
        BTreeMap::new();
    let names: Vec<String> = keys
        .map
        .keys()
        .filter(|k| k.starts_with(CONFIG) || k.starts_with(CREDENTIAL))
        .cloned()
        .collect();
    for key in names {
        let value = keys.map.remove(&key).unwrap_or_default();
        if let Some(name) = key.strip_prefix(CONFIG) {
            if name.is_empty() {
                return Err(Error::invalid_option(
                    key,
                    "a config key needs a name after 'config.'",
                ));
            }
            vended.config.insert(name.to_string(), value);
            continue;
        }
        let rest = &key[CREDENTIAL.len()..];
        let parsed = rest.split_once('.').and_then(|(n, field)| {
            let n: usize = n
                .parse()
                .ok()
                .filter(|_| n.bytes().all(|b| b.is_ascii_digit()))?;
            Some((n, field))
        });
        match parsed {
            Some((n, "prefix")) => credentials.entry(n).or_default().0 = Some(value),
            Some((n, field)) if field.len() > CONFIG.len() && field.starts_with(CONFIG) => {
                let config = &mut credentials.entry(n).or_default().1;
                config.insert(field[CONFIG.len()..].to_string(), value);
            }
            _ => {
                return Err(Error::invalid_option(
                    key,
                    "expected storage_credential.<n>.prefix or storage_credential.<n>.config.<key>",
                ))
            }
        }
    }
    for (n, (prefix, config)) in credentials {
        let prefix = prefix.ok_or_else(|| {
            Error::invalid_option(
                format!("storage_credential.{n}.prefix"),
                "each storage credential needs a prefix",
            )
        })?;
        vended.storage_credentials.push((prefix, config));
    }
    vended.plan_id = keys.optional("plan_id").filter(|p| !p.is_empty());
    vended.staged = match keys.optional("staged").as_deref() {
        None | Some("false") => false,
        Some("true") => true,
        Some(_) => return Err(Error::invalid_option("staged", "must be true or false")),
    };
    Ok(vended)
}

/// `access_mode` (every kind): the access mode of the store the spec's provider serves, `read`
/// or `read_write` (also `read-write`, case ignored; the storage option of the same name), as
/// the Unity Catalog operation that mode needs. `None` when not given.
fn access_mode(keys: &mut Keys) -> Result<Option<UnityOperation>> {
    let Some(text) = keys.optional(ACCESS_MODE) else {
        return Ok(None);
    };
    match text.trim().to_ascii_lowercase().as_str() {
        "read" => Ok(Some(UnityOperation::Read)),
        "read_write" | "read-write" => Ok(Some(UnityOperation::ReadWrite)),
        _ => Err(Error::invalid_option(
            ACCESS_MODE,
            format!(
                "must be read or read_write, got {:?}",
                text.chars().take(40).collect::<String>()
            ),
        )),
    }
}

/// The target (`table`, `table_id` or `path`; `table` may come with `table_id`), the name of a
/// table given by id, and the `operation` of a Unity spec: the explicit `operation`, else the
/// one `access` (the spec's `access_mode`) needs, else `READ`. An explicit `operation` that
/// differs from `access`'s is an error naming both.
fn unity_target(
    keys: &mut Keys,
    access: Option<UnityOperation>,
) -> Result<(UnityTarget, Option<String>, UnityOperation)> {
    let table = keys.optional("table");
    let table_id = keys.optional("table_id");
    let path = keys.optional("path");
    let (target, name) = match (table, table_id, path) {
        (Some(n), None, None) => (UnityTarget::TableName(n), None),
        (n, Some(id), None) => (UnityTarget::TableId(id), n),
        (None, None, Some(p)) => (UnityTarget::Path(p), None),
        (None, None, None) => {
            return Err(Error::invalid_option(
                "table",
                "a unity-catalog catalog spec needs one of 'table', 'table_id' or 'path'",
            ))
        }
        _ => {
            return Err(Error::invalid_option(
                "path",
                "'path' cannot be given with 'table' or 'table_id'",
            ))
        }
    };
    let explicit = match keys.optional("operation") {
        None => None,
        Some(text) => Some(
            UnityOperation::parse(&text)
                .ok_or_else(|| Error::invalid_option("operation", "must be READ or READ_WRITE"))?,
        ),
    };
    let operation = match (explicit, access) {
        (Some(op), Some(mode)) if op != mode => {
            let mode_text = match mode {
                UnityOperation::Read => "read",
                UnityOperation::ReadWrite => "read_write",
            };
            return Err(Error::invalid_option(
                "operation",
                format!(
                    "operation {} does not agree with access_mode {mode_text} (which needs {} \
                     credentials): drop 'operation' or make the two agree",
                    op.table_operation(),
                    mode.table_operation()
                ),
            ));
        }
        (Some(op), _) => op,
        (None, Some(mode)) => mode,
        (None, None) => UnityOperation::Read,
    };
    Ok((target, name, operation))
}

fn separator(keys: &mut Keys, key: &str, default: &str) -> Result<String> {
    let value = keys.optional(key).unwrap_or_else(|| default.to_string());
    if value.is_empty() {
        return Err(Error::invalid_option(key, "must not be empty"));
    }
    Ok(value)
}

impl CatalogSpec {
    /// Reads a spec from its `kind` (`lance-namespace`, `iceberg-rest` or `unity-catalog`) and its keys (see the
    /// [module documentation](super)). Only the keys' presence and form are checked here; the
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
            UNITY_CATALOG => UNITY_CATALOG,
            _ => {
                return Err(Error::invalid_option(
                    "kind",
                    format!(
                        "unknown catalog kind {kind:?} (known: {LANCE_NAMESPACE}, {ICEBERG_REST}, {UNITY_CATALOG})"
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
        // Lance Namespace and Iceberg REST have no read/write parameter: checked, then unused.
        let access = access_mode(&mut keys)?;
        let spec = if kind == LANCE_NAMESPACE {
            let delimiter = separator(&mut keys, "delimiter", DEFAULT_DELIMITER)?;
            CatalogSpec::Lance {
                endpoint: keys.required("endpoint")?,
                table_id: keys.parts("table_id", &delimiter)?,
                delimiter,
                headers,
                timeout,
            }
        } else if kind == UNITY_CATALOG {
            let (target, name, operation) = unity_target(&mut keys, access)?;
            CatalogSpec::Unity {
                uri: keys.required("uri")?,
                target,
                operation,
                location: keys.optional("location").filter(|l| !l.is_empty()),
                name,
                headers,
                timeout,
            }
        } else {
            let separator = separator(
                &mut keys,
                "namespace_separator",
                DEFAULT_NAMESPACE_SEPARATOR,
            )?;
            // Neither namespace nor table: refreshed through the config's refresh endpoint only.
            let tableless = !keys.map.contains_key("namespace") && !keys.map.contains_key("table");
            CatalogSpec::Iceberg {
                uri: match tableless {
                    true => keys.optional("uri").unwrap_or_default(),
                    false => keys.required("uri")?,
                },
                prefix: keys.optional("prefix").filter(|p| !p.is_empty()),
                namespace: match tableless {
                    true => Vec::new(),
                    false => keys.parts("namespace", &separator)?,
                },
                table: match tableless {
                    true => String::new(),
                    false => keys.required("table")?,
                },
                location: keys.required("location")?,
                separator,
                headers,
                timeout,
                vended: iceberg_vended(&mut keys)?,
            }
        };
        keys.finish()?;
        Ok(spec)
    }
}
