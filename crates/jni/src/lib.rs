//! The JNI binding: native methods of `dev.vended.storage.NativeBridge`.
//!
//! Every entry point runs inside `EnvUnowned::with_env` (which catches panics) and resolves
//! through [`errors::ThrowJava`], so no panic or Rust error crosses into the JVM: each becomes a
//! Java exception (see [`errors`] for the mapping). Blocking work runs on the binding's runtime
//! ([`runtime`]), whose threads are attached to the JVM as daemons.

mod alloc;
mod async_ops;
mod catalog;
mod errors;
mod handles;
mod logging;
mod provider;
mod runtime;
mod streams;

pub use provider::JavaStorageOptionsProvider;

use std::ffi::c_void;
use std::ops::Range;
use std::sync::Arc;
use std::time::Duration;

use jni::objects::{JByteArray, JClass, JLongArray, JObject, JObjectArray, JString};
use jni::sys::{jint, jlong, JNI_VERSION_1_8};
use jni::{Env, EnvUnowned, JavaVM};

use errors::{BridgeError, ThrowJava};
use vended_storage::error::Error;
use vended_storage::options::StorageOptions;
use vended_storage::provider::StorageOptionsProvider;
use vended_storage::refresh::{setting, RefreshConfig};
use vended_storage::registry::ObjectStoreRegistry;
use vended_storage::session::{Session, SessionConfig};
use vended_storage::store::{ObjectInfo, VendedStore};

type BridgeResult<T> = std::result::Result<T, BridgeError>;

/// Stores the `JavaVM` (this also sets `JavaVM::singleton()`), for runtime threads to attach.
///
/// # Safety
/// Called by the JVM with a valid `JavaVM` pointer when the library is loaded.
#[unsafe(no_mangle)]
pub unsafe extern "system" fn JNI_OnLoad(
    vm: *mut jni::sys::JavaVM,
    _reserved: *mut c_void,
) -> jint {
    let stored = std::panic::catch_unwind(|| {
        // SAFETY: the JVM passes a valid, live JavaVM pointer.
        let _ = unsafe { JavaVM::from_raw(vm) };
    });
    if stored.is_err() {
        return jni::sys::JNI_ERR;
    }
    JNI_VERSION_1_8
}

fn string_arg(env: &Env<'_>, s: &JString<'_>, name: &str) -> BridgeResult<String> {
    if s.is_null() {
        return Err(BridgeError::Argument(format!("{name} must not be null")));
    }
    Ok(s.try_to_string(env)?)
}

fn optional_string(env: &Env<'_>, s: &JString<'_>) -> BridgeResult<Option<String>> {
    if s.is_null() {
        Ok(None)
    } else {
        Ok(Some(s.try_to_string(env)?))
    }
}

/// The byte range `[start, end)` of a Java call, checked: `start >= 0` and `end >= start`
/// (`allow_empty`) or `end > start`. The one place of this rule for every JNI entry point.
///
/// # Errors
/// [`BridgeError::Argument`] (an `IllegalArgumentException` in Java) naming the range and the
/// rule it breaks.
pub(crate) fn range(start: jlong, end: jlong, allow_empty: bool) -> BridgeResult<Range<u64>> {
    if start < 0 || end < start || (!allow_empty && end == start) {
        let rule = if allow_empty {
            "end >= start"
        } else {
            "end > start"
        };
        return Err(BridgeError::Argument(format!(
            "invalid range [{start}, {end}): start must be >= 0 and {rule}"
        )));
    }
    Ok(start as u64..end as u64)
}

fn store(handle: jlong) -> BridgeResult<Arc<VendedStore>> {
    handles::STORES
        .get(handle)
        .ok_or(BridgeError::Closed("object store"))
}

fn session(handle: jlong) -> BridgeResult<Arc<Session>> {
    handles::SESSIONS
        .get(handle)
        .ok_or(BridgeError::Closed("session"))
}

fn block_on<F: std::future::Future>(fut: F) -> BridgeResult<F::Output> {
    Ok(runtime::runtime()?.block_on(fut))
}

