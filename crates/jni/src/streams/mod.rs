//! The data plane of `dev.vended.storage.NativeBridge`: ranged reads into Java buffers, whole
//! objects into one presized array, vectored ranges, a multipart writer handle, listing
//! iterators, conditional puts, server-side copies and renames. Marshalling only: the
//! behaviour is the core's `vended_storage::io` module.
//!
//! Java declarations (all `static native` in `dev.vended.storage.NativeBridge`; `store` is a
//! handle from `open`; positions and sizes are bytes; `ifMatch`/`eTag` are ETags exactly as
//! `head`/`list` return them, quotes included; `null` where allowed means "none"):
//!
//! ```java
//! // Reads up to len bytes at position into buf[off, off+len): one ranged GET, one copy from
//! // the network buffer into the array. Returns the bytes read (fewer than len only at the
//! // end of the object), -1 when position is at or past the end (len > 0), 0 when len == 0.
//! // With ifMatch, a changed object throws PreconditionFailedException.
//! static native int readRange(long store, String path, long position, String ifMatch,
//!                             byte[] buf, int off, int len);
//! // The same into a *direct* ByteBuffer, at absolute indices [off, off+len) (position and
//! // limit of the buffer are neither read nor changed). No intermediate Java array.
//! static native int readRangeDirect(long store, String path, long position, String ifMatch,
//!                                   java.nio.ByteBuffer buf, int off, int len);
//! // A whole object in one array allocated at the size the answer announces, filled chunk by
//! // chunk (one copy). Objects above Integer.MAX_VALUE - 8 bytes: IllegalArgumentException.
//! static native byte[] getAll(long store, String path);
//! // A whole object into buf[off, off+len); returns its size. An object larger than len
//! // throws InvalidOptionsException (nothing copied).
//! static native long getInto(long store, String path, byte[] buf, int off, int len);
//! static native long getIntoDirect(long store, String path, java.nio.ByteBuffer buf,
//!                                  int off, int len);
//! // Several ranges [starts[i], ends[i]) of one object, one array each, in order; close
//! // ranges are fetched with one request.
//! static native byte[][] getRanges(long store, String path, long[] starts, long[] ends);
//!
//! // A sequential reader: ONE GET of [position, end) (cut at the object's end; empty when
//! // position is at or past it) whose body readerRead copies out incrementally, so a long
//! // sequential read costs one request; the reader's own connection is read on the calling
//! // Java thread (no runtime thread in between; between calls the kernel's socket buffer
//! // holds what the endpoint sent ahead). Signed, like every request,
//! // with the credential current when it is sent; with ifMatch, a changed object throws
//! // PreconditionFailedException here. end <= position: IllegalArgumentException.
//! static native long readerOpen(long store, String path, long position, long end,
//!                               String ifMatch);
//! // Copies the next bytes of the body into buf[off, off+len), waiting for them: exactly len
//! // bytes unless the body ends first; -1 when it has ended (len > 0), 0 when len == 0.
//! static native int readerRead(long reader, byte[] buf, int off, int len);
//! static native int readerReadDirect(long reader, java.nio.ByteBuffer buf, int off, int len);
//! // Drops the body (and its connection). A no-op on a closed or unknown handle.
//! static native void readerClose(long reader);
//! // A stream's block lent to Java as direct buffers over the network's own: readRangeBlock,
//! // readerReadBlock, blockBuffers, blockRelease (see the `blocks` module).
//!
//! // A writer: one PUT when the data fits in one part, else a multipart upload whose parts
//! // upload while the caller writes. partSize <= 0: 5 MiB (S3 refuses less than 5 MiB:
//! // InvalidOptionsException naming part_size); maxConcurrency <= 0: 8. Data held:
//! // at most partSize * (maxConcurrency + 1) plus the write call's chunk (process overhead
//! // comes on top, see WriteOptions). mode: 0 overwrite, 1 create only
//! // (ObjectAlreadyExistsException at close), 2 if the object's ETag is eTag
//! // (PreconditionFailedException at close); 1 and 2: a HEAD before a multipart completion,
//! // which carries the condition where the store takes it (atomicity per store:
//! // docs/streams-and-async.md). Nothing is visible before writerClose.
//! static native long writerOpen(long store, String path, long partSize, int maxConcurrency,
//!                               int mode, String eTag);
//! // Appends b[off, off+len) (one copy). Blocks while maxConcurrency parts are uploading.
//! static native void writerWrite(long writer, byte[] b, int off, int len);
//! // Appends bytes [off, off+len) of a direct ByteBuffer (absolute indices).
//! static native void writerWriteDirect(long writer, java.nio.ByteBuffer b, int off, int len);
//! // Completes the object (visible from now on) and releases the handle, also when it fails
//! // (the upload is then aborted). Returns {eTag, version}, either may be null.
//! static native String[] writerClose(long writer);
//! // Aborts (a multipart upload is aborted once its parts in flight end; if the abort fails
//! // it is retried in the background and the exception names the location and upload id)
//! // and releases the handle. A no-op on a closed or unknown handle, so a Cleaner may call it.
//! static native void writerAbort(long writer);
//!
//! // A listing of every object under prefix (null: the whole store), fetched page by page as
//! // listNext is called. listNext returns up to maxEntries (<= 0: 1000) entries flattened as
//! // 5 strings each {path, size, lastModifiedMillis, eTag, version} (eTag/version may be
//! // null), like list; an empty array at the end. listClose is a no-op when closed.
//! static native long listOpen(long store, String prefix);
//! static native String[] listNext(long lister, int maxEntries);
//! static native void listClose(long lister);
//! // One level under prefix with the "/" delimiter: {objects (5 strings each, as listNext),
//! // commonPrefixes (relative paths without a trailing "/")}.
//! static native String[][] listWithDelimiter(long store, String prefix);
//!
//! // One PUT of data[off, off+len) under mode (0 overwrite, 1 create only, 2 if-match eTag);
//! // atomic at the store. Returns {eTag, version}.
//! static native String[] putIf(long store, String path, byte[] data, int off, int len,
//!                              int mode, String eTag);
//! // Server-side copy / move (S3 has no rename: copy then delete). ifNotExists on S3 needs the
//! // store opened with aws_copy_if_not_exists=multipart (else InvalidOptionsException).
//! static native void copyObject(long store, String from, String to, boolean ifNotExists);
//! static native void renameObject(long store, String from, String to, boolean ifNotExists);
//! ```
//!
//! Every entry point validates its arguments (null paths and arrays, negative positions,
//! `off`/`len` outside the array or buffer, a heap `ByteBuffer` where a direct one is needed:
//! `IllegalArgumentException`; closed or unknown handles: `IllegalStateException`) and never
//! panics across the boundary. A writer or lister keeps its store's connection and credentials
//! alive until it is closed, even if the store handle is closed first. Handles are not
//! thread-confined; concurrent calls on one writer or lister run one at a time.

