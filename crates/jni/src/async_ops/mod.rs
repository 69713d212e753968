//! Native completion for `dev.vended.storage.AsyncObjectStore`: the native methods of
//! `dev.vended.storage.AsyncNative`. Marshalling only: every operation is the core's
//! [`VendedStore`] method the synchronous call uses (same refresh and auth-retry path); the
//! bound on calls in flight and the choice of executor are Java's.
//!
//! ```java
//! // Each start* validates its arguments (IllegalArgumentException / IllegalStateException as
//! // the synchronous call), spawns the operation on the native runtime and returns at once
//! // with a task id (> 0). When the task ends (done, failed or cancelled) a runtime thread calls
//! // sink.ready(task) exactly once and returns; Java then calls take(task) exactly once.
//! static native long startGet(long store, String path, Object sink);
//! static native long startGetRange(long store, String path, long start, long end, Object sink);
//! static native long startGetRanges(long store, String path, long[] starts, long[] ends,
//!                                   long minSeek, long maxMerged, String ifMatch,
//!                                   Object sink);
//!                                   // minSeek < 0: the store's default merge rule; every GET
//!                                   // pinned to ifMatch, else the GETs must answer one ETag
//! static native long startPut(long store, String path, byte[] data, int mode, String eTag,
//!                             Object sink);          // mode: 0 overwrite, 1 create, 2 if-match
//! static native long startHead(long store, String path, Object sink);
//! static native long startList(long store, String prefix, Object sink);
//! static native long startDelete(long store, String path, Object sink);
//! static native long startCopy(long store, String from, String to, boolean ifNotExists,
//!                              boolean rename, Object sink);
//! // The task's result, as the synchronous NativeBridge call returns it (byte[], byte[][],
//! // String[] of 5 strings per object, String[] {eTag, version}, or null), or throws the same
//! // exception the synchronous call throws; null for a cancelled task. Frees the task.
//! static native Object take(long task);
//! // For a startGetRanges task: instead of a byte[][], each range is copied into a buffer of
//! // allocate (called on this thread with the range's length, in order, once the task has
//! // succeeded; heap or direct) at its position, which is not moved: one copy per byte.
//! // Returns null; otherwise as take (a buffer with too little room or a read-only one:
//! // IllegalArgumentException).
//! static native Object takeRangesInto(long task, IntFunction<ByteBuffer> allocate);
//! // Asks a running task to stop: its request future is dropped (the HTTP request is
//! // abandoned) and sink.ready is called. Returns false when the task already ended.
//! static native boolean cancel(long task);
//! ```
//!
//! Threads: `sink.ready` runs on a runtime thread (attached as a daemon), inside that thread's
//! own local frame; it must only hand the task to an executor. The result is turned into Java
//! objects (and exceptions thrown) by `take`, a native method called on the Java thread that
//! completes the future, so exception classes resolve through this library's class loader, as
//! for synchronous calls. The sink's global reference is deleted right after `ready` returns.

mod tasks;

use std::sync::Arc;

use jni::objects::{JByteArray, JClass, JLongArray, JObject, JString};
use jni::sys::{jboolean, jint, jlong};
use jni::{Env, EnvUnowned};

use vended_storage::io::{RangeMerge, RangeRead, WriteMode};
use vended_storage::store::VendedStore;

use crate::errors::{BridgeError, ThrowJava};
use crate::streams::java_ranges;
use crate::{optional_string, range, store, string_arg, BridgeResult};
use tasks::{spawn, Value};

