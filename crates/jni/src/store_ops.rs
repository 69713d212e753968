//! The exports of an open store's operations (`NativeBridge.get`, `getRange`, `put`,
//! `putCommit`, `head`, `list`, `delete`, `refreshStats`, `requestStats`, `setAuditContext`, `close`): each resolves the store handle, runs the
//! operation on the binding's runtime and converts the result for Java.

use jni::objects::{JByteArray, JClass, JLongArray, JObject, JString};
use jni::sys::jlong;
use jni::EnvUnowned;

use crate::batches::Batches;
use crate::errors::{BridgeError, ThrowJava};
use crate::{
    block_on, handles, info_strings, long_array, optional_string, range, store, streams,
    string_arg, string_array, BridgeResult,
};

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
        let batches = Batches::open(async move { store.open_range(&path, r).await })?;
        streams::new_array(env, batches)
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

/// `{eTag, version, "true"|"false" (recognised retry)}` of `VendedStore::put_commit`.
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_vended_storage_NativeBridge_putCommit<'l>(
    mut env: EnvUnowned<'l>,
    _class: JClass<'l>,
    handle: jlong,
    path: JString<'l>,
    data: JByteArray<'l>,
) -> JObject<'l> {
    env.with_env(|env| -> BridgeResult<JObject<'l>> {
        let store = store(handle)?;
        let path = string_arg(env, &path, "path")?;
        if data.is_null() {
            return Err(BridgeError::Argument("data must not be null".into()));
        }
        let bytes = env.convert_byte_array(&data)?;
        let r = block_on(store.put_commit(&path, bytes.into()))??;
        string_array(
            env,
            [
                r.write.e_tag,
                r.write.version,
                Some(r.recognised_retry.to_string()),
            ]
            .into_iter(),
        )
    })
    .resolve::<ThrowJava>()
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

/// `{algorithm, base64}` of the checksum the service stores for the object, or `null` when it
/// returns none (`VendedStore::stored_checksum`).
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_vended_storage_NativeBridge_storedChecksum<'l>(
    mut env: EnvUnowned<'l>,
    _class: JClass<'l>,
    handle: jlong,
    path: JString<'l>,
) -> JObject<'l> {
    env.with_env(|env| -> BridgeResult<JObject<'l>> {
        let store = store(handle)?;
        let path = string_arg(env, &path, "path")?;
        match block_on(store.stored_checksum(&path))?? {
            Some(c) => string_array(
                env,
                [Some(c.algorithm.name().to_string()), Some(c.base64)].into_iter(),
            ),
            None => Ok(JObject::null()),
        }
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
pub extern "system" fn Java_dev_vended_storage_NativeBridge_requestStats<'l>(
    mut env: EnvUnowned<'l>,
    _class: JClass<'l>,
    handle: jlong,
) -> JLongArray<'l> {
    env.with_env(|env| -> BridgeResult<JLongArray<'l>> {
        let s = store(handle)?.stats();
        // The order of `vended_storage::cloud::requests::RequestStats`' fields
        // (`RequestStats.java` decodes it); counters saturate at `Long.MAX_VALUE`.
        let values = [
            s.requests,
            s.get,
            s.head,
            s.put,
            s.post,
            s.delete,
            s.retryable_failures,
            s.throttled,
            s.credential_refreshes,
            s.checksums_matched,
            s.checksum_mismatches,
        ]
        .map(|n| jlong::try_from(n).unwrap_or(jlong::MAX));
        long_array(env, &values)
    })
    .resolve::<ThrowJava>()
}

/// Sets the audit context of the calling thread (`vended_storage::audit`): the operations it
/// starts from now on carry it in their requests' `User-Agent`; `null` or empty clears it.
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_vended_storage_NativeBridge_setAuditContext<'l>(
    mut env: EnvUnowned<'l>,
    _class: JClass<'l>,
    context: JString<'l>,
) {
    env.with_env(|env| -> BridgeResult<()> {
        let context = optional_string(env, &context)?;
        vended_storage::audit::set_thread_context(context.as_deref());
        Ok(())
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
