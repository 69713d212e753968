//! The exports of `dev.vended.storage.PendingNative` (deferred commits, see
//! `vended_storage::io::PendingCommit`). Marshalling only. Java declarations (`store` is a
//! handle from `open`; paths are relative to the store's prefix; `json` is a pending commit's
//! JSON as `closePending` returns it):
//!
//! ```java
//! // A pending writer: starts the multipart upload now; with record != null first writes the
//! // upload's pending commit (no parts) there. Written to with NativeBridge.writerWrite /
//! // writerWriteDirect, aborted with NativeBridge.writerAbort. partSize/maxConcurrency <= 0:
//! // the defaults (5 MiB, 8).
//! static native long open(long store, String path, long partSize, int maxConcurrency,
//!                         String record);
//! // Uploads the rest and returns the pending commit's JSON without completing; releases the
//! // handle, also on failure (the upload is then aborted).
//! static native String closePending(long writer);
//! // {location, key, uploadId, length, partCount} of a pending commit's JSON (validated).
//! static native String[] describe(String json);
//! // Completes the upload with this store's credential; {eTag, version}, either may be null.
//! static native String[] complete(long store, String json);
//! // Aborts the upload (an unknown upload counts as aborted).
//! static native void abort(long store, String json);
//! // Aborts every upload recorded under prefix and deletes the records; returns how many.
//! static native long abortRecorded(long store, String prefix);
//! ```

use std::sync::Arc;

use jni::objects::{JClass, JObject, JString};
use jni::sys::{jint, jlong};
use jni::EnvUnowned;
use tokio::sync::Mutex;

use vended_storage::io::PendingCommit;

use crate::errors::{BridgeError, ThrowJava};
use crate::streams::{write_result, writer_options, WRITERS};
use crate::{block_on, optional_string, store, string_arg, string_array, BridgeResult};

fn pending_arg(env: &jni::Env<'_>, json: &JString<'_>) -> BridgeResult<PendingCommit> {
    let json = string_arg(env, json, "json")?;
    Ok(PendingCommit::from_json(&json)?)
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_vended_storage_PendingNative_open<'l>(
    mut env: EnvUnowned<'l>,
    _class: JClass<'l>,
    handle: jlong,
    path: JString<'l>,
    part_size: jlong,
    max_concurrency: jint,
    record: JString<'l>,
) -> jlong {
    env.with_env(|env| -> BridgeResult<jlong> {
        let store = store(handle)?;
        let path = string_arg(env, &path, "path")?;
        let record = optional_string(env, &record)?;
        let options = writer_options(part_size, max_concurrency);
        let w = block_on(async {
            store
                .pending_writer(&path, options, record.as_deref())
                .await
        })??;
        Ok(WRITERS.insert(Arc::new(Mutex::new(w))))
    })
    .resolve::<ThrowJava>()
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_vended_storage_PendingNative_closePending<'l>(
    mut env: EnvUnowned<'l>,
    _class: JClass<'l>,
    handle: jlong,
) -> JObject<'l> {
    env.with_env(|env| -> BridgeResult<JObject<'l>> {
        let w = WRITERS
            .remove(handle)
            .ok_or(BridgeError::Closed("pending writer"))?;
        let pending = block_on(async { w.lock().await.finish_pending().await })??;
        Ok(env.new_string(pending.to_json())?.into())
    })
    .resolve::<ThrowJava>()
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_vended_storage_PendingNative_describe<'l>(
    mut env: EnvUnowned<'l>,
    _class: JClass<'l>,
    json: JString<'l>,
) -> JObject<'l> {
    env.with_env(|env| -> BridgeResult<JObject<'l>> {
        let p = pending_arg(env, &json)?;
        let fields = [
            Some(p.location),
            Some(p.key),
            Some(p.upload_id),
            Some(p.length.to_string()),
            Some(p.parts.len().to_string()),
        ];
        string_array(env, fields.into_iter())
    })
    .resolve::<ThrowJava>()
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_vended_storage_PendingNative_complete<'l>(
    mut env: EnvUnowned<'l>,
    _class: JClass<'l>,
    handle: jlong,
    json: JString<'l>,
) -> JObject<'l> {
    env.with_env(|env| -> BridgeResult<JObject<'l>> {
        let store = store(handle)?;
        let p = pending_arg(env, &json)?;
        let result = block_on(store.complete_pending(&p))??;
        write_result(env, &result)
    })
    .resolve::<ThrowJava>()
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_vended_storage_PendingNative_abort<'l>(
    mut env: EnvUnowned<'l>,
    _class: JClass<'l>,
    handle: jlong,
    json: JString<'l>,
) {
    env.with_env(|env| -> BridgeResult<()> {
        let store = store(handle)?;
        let p = pending_arg(env, &json)?;
        block_on(store.abort_pending(&p))??;
        Ok(())
    })
    .resolve::<ThrowJava>()
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_vended_storage_PendingNative_abortRecorded<'l>(
    mut env: EnvUnowned<'l>,
    _class: JClass<'l>,
    handle: jlong,
    prefix: JString<'l>,
) -> jlong {
    env.with_env(|env| -> BridgeResult<jlong> {
        let store = store(handle)?;
        let prefix = string_arg(env, &prefix, "prefix")?;
        let n = block_on(store.abort_recorded_uploads(&prefix))??;
        Ok(n as jlong)
    })
    .resolve::<ThrowJava>()
}
