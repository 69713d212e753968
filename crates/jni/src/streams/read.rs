//! Reads into Java buffers: ranged reads, whole objects, vectored ranges, and sequential
//! readers (one streaming GET read incrementally); see the module above for the Java
//! declarations.

use std::sync::{Arc, Mutex};

use jni::objects::{JByteArray, JByteBuffer, JClass, JLongArray, JObject, JString};
use jni::sys::{jint, jlong};
use jni::EnvUnowned;
use once_cell::sync::Lazy;

use vended_storage::io::{BlockingObjectReader, RangeMerge, RangeRead};
use vended_storage::store::VendedStore;

use super::{
    array_region, arrays_of_chunks, as_jbytes, direct_region, java_ranges, position, MAX_JAVA_ARRAY,
};
use crate::batches::{on_runtime, Batches};
use crate::errors::{BridgeError, ThrowJava};
use crate::handles::HandleTable;
use crate::{optional_string, runtime, store, string_arg, BridgeResult};

#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub extern "system" fn Java_dev_vended_storage_NativeBridge_readRange<'l>(
    mut env: EnvUnowned<'l>,
    _class: JClass<'l>,
    handle: jlong,
    path: JString<'l>,
    pos: jlong,
    if_match: JString<'l>,
    buf: JByteArray<'l>,
    off: jint,
    len: jint,
) -> jint {
    env.with_env(|env| -> BridgeResult<jint> {
        let store = store(handle)?;
        let path = string_arg(env, &path, "path")?;
        let start = position(pos)?;
        let if_match = optional_string(env, &if_match)?;
        let (off, len) = array_region(env, &buf, off, len)?;
        if len == 0 {
            return Ok(0);
        }
        let batches = ranged(store, path, start..start + len as u64, if_match)?;
        if batches.len() == 0 {
            return Ok(-1);
        }
        let filled = batches.for_each(|at, bytes| {
            Ok(buf.set_region(env, (off + at) as jint, as_jbytes(bytes))?)
        })?;
        Ok(filled as jint)
    })
    .resolve::<ThrowJava>()
}

#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub extern "system" fn Java_dev_vended_storage_NativeBridge_readRangeDirect<'l>(
    mut env: EnvUnowned<'l>,
    _class: JClass<'l>,
    handle: jlong,
    path: JString<'l>,
    pos: jlong,
    if_match: JString<'l>,
    buf: JByteBuffer<'l>,
    off: jint,
    len: jint,
) -> jint {
    env.with_env(|env| -> BridgeResult<jint> {
        let store = store(handle)?;
        let path = string_arg(env, &path, "path")?;
        let start = position(pos)?;
        let if_match = optional_string(env, &if_match)?;
        // SAFETY: used only within this call; see `direct_region`.
        let target = unsafe { direct_region(env, &buf, off, len)? };
        if target.is_empty() {
            return Ok(0);
        }
        let end = start + target.len() as u64;
        let batches = ranged(store, path, start..end, if_match)?;
        if batches.len() == 0 {
            return Ok(-1);
        }
        let filled = batches.for_each(|at, bytes| {
            target[at..at + bytes.len()].copy_from_slice(bytes);
            Ok(())
        })?;
        Ok(filled as jint)
    })
    .resolve::<ThrowJava>()
}

/// The body of bytes `range` of `path` (pinned to `if_match`), read on the runtime in batches.
fn ranged(
    store: Arc<VendedStore>,
    path: String,
    range: std::ops::Range<u64>,
    if_match: Option<String>,
) -> BridgeResult<Batches> {
    Batches::open(async move {
        let body = store.read_range(&path, range, if_match.as_deref()).await?;
        Ok(RangeRead::Body(body))
    })
}

/// The whole object `path` handed to `consume`, read again when its bytes do not match the
/// stored checksum, as the core says (`rereads_whole_object`).
fn whole<T>(
    store: &Arc<VendedStore>,
    path: &str,
    mut consume: impl FnMut(Batches) -> BridgeResult<T>,
) -> BridgeResult<T> {
    let mut attempt = 1;
    loop {
        let (store, path) = (store.clone(), path.to_string());
        let read = Batches::open(async move { Ok(RangeRead::Body(store.get_body(&path).await?)) })
            .and_then(&mut consume);
        match read {
            Err(BridgeError::Storage(e)) if e.rereads_whole_object(attempt) => attempt += 1,
            done => return done,
        }
    }
}