mod blocks;
mod list;
mod read;
mod write;

pub(crate) use blocks::live_blocks;
pub(crate) use read::new_array;
pub(crate) use write::{writer_options, WRITERS};

use std::ops::Range;

use bytes::Bytes;

use jni::objects::{JByteArray, JByteBuffer, JClass, JLongArray, JObject, JObjectArray, JString};
use jni::sys::{jboolean, jint, jlong};
use jni::{jni_sig, jni_str, Env, EnvUnowned};

use vended_storage::io::{WriteMode, WriteResult};

use crate::errors::{BridgeError, ThrowJava};
use crate::{block_on, range, store, string_arg, string_array, BridgeResult};

pub(super) const MAX_JAVA_ARRAY: u64 = i32::MAX as u64 - 8;

pub(super) fn as_jbytes(b: &[u8]) -> &[i8] {
    // SAFETY: u8 and i8 have the same size and alignment; every bit pattern is valid for both.
    unsafe { std::slice::from_raw_parts(b.as_ptr().cast(), b.len()) }
}

pub(super) fn as_jbytes_mut(b: &mut [u8]) -> &mut [i8] {
    // SAFETY: as in `as_jbytes`; the borrow is exclusive.
    unsafe { std::slice::from_raw_parts_mut(b.as_mut_ptr().cast(), b.len()) }
}

