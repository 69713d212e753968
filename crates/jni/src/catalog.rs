//! Native methods of `dev.vended.storage.NativeBridge` for catalog specs: the Java catalog
//! classes are small specs (a kind and flat string keys, see
//! [`CatalogSpec`](vended_storage::catalog::CatalogSpec)); the protocols run here, in the core.
//! Marshalling only: every decision (keys, defaults, validation, the merge on open) lives in
//! the core.
//!
//! A failed catalog call reaches Java as `dev.vended.storage.catalog.CatalogException` (kind,
//! catalog, operation, HTTP status or -1, the catalog's error code and message); every other
//! error goes through the binding's usual mapping ([`crate::errors`]).

use std::sync::Arc;

use jni::errors::ErrorPolicy;
use jni::objects::{JClass, JLongArray, JObject, JObjectArray, JString, JThrowable, JValue};
use jni::sys::jlong;
use jni::{jni_sig, jni_str, Env, EnvUnowned};

use vended_storage::catalog::spec::{LANCE_NAMESPACE, UNITY_CATALOG};
use vended_storage::catalog::{catalog_error, CatalogError, CatalogErrorKind, CatalogSpec};
use vended_storage::options::StorageOptions;
use vended_storage::registry::ObjectStoreRegistry;
use vended_storage::table::{describe_catalog_table, locate_unity_table, open_catalog_table};

use crate::errors::{self, BridgeError, ThrowJava};
use crate::{block_on, read_options, session, string_arg, string_array, BridgeResult};

/// Reads a spec from `kind` and the `keys`/`values` arrays.
fn spec(
    env: &mut Env<'_>,
    kind: &str,
    keys: &JObjectArray<'_>,
    values: &JObjectArray<'_>,
) -> BridgeResult<CatalogSpec> {
    let map = read_options(env, keys, values)?;
    Ok(CatalogSpec::parse(kind, &map)?)
}

/// `key1, value1, key2, value2, ...`, sorted by key.
fn pairs(options: StorageOptions) -> Vec<Option<String>> {
    let mut sorted: Vec<(String, String)> = options.into_iter().collect();
    sorted.sort();
    sorted
        .into_iter()
        .flat_map(|(k, v)| [Some(k), Some(v)])
        .collect()
}

/// `static native String catalogProviderId(String kind, String[] keys, String[] values)`: the id
/// of the provider the spec describes.
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_vended_storage_NativeBridge_catalogProviderId<'l>(
    mut env: EnvUnowned<'l>,
    _class: JClass<'l>,
    kind: JString<'l>,
    keys: JObjectArray<'l>,
    values: JObjectArray<'l>,
) -> JObject<'l> {
    env.with_env(|env| -> BridgeResult<JObject<'l>> {
        let kind = string_arg(env, &kind, "kind")?;
        let id = spec(env, &kind, &keys, &values)?.provider_id()?;
        Ok(env.new_string(id)?.into())
    })
    .resolve::<ThrowJava>()
}

/// `static native String[] catalogFetch(String kind, String[] keys, String[] values)`: one
/// `fetch_storage_options()` call as `key, value` pairs (sorted by key), or `null` for none.
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_vended_storage_NativeBridge_catalogFetch<'l>(
    mut env: EnvUnowned<'l>,
    _class: JClass<'l>,
    kind: JString<'l>,
    keys: JObjectArray<'l>,
    values: JObjectArray<'l>,
) -> JObject<'l> {
    env.with_env(|env| -> BridgeResult<JObject<'l>> {
        let kind = string_arg(env, &kind, "kind")?;
        let provider = spec(env, &kind, &keys, &values)?.provider()?;
        match block_on(provider.fetch_storage_options())?? {
            Some(options) => string_array(env, pairs(options).into_iter()),
            None => Ok(JObject::null()),
        }
    })
    .resolve::<ThrowCatalog>()
}