fn read_options(
    env: &mut Env<'_>,
    keys: &JObjectArray<'_>,
    values: &JObjectArray<'_>,
) -> BridgeResult<StorageOptions> {
    let mut options = StorageOptions::new();
    if keys.is_null() || values.is_null() {
        if keys.is_null() && values.is_null() {
            return Ok(options);
        }
        return Err(BridgeError::Argument(
            "option keys and values must both be given".into(),
        ));
    }
    let n = keys.len(env)?;
    if values.len(env)? != n {
        return Err(BridgeError::Argument(
            "option keys and values differ in length".into(),
        ));
    }
    for i in 0..n {
        let (k, v) = env.with_local_frame(4, |env| -> BridgeResult<(String, Option<String>)> {
            let k = keys.get_element(env, i)?;
            let k = env.cast_local::<JString>(k)?;
            let v = values.get_element(env, i)?;
            let v = env.cast_local::<JString>(v)?;
            let k = string_arg(env, &k, "a storage option key")?;
            Ok((k, optional_string(env, &v)?))
        })?;
        let v = v.ok_or_else(|| {
            BridgeError::Argument(format!("storage option '{k}' has a null value"))
        })?;
        options.insert(k, v);
    }
    Ok(options)
}

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
/// `session_handle` 0 = no session. Shared by `open` and `openWithCatalog` (in [`catalog`]).
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

#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_vended_storage_NativeBridge_get<'l>(
    mut env: EnvUnowned<'l>,
    _class: JClass<'l>,
    handle: jlong,
    path: JString<'l>,
) -> JByteArray<'l> {
    env.with_env(|env| -> BridgeResult<JByteArray<'l>> {
        let store = store(handle)?;
        let path = string_arg(env, &path, "path")?;
        let bytes = block_on(store.get(&path))??;
        Ok(env.byte_array_from_slice(&bytes)?)
    })
    .resolve::<ThrowJava>()
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_vended_storage_NativeBridge_getRange<'l>(
    mut env: EnvUnowned<'l>,
    _class: JClass<'l>,
    handle: jlong,
    path: JString<'l>,
    start: jlong,
    end: jlong,
) -> JByteArray<'l> {
    env.with_env(|env| -> BridgeResult<JByteArray<'l>> {
        let store = store(handle)?;
        let path = string_arg(env, &path, "path")?;
        let r = range(start, end, true)?;
        if r.is_empty() {
            return Ok(env.byte_array_from_slice(&[])?);
        }
        let bytes = block_on(store.get_range(&path, r))??;
        Ok(env.byte_array_from_slice(&bytes)?)
    })
    .resolve::<ThrowJava>()
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_vended_storage_NativeBridge_put<'l>(
    mut env: EnvUnowned<'l>,
    _class: JClass<'l>,
    handle: jlong,
    path: JString<'l>,
    data: JByteArray<'l>,
) {
    env.with_env(|env| -> BridgeResult<()> {
        let store = store(handle)?;
        let path = string_arg(env, &path, "path")?;
        if data.is_null() {
            return Err(BridgeError::Argument("data must not be null".into()));
        }
        let bytes = env.convert_byte_array(&data)?;
        block_on(store.put(&path, bytes.into()))??;
        Ok(())
    })
    .resolve::<ThrowJava>()
}

fn info_strings(info: &ObjectInfo) -> [Option<String>; 5] {
    [
        Some(info.path.clone()),
        Some(info.size.to_string()),
        Some(info.last_modified_millis.to_string()),
        info.e_tag.clone(),
        info.version.clone(),
    ]
}

