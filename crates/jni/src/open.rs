//! The exports that open a store from a URI and storage options (`NativeBridge.open`), and the
//! rules shared with the catalog's open paths ([`crate::catalog`]): the refresh settings of
//! `refreshMillis` and opening (or reusing) a store in the registry.

use std::sync::Arc;

use jni::objects::{JClass, JLongArray, JObject, JObjectArray, JString};
use jni::sys::jlong;
use jni::{Env, EnvUnowned};

use crate::errors::{BridgeError, ThrowJava};
use crate::provider::JavaStorageOptionsProvider;
use crate::{handles, optional_string, read_options, runtime, session, string_arg, BridgeResult};
use vended_storage::error::Error;
use vended_storage::options::StorageOptions;
use vended_storage::provider::StorageOptionsProvider;
use vended_storage::refresh::{setting, RefreshConfig};
use vended_storage::registry::ObjectStoreRegistry;

#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub extern "system" fn Java_dev_vended_storage_NativeBridge_open<'l>(
    mut env: EnvUnowned<'l>,
    _class: JClass<'l>,
    uri: JString<'l>,
    keys: JObjectArray<'l>,
    values: JObjectArray<'l>,
    provider: JObject<'l>,
    provider_id: JString<'l>,
    refresh_millis: JLongArray<'l>,
    session_handle: jlong,
) -> jlong {
    env.with_env(|env| -> BridgeResult<jlong> {
        let uri = string_arg(env, &uri, "uri")?;
        let options = read_options(env, &keys, &values)?;
        let refresh = refresh_config(env, &refresh_millis)?;
        let provider: Option<Arc<dyn StorageOptionsProvider>> = if provider.is_null() {
            None
        } else {
            let id = optional_string(env, &provider_id)?;
            Some(Arc::new(JavaStorageOptionsProvider::new(
                env, &provider, id,
            )?))
        };
        open_store(&uri, options, provider, refresh, session_handle)
    })
    .resolve::<ThrowJava>()
}

/// The setting names of the `refreshMillis` entries, in order (the core's
/// [`setting`] names, which its errors report).
const REFRESH_SETTINGS: [&str; 5] = [
    setting::LEAD_TIME_MILLIS,
    setting::STALE_WINDOW_MILLIS,
    setting::PROVIDER_TIMEOUT_MILLIS,
    setting::INITIAL_BACKOFF_MILLIS,
    setting::MAX_BACKOFF_MILLIS,
];

/// The refresh settings of every open path (`open`, `openWithCatalog`, `catalogOpenTable`):
/// `refreshMillis` = `{leadTime, staleWindow, providerTimeout, initialBackoff, maxBackoff}` in
/// milliseconds, `-1` = the setting's default, `null` = all defaults. Built and validated by the
/// core's [`RefreshConfig::from_millis`].
///
/// # Errors
/// An invalid option naming the setting (e.g. `refresh_initial_backoff_millis`) for a value
/// below `-1`, 0, above one day, or an initial backoff above the maximum backoff; an argument
/// error for an array of another length.
pub(crate) fn refresh_config(
    env: &Env<'_>,
    millis: &JLongArray<'_>,
) -> BridgeResult<RefreshConfig> {
    if millis.is_null() {
        return Ok(RefreshConfig::default());
    }
    let n = millis.len(env)?;
    if n != REFRESH_SETTINGS.len() {
        return Err(BridgeError::Argument(format!(
            "refreshMillis must have {} entries {{{}}}, got {n}",
            REFRESH_SETTINGS.len(),
            REFRESH_SETTINGS.join(", ")
        )));
    }
    let mut values = [0 as jlong; 5];
    millis.get_region(env, 0, &mut values)?;
    let mut picked = [None; 5];
    for ((slot, value), key) in picked.iter_mut().zip(values).zip(REFRESH_SETTINGS) {
        *slot = match value {
            -1 => None,
            v if v >= 0 => Some(v as u64),
            v => {
                return Err(Error::invalid_option(
                    key,
                    format!("must be -1 (the default) or a positive number of ms, got {v}"),
                )
                .into())
            }
        };
    }
    let [lead, stale, timeout, initial, max] = picked;
    Ok(RefreshConfig::from_millis(
        lead, stale, timeout, initial, max,
    )?)
}

/// Opens (or reuses) a store in the registry under the runtime, and returns its handle:
/// `session_handle` 0 = no session. Shared by `open` and `openWithCatalog` (in [`crate::catalog`]).
pub(crate) fn open_store(
    uri: &str,
    options: StorageOptions,
    provider: Option<Arc<dyn StorageOptionsProvider>>,
    refresh: RefreshConfig,
    session_handle: jlong,
) -> BridgeResult<jlong> {
    let session = match session_handle {
        0 => None,
        h => Some(session(h)?),
    };
    let _guard = runtime::runtime()?.enter();
    let mut store = ObjectStoreRegistry::global().open(uri, options, provider, refresh)?;
    if let Some(s) = session {
        store = store.with_session(s);
    }
    Ok(handles::STORES.insert(Arc::new(store)))
}