/// `static native String[] catalogDescribeTable(String[] keys, String[] values)` (Lance
/// Namespace specs): one `DescribeTable` call as `[location, table_uri, present, k1, v1, k2, v2,
/// ...]`; the first two may be `null`; `present` is `"storage_options"` when the answer has
/// `storage_options`, else `null` (and no pairs follow). The call is the core's
/// [`describe_catalog_table`]: shared with concurrent describes and opens of the table in this
/// process, and during the backoff after a failed one that failure, remembered.
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_vended_storage_NativeBridge_catalogDescribeTable<'l>(
    mut env: EnvUnowned<'l>,
    _class: JClass<'l>,
    keys: JObjectArray<'l>,
    values: JObjectArray<'l>,
) -> JObject<'l> {
    env.with_env(|env| -> BridgeResult<JObject<'l>> {
        let spec = spec(env, LANCE_NAMESPACE, &keys, &values)?;
        let d = block_on(describe_catalog_table(&spec))??;
        let present = d
            .storage_options
            .as_ref()
            .map(|_| "storage_options".to_string());
        let mut items = vec![d.location, d.table_uri, present];
        items.extend(pairs(d.storage_options.unwrap_or_default()));
        string_array(env, items.into_iter())
    })
    .resolve::<ThrowCatalog>()
}

/// `static native long catalogOpenTable(String[] keys, String[] values, String[] optionKeys,
/// String[] optionValues, long[] refreshMillis, long sessionHandle)` (Lance Namespace specs):
/// opens the table by name with one describe call ([`open_catalog_table`]: shared and
/// remembered like `catalogDescribeTable`'s), exactly like `open` returns a store handle.
/// `refreshMillis` = `{leadTime, staleWindow, providerTimeout, initialBackoff, maxBackoff}` in
/// milliseconds, `-1` = the default (`null` = all defaults); `sessionHandle` 0 = no session.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub extern "system" fn Java_dev_vended_storage_NativeBridge_catalogOpenTable<'l>(
    mut env: EnvUnowned<'l>,
    _class: JClass<'l>,
    keys: JObjectArray<'l>,
    values: JObjectArray<'l>,
    option_keys: JObjectArray<'l>,
    option_values: JObjectArray<'l>,
    refresh_millis: JLongArray<'l>,
    session_handle: jlong,
) -> jlong {
    env.with_env(|env| -> BridgeResult<jlong> {
        let spec = spec(env, LANCE_NAMESPACE, &keys, &values)?;
        let options = read_options(env, &option_keys, &option_values)?;
        let refresh = crate::refresh_config(env, &refresh_millis)?;
        let session = match session_handle {
            0 => None,
            h => Some(session(h)?),
        };
        // The registry opens the store inside the runtime (block_on), as `open` does under its
        // runtime guard.
        let mut store = block_on(open_catalog_table(
            &spec,
            ObjectStoreRegistry::global(),
            options,
            refresh,
        ))??;
        if let Some(s) = session {
            store = store.with_session(s);
        }
        Ok(crate::handles::STORES.insert(Arc::new(store)))
    })
    .resolve::<ThrowCatalog>()
}

/// `static native String[] catalogUnityTable(String[] keys, String[] values)` (Unity Catalog
/// specs): the table as [`UnityCatalogProvider::table_info`](vended_storage::catalog::UnityCatalogProvider::table_info)
/// gives it, `[table_id, storage_location]` (the second may be `null`): one `getTable` call for
/// a table given by name, none for one given by id, shared with concurrent callers and, after a
/// failure, that failure remembered for the backoff ([`locate_unity_table`]).
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_vended_storage_NativeBridge_catalogUnityTable<'l>(
    mut env: EnvUnowned<'l>,
    _class: JClass<'l>,
    keys: JObjectArray<'l>,
    values: JObjectArray<'l>,
) -> JObject<'l> {
    env.with_env(|env| -> BridgeResult<JObject<'l>> {
        let provider = Arc::new(spec(env, UNITY_CATALOG, &keys, &values)?.unity_provider()?);
        let table = block_on(locate_unity_table(&provider))??;
        string_array(
            env,
            [Some(table.table_id), table.storage_location].into_iter(),
        )
    })
    .resolve::<ThrowCatalog>()
}