/// The whole object `path` into a caller's region of `capacity` bytes, each chunk handed to
/// `put(offset, bytes)`; returns the object's size. A larger object is refused from the
/// answer's headers, before any byte is copied.
fn whole_into(
    store: &Arc<VendedStore>,
    path: &str,
    capacity: usize,
    mut put: impl FnMut(usize, &[u8]) -> BridgeResult<()>,
) -> BridgeResult<jlong> {
    whole(store, path, |batches| {
        if batches.len() > capacity as u64 {
            return Err(too_small(batches.len(), capacity));
        }
        Ok(batches.for_each(&mut put)? as jlong)
    })
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_vended_storage_NativeBridge_getAll<'l>(
    mut env: EnvUnowned<'l>,
    _class: JClass<'l>,
    handle: jlong,
    path: JString<'l>,
) -> JByteArray<'l> {
    env.with_env(|env| -> BridgeResult<JByteArray<'l>> {
        let store = store(handle)?;
        let path = string_arg(env, &path, "path")?;
        whole(&store, &path, |batches| new_array(env, batches))
    })
    .resolve::<ThrowJava>()
}

/// A new Java array of the announced length, filled with each chunk as it arrives (one copy).
///
/// # Errors
/// [`BridgeError::Argument`] when the body is longer than a Java array can be; I/O errors of
/// the body; JNI errors.
pub(crate) fn new_array<'l>(
    env: &mut jni::Env<'l>,
    batches: Batches,
) -> BridgeResult<JByteArray<'l>> {
    if batches.len() > MAX_JAVA_ARRAY {
        return Err(BridgeError::Argument(format!(
            "{} bytes do not fit in a Java array; read them in ranges",
            batches.len()
        )));
    }
    let array = env.new_byte_array(batches.len() as usize)?;
    batches.for_each(|at, bytes| Ok(array.set_region(env, at as jint, as_jbytes(bytes))?))?;
    Ok(array)
}

fn too_small(size: u64, len: usize) -> BridgeError {
    BridgeError::Storage(vended_storage::Error::invalid_option(
        "buffer",
        format!("the object of {size} bytes does not fit in a buffer of {len} bytes"),
    ))
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_vended_storage_NativeBridge_getInto<'l>(
    mut env: EnvUnowned<'l>,
    _class: JClass<'l>,
    handle: jlong,
    path: JString<'l>,
    buf: JByteArray<'l>,
    off: jint,
    len: jint,
) -> jlong {
    env.with_env(|env| -> BridgeResult<jlong> {
        let store = store(handle)?;
        let path = string_arg(env, &path, "path")?;
        let (off, len) = array_region(env, &buf, off, len)?;
        whole_into(&store, &path, len, |at, bytes| {
            Ok(buf.set_region(env, (off + at) as jint, as_jbytes(bytes))?)
        })
    })
    .resolve::<ThrowJava>()
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_vended_storage_NativeBridge_getIntoDirect<'l>(
    mut env: EnvUnowned<'l>,
    _class: JClass<'l>,
    handle: jlong,
    path: JString<'l>,
    buf: JByteBuffer<'l>,
    off: jint,
    len: jint,
) -> jlong {
    env.with_env(|env| -> BridgeResult<jlong> {
        let store = store(handle)?;
        let path = string_arg(env, &path, "path")?;
        // SAFETY: used only within this call; see `direct_region`.
        let target = unsafe { direct_region(env, &buf, off, len)? };
        let capacity = target.len();
        whole_into(&store, &path, capacity, |at, bytes| {
            target[at..at + bytes.len()].copy_from_slice(bytes);
            Ok(())
        })
    })
    .resolve::<ThrowJava>()
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_vended_storage_NativeBridge_getRanges<'l>(
    mut env: EnvUnowned<'l>,
    _class: JClass<'l>,
    handle: jlong,
    path: JString<'l>,
    starts: JLongArray<'l>,
    ends: JLongArray<'l>,
) -> JObject<'l> {
    env.with_env(|env| -> BridgeResult<JObject<'l>> {
        let store = store(handle)?;
        let path = string_arg(env, &path, "path")?;
        let ranges = java_ranges(env, &starts, &ends)?;
        let parts = on_runtime(async move {
            store
                .get_ranges_chunked(&path, &ranges, RangeMerge::OBJECT_STORE, None)
                .await
        })??;
        arrays_of_chunks(env, &parts)
    })
    .resolve::<ThrowJava>()
}