/// A new Java array holding `chunks` one after the other (one copy per byte).
///
/// # Errors
/// [`BridgeError::Argument`] when they are longer than a Java array can be; JNI errors.
pub(crate) fn array_of_chunks<'l>(
    env: &mut Env<'l>,
    chunks: &[Bytes],
) -> BridgeResult<JByteArray<'l>> {
    let len: u64 = chunks.iter().map(|c| c.len() as u64).sum();
    if len > MAX_JAVA_ARRAY {
        return Err(BridgeError::Argument(format!(
            "{len} bytes do not fit in a Java array; read them in ranges"
        )));
    }
    let array = env.new_byte_array(len as usize)?;
    let mut at = 0usize;
    for chunk in chunks {
        array.set_region(env, at as jint, as_jbytes(chunk))?;
        at += chunk.len();
    }
    Ok(array)
}

/// A `byte[][]` with one new array per part, each filled from the part's chunks (one copy per
/// byte), in order.
///
/// # Errors
/// As [`array_of_chunks`].
pub(crate) fn arrays_of_chunks<'l>(
    env: &mut Env<'l>,
    parts: &[Vec<Bytes>],
) -> BridgeResult<JObject<'l>> {
    let result = JObjectArray::<JByteArray>::new(env, parts.len(), JByteArray::null())?;
    for (i, chunks) in parts.iter().enumerate() {
        env.with_local_frame(2, |env| -> BridgeResult<()> {
            let array = array_of_chunks(env, chunks)?;
            result.set_element(env, i, &array)?;
            Ok(())
        })?;
    }
    Ok(result.into())
}

/// Copies `chunks` into the `java.nio.ByteBuffer` `buffer` at its position (one copy per byte),
/// heap (through its array) or direct; its position and limit are not changed.
///
/// # Errors
/// [`BridgeError::Argument`] when `buffer` is null, not a `ByteBuffer`, read-only or has fewer
/// bytes remaining than the chunks hold; JNI errors (an exception of the buffer's methods).
pub(crate) fn fill_buffer(
    env: &mut Env<'_>,
    buffer: &JObject<'_>,
    chunks: &[Bytes],
) -> BridgeResult<()> {
    let len: usize = chunks.iter().map(Bytes::len).sum();
    if buffer.is_null() || !env.is_instance_of(buffer, jni_str!("java/nio/ByteBuffer"))? {
        return Err(BridgeError::Argument(
            "the allocator did not return a ByteBuffer".into(),
        ));
    }
    let read_only = env
        .call_method(buffer, jni_str!("isReadOnly"), jni_sig!("()Z"), &[])?
        .z()?;
    if read_only {
        return Err(BridgeError::Argument(
            "the allocator returned a read-only ByteBuffer".into(),
        ));
    }
    let int = |env: &mut Env<'_>, name: &'static jni::strings::JNIStr| -> BridgeResult<jint> {
        Ok(env.call_method(buffer, name, jni_sig!("()I"), &[])?.i()?)
    };
    // Each read once: another thread may move them meanwhile (a data race of the caller's), so
    // the memory written is bounded by what was checked here, never by a second read.
    let position = int(env, jni_str!("position"))?;
    let limit = int(env, jni_str!("limit"))?;
    let len_int = jint::try_from(len).unwrap_or(jint::MAX);
    if position < 0 || limit < position || (limit - position) < len_int {
        return Err(BridgeError::Argument(format!(
            "the allocator's buffer has {} bytes remaining for a range of {len}",
            (limit - position).max(0)
        )));
    }
    let direct = env.new_local_ref(buffer)?;
    let direct = env.cast_local::<JByteBuffer>(direct)?;
    if env
        .get_direct_buffer_address(&direct)
        .is_ok_and(|a| !a.is_null())
    {
        // SAFETY: `direct_region` bounds [position, position + len) by the buffer's capacity
        // as the JVM reports it; the local reference keeps the buffer alive for this call, and
        // its owner does not use it until the read completes.
        let target = unsafe { direct_region(env, &direct, position, len_int)? };
        let mut at = 0;
        for chunk in chunks {
            target[at..at + chunk.len()].copy_from_slice(chunk);
            at += chunk.len();
        }
        return Ok(());
    }
    let has_array = env
        .call_method(buffer, jni_str!("hasArray"), jni_sig!("()Z"), &[])?
        .z()?;
    if !has_array {
        return Err(BridgeError::Argument(
            "the allocator returned a heap ByteBuffer without an accessible array".into(),
        ));
    }
    // A slice must not be written past its own capacity, into the rest of its array.
    let capacity = int(env, jni_str!("capacity"))?;
    if position > capacity - len_int {
        return Err(BridgeError::Argument(format!(
            "the allocator's buffer of {capacity} bytes cannot hold a range of {len} at {position}"
        )));
    }
    let array = env
        .call_method(buffer, jni_str!("array"), jni_sig!("()[B"), &[])?
        .l()?;
    let array = env.cast_local::<JByteArray>(array)?;
    // The array's own bounds are checked by SetByteArrayRegion.
    let mut at = int(env, jni_str!("arrayOffset"))?.saturating_add(position);
    for chunk in chunks {
        array.set_region(env, at, as_jbytes(chunk))?;
        at = at.saturating_add(chunk.len() as jint);
    }
    Ok(())
}

