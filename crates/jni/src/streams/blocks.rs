//! A stream's block lent to Java: the network buffers of one read, kept in native memory and
//! seen from Java as direct `ByteBuffer`s over them, so the small reads a stream serves from
//! its block (a footer, a `read()` of one byte) copy each byte once, from the buffer it
//! arrived in into the caller's memory, instead of twice (into a Java block, then out of it).
//!
//! Java declarations (in `dev.vended.storage.NativeBridge`; `dev.vended.storage.NativeBlock`
//! holds the handles):
//!
//! ```java
//! // One ranged GET of [position, position+len) (pinned to ifMatch, as readRange), its body
//! // read to the end and kept as it came from the network. Returns a block handle; the block
//! // holds fewer than len bytes only when the object ended first (none at or past its end).
//! static native long readRangeBlock(long store, String path, long position, String ifMatch,
//!                                   int len);
//! // The next bytes of a sequential reader (readerOpen), at most len, kept likewise: fewer
//! // only at the end of its range (an empty block there).
//! static native long readerReadBlock(long reader, int len);
//! // Direct ByteBuffers over the block's chunks, in order (empty chunks left out). They are
//! // valid until blockRelease: the caller must not touch them after it, nor write to them.
//! static native java.nio.ByteBuffer[] blockBuffers(long block);
//! // Frees the block. A no-op on a released or unknown handle, so a Cleaner may call it.
//! static native void blockRelease(long block);
//! ```
//!
//! A handle is a number, never a pointer: a call on a released block throws
//! `IllegalStateException`. The buffers, though, point into the block's memory: only
//! `NativeBlock`, which counts the copies in progress and releases the block after the last
//! one, may hold them.

use bytes::Bytes;
use jni::objects::{JByteBuffer, JClass, JObjectArray, JString};
use jni::sys::{jint, jlong};
use jni::EnvUnowned;
use once_cell::sync::Lazy;

use super::position;
use super::read::reader;
use crate::batches::on_runtime;
use crate::errors::{BridgeError, ThrowJava};
use crate::handles::HandleTable;
use crate::{optional_string, store, string_arg, BridgeResult};

/// Blocks lent to Java: the chunks of one read, as they came from the network.
static BLOCKS: Lazy<HandleTable<Vec<Bytes>>> = Lazy::new(HandleTable::default);

/// `len` as a size of at least one byte.
fn block_len(len: jint) -> BridgeResult<usize> {
    match usize::try_from(len) {
        Ok(len) if len > 0 => Ok(len),
        _ => Err(BridgeError::Argument(format!(
            "a block of {len} bytes: the length must be above 0"
        ))),
    }
}

/// Blocks lent and not yet released (the tests' leak checks).
pub(crate) fn live_blocks() -> usize {
    BLOCKS.len()
}

fn lend(chunks: Vec<Bytes>) -> jlong {
    BLOCKS.insert(std::sync::Arc::new(chunks))
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_vended_storage_NativeBridge_readRangeBlock<'l>(
    mut env: EnvUnowned<'l>,
    _class: JClass<'l>,
    handle: jlong,
    path: JString<'l>,
    pos: jlong,
    if_match: JString<'l>,
    len: jint,
) -> jlong {
    env.with_env(|env| -> BridgeResult<jlong> {
        let store = store(handle)?;
        let path = string_arg(env, &path, "path")?;
        let start = position(pos)?;
        let len = block_len(len)?;
        let if_match = optional_string(env, &if_match)?;
        // The request and the whole body on the runtime: one wake-up of this thread.
        let chunks = on_runtime(async move {
            let range = start..start.saturating_add(len as u64);
            let mut body = store.read_range(&path, range, if_match.as_deref()).await?;
            body.next_chunks(len).await
        })??;
        Ok(lend(chunks))
    })
    .resolve::<ThrowJava>()
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_vended_storage_NativeBridge_readerReadBlock<'l>(
    mut env: EnvUnowned<'l>,
    _class: JClass<'l>,
    handle: jlong,
    len: jint,
) -> jlong {
    env.with_env(|_env| -> BridgeResult<jlong> {
        let len = block_len(len)?;
        let reader = reader(handle)?;
        let mut reader = reader.lock().map_err(|_| {
            BridgeError::Argument("the sequential reader failed in an earlier read".into())
        })?;
        Ok(lend(reader.read_chunks(len)?))
    })
    .resolve::<ThrowJava>()
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_vended_storage_NativeBridge_blockBuffers<'l>(
    mut env: EnvUnowned<'l>,
    _class: JClass<'l>,
    block: jlong,
) -> JObjectArray<'l, JByteBuffer<'l>> {
    env.with_env(|env| -> BridgeResult<JObjectArray<'l, JByteBuffer<'l>>> {
        let chunks = BLOCKS.get(block).ok_or(BridgeError::Closed("block"))?;
        let lent: Vec<&Bytes> = chunks.iter().filter(|c| !c.is_empty()).collect();
        let array = JObjectArray::<JByteBuffer>::new(env, lent.len(), JByteBuffer::null())?;
        for (i, chunk) in lent.into_iter().enumerate() {
            env.with_local_frame(2, |env| -> BridgeResult<()> {
                // SAFETY: the chunk's memory lives as long as the block's entry in BLOCKS
                // (until blockRelease); NativeBlock uses the buffers only before that, and only
                // to read (they are never written: the pointer is cast to `*mut` for the JNI
                // signature alone).
                let buffer =
                    unsafe { env.new_direct_byte_buffer(chunk.as_ptr().cast_mut(), chunk.len())? };
                array.set_element(env, i, &buffer)?;
                Ok(())
            })?;
        }
        Ok(array)
    })
    .resolve::<ThrowJava>()
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_vended_storage_NativeBridge_blockRelease<'l>(
    mut env: EnvUnowned<'l>,
    _class: JClass<'l>,
    block: jlong,
) {
    env.with_env(|_env| -> BridgeResult<()> {
        BLOCKS.remove(block);
        Ok(())
    })
    .resolve::<ThrowJava>()
}