fn string_array<'l>(
    env: &mut Env<'l>,
    items: impl ExactSizeIterator<Item = Option<String>>,
) -> BridgeResult<JObject<'l>> {
    let array = JObjectArray::<JString>::new(env, items.len(), JString::null())?;
    for (i, item) in items.enumerate() {
        if let Some(s) = item {
            env.with_local_frame(2, |env| -> BridgeResult<()> {
                let js = env.new_string(&s)?;
                array.set_element(env, i, &js)?;
                Ok(())
            })?;
        }
    }
    Ok(array.into())
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_vended_storage_NativeBridge_head<'l>(
    mut env: EnvUnowned<'l>,
    _class: JClass<'l>,
    handle: jlong,
    path: JString<'l>,
) -> JObject<'l> {
    env.with_env(|env| -> BridgeResult<JObject<'l>> {
        let store = store(handle)?;
        let path = string_arg(env, &path, "path")?;
        let info = block_on(store.head(&path))??;
        string_array(env, info_strings(&info).into_iter())
    })
    .resolve::<ThrowJava>()
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_vended_storage_NativeBridge_list<'l>(
    mut env: EnvUnowned<'l>,
    _class: JClass<'l>,
    handle: jlong,
    prefix: JString<'l>,
) -> JObject<'l> {
    env.with_env(|env| -> BridgeResult<JObject<'l>> {
        let store = store(handle)?;
        let prefix = optional_string(env, &prefix)?;
        let infos = block_on(store.list(prefix.as_deref()))??;
        let flat: Vec<Option<String>> = infos.iter().flat_map(info_strings).collect();
        string_array(env, flat.into_iter())
    })
    .resolve::<ThrowJava>()
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_vended_storage_NativeBridge_delete<'l>(
    mut env: EnvUnowned<'l>,
    _class: JClass<'l>,
    handle: jlong,
    path: JString<'l>,
) {
    env.with_env(|env| -> BridgeResult<()> {
        let store = store(handle)?;
        let path = string_arg(env, &path, "path")?;
        block_on(store.delete(&path))??;
        Ok(())
    })
    .resolve::<ThrowJava>()
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_vended_storage_NativeBridge_refreshStats<'l>(
    mut env: EnvUnowned<'l>,
    _class: JClass<'l>,
    handle: jlong,
) -> JLongArray<'l> {
    env.with_env(|env| -> BridgeResult<JLongArray<'l>> {
        let store = store(handle)?;
        // The order of `vended_storage::refresh::RefreshStats`' fields (`RefreshStats.java`
        // decodes it): counters saturate at `Long.MAX_VALUE`, `None` is -1.
        let count = |n: u64| jlong::try_from(n).unwrap_or(jlong::MAX);
        let values: [jlong; 10] = match store.refresh_stats() {
            Some(s) => [
                count(s.fetches),
                count(s.failures),
                s.last_refresh_millis.unwrap_or(-1),
                s.expires_at_millis.unwrap_or(-1),
                count(s.stale_waits),
                count(s.generation),
                count(s.endpoint_rejections),
                count(s.auth_refetches),
                count(s.backoff_rejections),
                s.clock_offset_millis,
            ],
            None => [0, 0, -1, -1, 0, 0, 0, 0, 0, 0],
        };
        long_array(env, &values)
    })
    .resolve::<ThrowJava>()
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_vended_storage_NativeBridge_close<'l>(
    mut env: EnvUnowned<'l>,
    _class: JClass<'l>,
    handle: jlong,
) {
    env.with_env(|_env| -> BridgeResult<()> {
        handles::STORES.remove(handle);
        Ok(())
    })
    .resolve::<ThrowJava>()
}

/// Longest session time to live accepted (the caches support up to 1000 years).
const MAX_SESSION_TTL: Duration = Duration::from_secs(999 * 365 * 24 * 3600);

fn long_array<'l>(env: &mut Env<'l>, values: &[jlong]) -> BridgeResult<JLongArray<'l>> {
    let array = JLongArray::new(env, values.len())?;
    array.set_region(env, 0, values)?;
    Ok(array)
}