/// `static native long openWithCatalog(String uri, String[] optionKeys, String[] optionValues,
/// String catalogKind, String[] specKeys, String[] specValues, long[] refreshMillis, long
/// sessionHandle)`: opens a store exactly like `open`, with the catalog provider the spec
/// describes built here, natively, as its credential source: a refresh calls the catalog from
/// Rust and makes no upcall into the JVM. `refreshMillis` as for `open` (see
/// [`crate::refresh_config`]);
/// `sessionHandle` 0 = no session. The options seed the credentials as with `open` (no catalog
/// call when they hold valid ones).
///
/// Failures map like `open`'s ([`ThrowJava`]): a catalog failure while fetching the first
/// credentials is a `CredentialsException` whose message carries the catalog's; a bad spec is an
/// `InvalidOptionsException` naming the key (never a value).
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub extern "system" fn Java_dev_vended_storage_NativeBridge_openWithCatalog<'l>(
    mut env: EnvUnowned<'l>,
    _class: JClass<'l>,
    uri: JString<'l>,
    option_keys: JObjectArray<'l>,
    option_values: JObjectArray<'l>,
    kind: JString<'l>,
    spec_keys: JObjectArray<'l>,
    spec_values: JObjectArray<'l>,
    refresh_millis: JLongArray<'l>,
    session_handle: jlong,
) -> jlong {
    env.with_env(|env| -> BridgeResult<jlong> {
        let uri = string_arg(env, &uri, "uri")?;
        let options = read_options(env, &option_keys, &option_values)?;
        let kind = string_arg(env, &kind, "catalogKind")?;
        let refresh = crate::refresh_config(env, &refresh_millis)?;
        let provider = spec(env, &kind, &spec_keys, &spec_values)?.provider()?;
        crate::open_store(&uri, options, Some(provider), refresh, session_handle)
    })
    .resolve::<ThrowJava>()
}

/// `static native String storeUri(long handle)`: the URI a store was opened at (for a table
/// opened by name: the catalog's `table_uri` or `location`).
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_vended_storage_NativeBridge_storeUri<'l>(
    mut env: EnvUnowned<'l>,
    _class: JClass<'l>,
    handle: jlong,
) -> JString<'l> {
    env.with_env(|env| -> BridgeResult<JString<'l>> {
        let store = crate::store(handle)?;
        Ok(env.new_string(store.uri())?)
    })
    .resolve::<ThrowJava>()
}

/// The error policy of the catalog calls: a catalog failure becomes a `CatalogException`,
/// everything else (and a panic) what [`ThrowJava`] makes of it.
struct ThrowCatalog;

impl<T: Default> ErrorPolicy<T, BridgeError> for ThrowCatalog {
    type Captures<'unowned_env_local: 'native_method, 'native_method> = ();

    fn on_error<'unowned_env_local: 'native_method, 'native_method>(
        env: &mut Env<'unowned_env_local>,
        _cap: &mut Self::Captures<'unowned_env_local, 'native_method>,
        err: BridgeError,
    ) -> jni::errors::Result<T> {
        throw(env, err)?;
        Ok(T::default())
    }

    fn on_panic<'unowned_env_local: 'native_method, 'native_method>(
        env: &mut Env<'unowned_env_local>,
        cap: &mut Self::Captures<'unowned_env_local, 'native_method>,
        payload: Box<dyn std::any::Any + Send + 'static>,
    ) -> jni::errors::Result<T> {
        <ThrowJava as ErrorPolicy<T, BridgeError>>::on_panic(env, cap, payload)
    }
}

/// Throws a `CatalogException` when `err` comes from a catalog, else the usual exception. If the
/// `CatalogException` cannot be built (an older Java side without the class), falls back to the
/// usual exception too. Does nothing when an exception is already pending.
fn throw(env: &mut Env<'_>, err: BridgeError) -> jni::errors::Result<()> {
    if env.exception_check() {
        return Ok(());
    }
    if let BridgeError::Storage(e) = &err {
        if let Some(c) = catalog_error(e) {
            match throw_catalog_exception(env, c) {
                Ok(true) => return Ok(()),
                Ok(false) => {}
                Err(jni_error) => {
                    log::warn!("cannot throw a CatalogException ({jni_error}); throwing the mapped exception");
                    if env.exception_check() {
                        env.exception_clear();
                    }
                }
            }
        }
    }
    errors::throw(env, err)
}

/// The name of the Java `CatalogException.Kind` constant, if there is one.
fn kind_name(kind: CatalogErrorKind) -> Option<&'static str> {
    Some(match kind {
        CatalogErrorKind::NotFound => "NOT_FOUND",
        CatalogErrorKind::Unauthorized => "UNAUTHORIZED",
        CatalogErrorKind::Forbidden => "FORBIDDEN",
        CatalogErrorKind::ClientError => "CLIENT_ERROR",
        CatalogErrorKind::ServerError => "SERVER_ERROR",
        CatalogErrorKind::Timeout => "TIMEOUT",
        CatalogErrorKind::Transport => "TRANSPORT",
        CatalogErrorKind::MalformedResponse => "MALFORMED_RESPONSE",
        CatalogErrorKind::MissingField => "MISSING_FIELD",
        _ => return None,
    })
}