/// Checks `[off, off + len)` lies within `capacity` elements; returns them as `usize`.
pub(super) fn region(
    off: jint,
    len: jint,
    capacity: usize,
    what: &str,
) -> BridgeResult<(usize, usize)> {
    if off < 0 || len < 0 || off as u64 + len as u64 > capacity as u64 {
        return Err(BridgeError::Argument(format!(
            "off {off} and len {len} are outside the {what} of {capacity} bytes"
        )));
    }
    Ok((off as usize, len as usize))
}

pub(super) fn array_region(
    env: &Env<'_>,
    array: &JByteArray<'_>,
    off: jint,
    len: jint,
) -> BridgeResult<(usize, usize)> {
    if array.is_null() {
        return Err(BridgeError::Argument("the array must not be null".into()));
    }
    region(off, len, array.len(env)?, "array")
}

/// The memory of `buf[off, off + len)`, which must be a direct buffer.
///
/// # Safety
/// The slice aliases Java memory: it must not outlive the native call that received `buf`
/// (the local reference keeps the buffer alive), and the Java caller must not use the buffer
/// concurrently (documented on the Java side).
// The slice is Java memory reached through the buffer reference, not borrowed from it.
#[allow(clippy::mut_from_ref)]
pub(super) unsafe fn direct_region<'a>(
    env: &Env<'_>,
    buf: &'a JByteBuffer<'_>,
    off: jint,
    len: jint,
) -> BridgeResult<&'a mut [u8]> {
    if buf.is_null() {
        return Err(BridgeError::Argument("the buffer must not be null".into()));
    }
    let not_direct = || BridgeError::Argument("the ByteBuffer must be a direct buffer".into());
    let address = env
        .get_direct_buffer_address(buf)
        .map_err(|_| not_direct())?;
    let capacity = env
        .get_direct_buffer_capacity(buf)
        .map_err(|_| not_direct())?;
    if address.is_null() {
        return Err(not_direct());
    }
    let (off, len) = region(off, len, capacity, "buffer")?;
    // SAFETY: [off, off + len) lies within the buffer's capacity (checked above); see the
    // function's contract for lifetime and aliasing.
    Ok(unsafe { std::slice::from_raw_parts_mut(address.add(off), len) })
}

/// The ranges `[starts[i], ends[i])` of a vectored read, checked: both arrays non-null and of
/// one length, each range non-empty (see [`crate::range`]) and small enough for a Java array.
///
/// # Errors
/// [`BridgeError::Argument`] naming what was wrong (and the offending range).
pub(crate) fn java_ranges(
    env: &mut Env<'_>,
    starts: &JLongArray<'_>,
    ends: &JLongArray<'_>,
) -> BridgeResult<Vec<Range<u64>>> {
    if starts.is_null() || ends.is_null() {
        return Err(BridgeError::Argument(
            "starts and ends must not be null".into(),
        ));
    }
    let n = starts.len(env)?;
    if ends.len(env)? != n {
        return Err(BridgeError::Argument(
            "starts and ends differ in length".into(),
        ));
    }
    let mut s = vec![0i64; n];
    let mut e = vec![0i64; n];
    starts.get_region(env, 0, &mut s)?;
    ends.get_region(env, 0, &mut e)?;
    let mut ranges = Vec::with_capacity(n);
    for (a, b) in s.into_iter().zip(e) {
        let r = range(a, b, false)?;
        if r.end - r.start > MAX_JAVA_ARRAY {
            return Err(BridgeError::Argument(format!(
                "range [{a}, {b}) does not fit in a Java array"
            )));
        }
        ranges.push(r);
    }
    Ok(ranges)
}