/// Open sequential readers: one streaming GET each, its connection driven by the Java thread
/// that reads (no runtime thread in the data path, see [`BlockingObjectReader`]).
static READERS: Lazy<HandleTable<Mutex<BlockingObjectReader>>> = Lazy::new(HandleTable::default);

/// The open sequential reader `handle`.
///
/// # Errors
/// [`BridgeError::Closed`] when it is closed or unknown.
pub(super) fn reader(handle: jlong) -> BridgeResult<Arc<Mutex<BlockingObjectReader>>> {
    READERS
        .get(handle)
        .ok_or(BridgeError::Closed("sequential reader"))
}

/// Reads through the reader `handle`, at most `len` bytes, handed to `put` piece by piece.
fn reader_fill(
    handle: jlong,
    len: usize,
    put: impl FnMut(usize, &[u8]) -> BridgeResult<()>,
) -> BridgeResult<usize> {
    let reader = reader(handle)?;
    let mut reader = reader.lock().map_err(|_| {
        BridgeError::Argument("the sequential reader failed in an earlier read".into())
    })?;
    reader.read_with(len, put)
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_vended_storage_NativeBridge_readerOpen<'l>(
    mut env: EnvUnowned<'l>,
    _class: JClass<'l>,
    handle: jlong,
    path: JString<'l>,
    pos: jlong,
    end: jlong,
    if_match: JString<'l>,
) -> jlong {
    env.with_env(|env| -> BridgeResult<jlong> {
        let store = store(handle)?;
        let path = string_arg(env, &path, "path")?;
        let start = position(pos)?;
        let end = position(end)?;
        if end <= start {
            return Err(BridgeError::Argument(format!(
                "end {end} must be above position {start}"
            )));
        }
        let if_match = optional_string(env, &if_match)?;
        let background = runtime::runtime()?.handle().clone();
        // `end` is the length the stream was opened with: the object's size.
        let reader = BlockingObjectReader::open_to_end(
            &store,
            &path,
            start,
            end,
            if_match.as_deref(),
            background,
        )?;
        Ok(READERS.insert(Arc::new(Mutex::new(reader))))
    })
    .resolve::<ThrowJava>()
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_vended_storage_NativeBridge_readerRead<'l>(
    mut env: EnvUnowned<'l>,
    _class: JClass<'l>,
    handle: jlong,
    buf: JByteArray<'l>,
    off: jint,
    len: jint,
) -> jint {
    env.with_env(|env| -> BridgeResult<jint> {
        let (off, len) = array_region(env, &buf, off, len)?;
        if len == 0 {
            return Ok(0);
        }
        let filled = reader_fill(handle, len, |at, bytes| {
            Ok(buf.set_region(env, (off + at) as jint, as_jbytes(bytes))?)
        })?;
        Ok(if filled == 0 { -1 } else { filled as jint })
    })
    .resolve::<ThrowJava>()
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_vended_storage_NativeBridge_readerReadDirect<'l>(
    mut env: EnvUnowned<'l>,
    _class: JClass<'l>,
    handle: jlong,
    buf: JByteBuffer<'l>,
    off: jint,
    len: jint,
) -> jint {
    env.with_env(|env| -> BridgeResult<jint> {
        // SAFETY: used only within this call; see `direct_region`.
        let target = unsafe { direct_region(env, &buf, off, len)? };
        if target.is_empty() {
            return Ok(0);
        }
        let len = target.len();
        let filled = reader_fill(handle, len, |at, bytes| {
            target[at..at + bytes.len()].copy_from_slice(bytes);
            Ok(())
        })?;
        Ok(if filled == 0 { -1 } else { filled as jint })
    })
    .resolve::<ThrowJava>()
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_vended_storage_NativeBridge_readerClose<'l>(
    mut env: EnvUnowned<'l>,
    _class: JClass<'l>,
    handle: jlong,
) {
    env.with_env(|_env| -> BridgeResult<()> {
        // Dropping the body closes its connection (the rest of the range is never read).
        READERS.remove(handle);
        Ok(())
    })
    .resolve::<ThrowJava>()
}