fn store_path(
    env: &Env<'_>,
    handle: jlong,
    path: &JString<'_>,
) -> BridgeResult<(Arc<VendedStore>, String)> {
    let store = store(handle)?;
    Ok((store, string_arg(env, path, "path")?))
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_vended_storage_AsyncNative_startGet<'l>(
    mut env: EnvUnowned<'l>,
    _class: JClass<'l>,
    handle: jlong,
    path: JString<'l>,
    sink: JObject<'l>,
) -> jlong {
    env.with_env(|env| -> BridgeResult<jlong> {
        let (store, path) = store_path(env, handle, &path)?;
        spawn(env, &sink, async move {
            Ok(Value::Chunks(store.get_chunks(&path).await?))
        })
    })
    .resolve::<ThrowJava>()
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_vended_storage_AsyncNative_startGetRange<'l>(
    mut env: EnvUnowned<'l>,
    _class: JClass<'l>,
    handle: jlong,
    path: JString<'l>,
    start: jlong,
    end: jlong,
    sink: JObject<'l>,
) -> jlong {
    env.with_env(|env| -> BridgeResult<jlong> {
        let (store, path) = store_path(env, handle, &path)?;
        let r = range(start, end, true)?;
        spawn(env, &sink, async move {
            if r.is_empty() {
                return Ok(Value::Chunks(Vec::new()));
            }
            Ok(Value::Chunks(match store.open_range(&path, r).await? {
                RangeRead::Cached(bytes) => vec![bytes],
                RangeRead::Body(mut body) => body.next_chunks(body.len() as usize).await?,
            }))
        })
    })
    .resolve::<ThrowJava>()
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_vended_storage_AsyncNative_startGetRanges<'l>(
    mut env: EnvUnowned<'l>,
    _class: JClass<'l>,
    handle: jlong,
    path: JString<'l>,
    starts: JLongArray<'l>,
    ends: JLongArray<'l>,
    min_seek: jlong,
    max_merged: jlong,
    if_match: JString<'l>,
    sink: JObject<'l>,
) -> jlong {
    env.with_env(|env| -> BridgeResult<jlong> {
        let (store, path) = store_path(env, handle, &path)?;
        let ranges = java_ranges(env, &starts, &ends)?;
        let if_match = crate::optional_string(env, &if_match)?;
        // min_seek < 0: the store's default rule (VendedStore::get_ranges).
        let merge = if min_seek < 0 {
            RangeMerge::OBJECT_STORE
        } else if max_merged < 1 {
            return Err(BridgeError::Argument(format!(
                "maxMerged must be at least 1 byte, not {max_merged}"
            )));
        } else {
            RangeMerge {
                min_seek: min_seek as u64,
                max_merged: max_merged as u64,
            }
        };
        spawn(env, &sink, async move {
            if ranges.is_empty() {
                return Ok(Value::Parts(Vec::new()));
            }
            Ok(Value::Parts(
                store
                    .get_ranges_chunked(&path, &ranges, merge, if_match.as_deref())
                    .await?,
            ))
        })
    })
    .resolve::<ThrowJava>()
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_vended_storage_AsyncNative_startPut<'l>(
    mut env: EnvUnowned<'l>,
    _class: JClass<'l>,
    handle: jlong,
    path: JString<'l>,
    data: JByteArray<'l>,
    mode: jint,
    e_tag: JString<'l>,
    sink: JObject<'l>,
) -> jlong {
    env.with_env(|env| -> BridgeResult<jlong> {
        let (store, path) = store_path(env, handle, &path)?;
        if data.is_null() {
            return Err(BridgeError::Argument("data must not be null".into()));
        }
        // The streams' rule for the mode (0 overwrite, 1 create, 2 if-match with its eTag).
        let mode = crate::streams::write_mode(env, mode, &e_tag)?;
        // Copied now: the caller may reuse its array once the call returns.
        let bytes = env.convert_byte_array(&data)?;
        spawn(env, &sink, async move {
            match mode {
                // The synchronous put(): a plain PUT, no result.
                WriteMode::Overwrite => {
                    store.put(&path, bytes.into()).await?;
                    Ok(Value::Unit)
                }
                mode => Ok(Value::Written(
                    store.put_opts(&path, bytes.into(), mode).await?,
                )),
            }
        })
    })
    .resolve::<ThrowJava>()
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_vended_storage_AsyncNative_startHead<'l>(
    mut env: EnvUnowned<'l>,
    _class: JClass<'l>,
    handle: jlong,
    path: JString<'l>,
    sink: JObject<'l>,
) -> jlong {
    env.with_env(|env| -> BridgeResult<jlong> {
        let (store, path) = store_path(env, handle, &path)?;
        spawn(env, &sink, async move {
            Ok(Value::Info(store.head(&path).await?))
        })
    })
    .resolve::<ThrowJava>()
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_vended_storage_AsyncNative_startList<'l>(
    mut env: EnvUnowned<'l>,
    _class: JClass<'l>,
    handle: jlong,
    prefix: JString<'l>,
    sink: JObject<'l>,
) -> jlong {
    env.with_env(|env| -> BridgeResult<jlong> {
        let store = store(handle)?;
        let prefix = optional_string(env, &prefix)?;
        spawn(env, &sink, async move {
            Ok(Value::Infos(store.list(prefix.as_deref()).await?))
        })
    })
    .resolve::<ThrowJava>()
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_vended_storage_AsyncNative_startDelete<'l>(
    mut env: EnvUnowned<'l>,
    _class: JClass<'l>,
    handle: jlong,
    path: JString<'l>,
    sink: JObject<'l>,
) -> jlong {
    env.with_env(|env| -> BridgeResult<jlong> {
        let (store, path) = store_path(env, handle, &path)?;
        spawn(env, &sink, async move {
            store.delete(&path).await?;
            Ok(Value::Unit)
        })
    })
    .resolve::<ThrowJava>()
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_vended_storage_AsyncNative_startCopy<'l>(
    mut env: EnvUnowned<'l>,
    _class: JClass<'l>,
    handle: jlong,
    from: JString<'l>,
    to: JString<'l>,
    if_not_exists: jboolean,
    rename: jboolean,
    sink: JObject<'l>,
) -> jlong {
    env.with_env(|env| -> BridgeResult<jlong> {
        let store = store(handle)?;
        let from = string_arg(env, &from, "from")?;
        let to = string_arg(env, &to, "to")?;
        spawn(env, &sink, async move {
            match (rename, if_not_exists) {
                (false, false) => store.copy(&from, &to).await?,
                (false, true) => store.copy_if_not_exists(&from, &to).await?,
                (true, false) => store.rename(&from, &to).await?,
                (true, true) => store.rename_if_not_exists(&from, &to).await?,
            }
            Ok(Value::Unit)
        })
    })
    .resolve::<ThrowJava>()
}

/// Starts a task whose operation panics with `message` (the body of the test build's
/// `AsyncTestHooks.startPanic`, see [`crate::test_support`]).
pub(crate) fn start_panic(
    env: &mut EnvUnowned<'_>,
    message: JString<'_>,
    sink: JObject<'_>,
) -> jlong {
    env.with_env(|env| -> BridgeResult<jlong> {
        let message = string_arg(env, &message, "message")?;
        spawn(env, &sink, async move { std::panic::panic_any(message) })
    })
    .resolve::<ThrowJava>()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_are_checked() {
        assert_eq!(range(0, 0, true).ok(), Some(0..0));
        assert!(range(0, 0, false).is_err());
        assert!(range(-1, 3, true).is_err());
        assert!(range(5, 4, true).is_err());
        assert_eq!(range(2, 5, false).ok(), Some(2..5));
    }
}