pub(super) fn position(p: jlong) -> BridgeResult<u64> {
    u64::try_from(p).map_err(|_| BridgeError::Argument(format!("position {p} must be >= 0")))
}

pub(super) fn write_mode(
    env: &Env<'_>,
    mode: jint,
    e_tag: &JString<'_>,
) -> BridgeResult<WriteMode> {
    match mode {
        0 => Ok(WriteMode::Overwrite),
        1 => Ok(WriteMode::Create),
        2 => Ok(WriteMode::IfMatch(string_arg(env, e_tag, "eTag")?)),
        m => Err(BridgeError::Argument(format!(
            "mode {m} is not 0 (overwrite), 1 (create) or 2 (if-match)"
        ))),
    }
}

pub(crate) fn write_result<'l>(env: &mut Env<'l>, r: &WriteResult) -> BridgeResult<JObject<'l>> {
    string_array(env, [r.e_tag.clone(), r.version.clone()].into_iter())
}

#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub extern "system" fn Java_dev_vended_storage_NativeBridge_putIf<'l>(
    mut env: EnvUnowned<'l>,
    _class: JClass<'l>,
    handle: jlong,
    path: JString<'l>,
    data: JByteArray<'l>,
    off: jint,
    len: jint,
    mode: jint,
    e_tag: JString<'l>,
) -> JObject<'l> {
    env.with_env(|env| -> BridgeResult<JObject<'l>> {
        let store = store(handle)?;
        let path = string_arg(env, &path, "path")?;
        let (off, len) = array_region(env, &data, off, len)?;
        let mode = write_mode(env, mode, &e_tag)?;
        let mut bytes = vec![0u8; len];
        data.get_region(env, off as jint, as_jbytes_mut(&mut bytes))?;
        let result = block_on(store.put_opts(&path, bytes.into(), mode))??;
        write_result(env, &result)
    })
    .resolve::<ThrowJava>()
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_vended_storage_NativeBridge_copyObject<'l>(
    mut env: EnvUnowned<'l>,
    _class: JClass<'l>,
    handle: jlong,
    from: JString<'l>,
    to: JString<'l>,
    if_not_exists: jboolean,
) {
    env.with_env(|env| -> BridgeResult<()> {
        let store = store(handle)?;
        let from = string_arg(env, &from, "from")?;
        let to = string_arg(env, &to, "to")?;
        if if_not_exists {
            block_on(store.copy_if_not_exists(&from, &to))??;
        } else {
            block_on(store.copy(&from, &to))??;
        }
        Ok(())
    })
    .resolve::<ThrowJava>()
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_vended_storage_NativeBridge_renameObject<'l>(
    mut env: EnvUnowned<'l>,
    _class: JClass<'l>,
    handle: jlong,
    from: JString<'l>,
    to: JString<'l>,
    if_not_exists: jboolean,
) {
    env.with_env(|env| -> BridgeResult<()> {
        let store = store(handle)?;
        let from = string_arg(env, &from, "from")?;
        let to = string_arg(env, &to, "to")?;
        if if_not_exists {
            block_on(store.rename_if_not_exists(&from, &to))??;
        } else {
            block_on(store.rename(&from, &to))??;
        }
        Ok(())
    })
    .resolve::<ThrowJava>()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn regions_outside_the_capacity_are_refused() {
        assert_eq!(region(0, 10, 10, "array").ok(), Some((0, 10)));
        assert_eq!(region(10, 0, 10, "array").ok(), Some((10, 0)));
        for (off, len) in [(-1, 1), (0, -1), (5, 6), (i32::MAX, i32::MAX), (11, 0)] {
            assert!(region(off, len, 10, "array").is_err(), "{off} {len}");
        }
        assert!(position(-1).is_err());
        assert_eq!(position(i64::MAX).ok(), Some(i64::MAX as u64));
    }
}