fn positive_or<T: TryFrom<jlong>>(v: jlong, default: T) -> T {
    if v > 0 {
        T::try_from(v).unwrap_or(default)
    } else {
        default
    }
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_vended_storage_NativeBridge_sessionCreate<'l>(
    mut env: EnvUnowned<'l>,
    _class: JClass<'l>,
    metadata_capacity: jlong,
    range_capacity_bytes: jlong,
    max_range_bytes: jlong,
    ttl_millis: jlong,
) -> jlong {
    env.with_env(|_env| -> BridgeResult<jlong> {
        let d = SessionConfig::default();
        let ttl = Duration::from_millis(positive_or(ttl_millis, d.ttl.as_millis() as u64));
        // The caches (moka) panic on a time to live above 1000 years: refuse it as an argument.
        if ttl > MAX_SESSION_TTL {
            return Err(BridgeError::Argument(format!(
                "session ttl must be at most {} ms, got {ttl_millis} ms",
                MAX_SESSION_TTL.as_millis()
            )));
        }
        let config = SessionConfig {
            metadata_capacity: positive_or(metadata_capacity, d.metadata_capacity),
            range_capacity_bytes: positive_or(range_capacity_bytes, d.range_capacity_bytes),
            max_range_bytes: positive_or(max_range_bytes, d.max_range_bytes),
            ttl,
        };
        Ok(handles::SESSIONS.insert(Arc::new(Session::new(config)?)))
    })
    .resolve::<ThrowJava>()
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_vended_storage_NativeBridge_sessionInvalidate<'l>(
    mut env: EnvUnowned<'l>,
    _class: JClass<'l>,
    handle: jlong,
    uri_prefix: JString<'l>,
) {
    env.with_env(|env| -> BridgeResult<()> {
        let s = session(handle)?;
        let prefix = string_arg(env, &uri_prefix, "uriPrefix")?;
        s.invalidate(&prefix)?;
        Ok(())
    })
    .resolve::<ThrowJava>()
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_vended_storage_NativeBridge_sessionStats<'l>(
    mut env: EnvUnowned<'l>,
    _class: JClass<'l>,
    handle: jlong,
) -> JLongArray<'l> {
    env.with_env(|env| -> BridgeResult<JLongArray<'l>> {
        let st = session(handle)?.stats();
        let values = [
            st.hits as jlong,
            st.misses as jlong,
            st.evictions as jlong,
            st.entries as jlong,
        ];
        long_array(env, &values)
    })
    .resolve::<ThrowJava>()
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_vended_storage_NativeBridge_sessionClose<'l>(
    mut env: EnvUnowned<'l>,
    _class: JClass<'l>,
    handle: jlong,
) {
    env.with_env(|_env| -> BridgeResult<()> {
        handles::SESSIONS.remove(handle);
        Ok(())
    })
    .resolve::<ThrowJava>()
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_vended_storage_NativeBridge_nativeVersion<'l>(
    mut env: EnvUnowned<'l>,
    _class: JClass<'l>,
) -> JObject<'l> {
    env.with_env(|env| -> BridgeResult<JObject<'l>> {
        Ok(env.new_string(env!("CARGO_PKG_VERSION"))?.into())
    })
    .resolve::<ThrowJava>()
}

/// The number of the JNI contract between the Java classes of `dev.vended.storage` and this
/// library. Bump it whenever an exported native method is added, removed or renamed, or changes
/// its parameter or return types, and bump `NativeLoader.NATIVE_ABI` (Java) with it.
pub const NATIVE_ABI: u32 = 3;

/// `private static native String nativeAbi()` of `dev.vended.storage.NativeLoader`: the first
/// native method the Java side calls after loading the library, before any other, to check that
/// the classes and the library come from the same release. Returns `"<crate version>/<ABI>"`,
/// e.g. `0.1.0/1` ([`NATIVE_ABI`]). Its name and signature never change.
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_vended_storage_NativeLoader_nativeAbi<'l>(
    mut env: EnvUnowned<'l>,
    _class: JClass<'l>,
) -> JObject<'l> {
    env.with_env(|env| -> BridgeResult<JObject<'l>> {
        let abi = format!("{}/{}", env!("CARGO_PKG_VERSION"), NATIVE_ABI);
        Ok(env.new_string(abi)?.into())
    })
    .resolve::<ThrowJava>()
}

/// Test hook `dev.vended.storage.NativeTestHooks.panic` (a class of the Java tests module):
/// panics with `message` (in the calling thread, or inside a runtime task when `in_runtime`) so
/// tests can show a panic becomes a Java exception. Exported only with the cargo feature
/// `test-hooks`, which only the tests' build of the library enables.
#[cfg(feature = "test-hooks")]
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_vended_storage_NativeTestHooks_panic<'l>(
    mut env: EnvUnowned<'l>,
    _class: JClass<'l>,
    message: JString<'l>,
    in_runtime: jni::sys::jboolean,
) {
    env.with_env(|env| -> BridgeResult<()> {
        let message = string_arg(env, &message, "message")?;
        if in_runtime {
            let rt = runtime::runtime()?;
            let joined = rt.block_on(rt.spawn_blocking(move || -> () { panic!("{message}") }));
            if let Err(e) = joined {
                std::panic::resume_unwind(e.into_panic());
            }
            return Ok(());
        }
        panic!("{message}")
    })
    .resolve::<ThrowJava>()
}