/// A `CatalogException` for the catalog failure behind `e` (directly, or as the last refresh
/// error of expired credentials), to be the cause of the exception `e` maps to; `None` when `e`
/// has no catalog failure or the exception cannot be built (then no exception is left pending).
pub(crate) fn catalog_cause<'l>(
    env: &mut Env<'l>,
    e: &vended_storage::Error,
) -> Option<JObject<'l>> {
    let c = catalog_error(e)?;
    match new_catalog_exception(env, c) {
        Ok(found) => found,
        Err(jni_error) => {
            log::warn!("cannot build a CatalogException ({jni_error}); no catalog cause attached");
            if env.exception_check() {
                env.exception_clear();
            }
            None
        }
    }
}

/// Builds and throws the `CatalogException` for `c`. `Ok(false)` when the kind has no Java
/// constant.
fn throw_catalog_exception(env: &mut Env<'_>, c: &CatalogError) -> jni::errors::Result<bool> {
    let Some(exception) = new_catalog_exception(env, c)? else {
        return Ok(false);
    };
    let throwable = env.cast_local::<JThrowable>(exception)?;
    match env.throw(&throwable) {
        Ok(()) | Err(jni::errors::Error::JavaException) => Ok(true),
        Err(e) => Err(e),
    }
}

/// Builds `new CatalogException(Kind.valueOf(kind), catalog, operation, status, code, message,
/// null)`. The classes are resolved with JNI `FindClass` from the calling Java thread (the
/// loader of `NativeBridge`, as [`crate::errors`] does). `Ok(None)` when the kind has no Java
/// constant. The CatalogError carries no secret (the core scrubs header values).
fn new_catalog_exception<'l>(
    env: &mut Env<'l>,
    c: &CatalogError,
) -> jni::errors::Result<Option<JObject<'l>>> {
    let Some(kind) = kind_name(c.kind) else {
        return Ok(None);
    };
    let kind_class =
        env.find_class(jni_str!("dev/vended/storage/catalog/CatalogException$Kind"))?;
    let kind_text = env.new_string(kind)?;
    let kind = env
        .call_static_method(
            &kind_class,
            jni_str!("valueOf"),
            jni_sig!("(Ljava/lang/String;)Ldev/vended/storage/catalog/CatalogException$Kind;"),
            &[JValue::Object(&kind_text)],
        )?
        .l()?;
    let class = env.find_class(jni_str!("dev/vended/storage/catalog/CatalogException"))?;
    let catalog = env.new_string(c.catalog)?;
    let operation = env.new_string(&c.operation)?;
    let code: JObject<'_> = match &c.code {
        Some(code) => env.new_string(code)?.into(),
        None => JObject::null(),
    };
    let message = env.new_string(&c.message)?;
    let status = c.status.map_or(-1, i32::from);
    let cause = JObject::null();
    let exception = env.new_object(
        &class,
        jni_sig!(
            "(Ldev/vended/storage/catalog/CatalogException$Kind;Ljava/lang/String;Ljava/lang/String;ILjava/lang/String;Ljava/lang/String;Ljava/lang/Throwable;)V"
        ),
        &[
            JValue::Object(&kind),
            JValue::Object(&catalog),
            JValue::Object(&operation),
            JValue::Int(status),
            JValue::Object(&code),
            JValue::Object(&message),
            JValue::Object(&cause),
        ],
    )?;
    Ok(Some(exception))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_catalog_kind_has_a_java_constant() {
        for kind in [
            CatalogErrorKind::NotFound,
            CatalogErrorKind::Unauthorized,
            CatalogErrorKind::Forbidden,
            CatalogErrorKind::ClientError,
            CatalogErrorKind::ServerError,
            CatalogErrorKind::Timeout,
            CatalogErrorKind::Transport,
            CatalogErrorKind::MalformedResponse,
            CatalogErrorKind::MissingField,
        ] {
            assert!(kind_name(kind).is_some(), "{kind:?}");
        }
    }

    #[test]
    fn pairs_are_flat_and_sorted() {
        let options = StorageOptions::from([
            ("b".to_string(), "2".to_string()),
            ("a".to_string(), "1".to_string()),
        ]);
        assert_eq!(
            pairs(options),
            ["a", "1", "b", "2"].map(|s| Some(s.to_string())).to_vec()
        );
    }
}
