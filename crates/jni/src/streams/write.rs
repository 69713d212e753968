//! Multipart writer handles (`writerOpen`, `writerWrite`, `writerWriteDirect`, `writerClose`,
//! `writerAbort`); see the module above for the Java declarations.

use std::sync::Arc;

use jni::objects::{JByteArray, JByteBuffer, JClass, JObject, JString};
use jni::sys::{jint, jlong};
use jni::EnvUnowned;
use once_cell::sync::Lazy;
use tokio::sync::Mutex;

use vended_storage::io::{ObjectWriter, WriterOptions};

use super::{array_region, as_jbytes_mut, direct_region, write_mode, write_result};
use crate::errors::{BridgeError, ThrowJava};
use crate::handles::HandleTable;
use crate::{block_on, store, string_arg, BridgeResult};

/// Open writers (also pending writers, see `crate::pending`).
pub(crate) static WRITERS: Lazy<HandleTable<Mutex<ObjectWriter>>> = Lazy::new(HandleTable::default);

/// The writer options of Java's `partSize` (bytes) and `maxConcurrency`, each `<= 0` meaning
/// the default (`WriterOptions::default()`: 5 MiB, 8); the mode is the default (overwrite).
pub(crate) fn writer_options(part_size: jlong, max_concurrency: jint) -> WriterOptions {
    let defaults = WriterOptions::default();
    WriterOptions {
        part_size: if part_size > 0 {
            usize::try_from(part_size).unwrap_or(usize::MAX)
        } else {
            defaults.part_size
        },
        max_concurrency: if max_concurrency > 0 {
            max_concurrency as usize
        } else {
            defaults.max_concurrency
        },
        ..defaults
    }
}

fn writer(handle: jlong) -> BridgeResult<Arc<Mutex<ObjectWriter>>> {
    WRITERS
        .get(handle)
        .ok_or(BridgeError::Closed("object writer"))
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_vended_storage_NativeBridge_writerOpen<'l>(
    mut env: EnvUnowned<'l>,
    _class: JClass<'l>,
    handle: jlong,
    path: JString<'l>,
    part_size: jlong,
    max_concurrency: jint,
    mode: jint,
    e_tag: JString<'l>,
) -> jlong {
    env.with_env(|env| -> BridgeResult<jlong> {
        let store = store(handle)?;
        let path = string_arg(env, &path, "path")?;
        let options = WriterOptions {
            mode: write_mode(env, mode, &e_tag)?,
            ..writer_options(part_size, max_concurrency)
        };
        // Inside the runtime, so that a writer dropped unfinished aborts there.
        let _guard = crate::runtime::runtime()?.enter();
        let w = store.writer(&path, options)?;
        Ok(WRITERS.insert(Arc::new(Mutex::new(w))))
    })
    .resolve::<ThrowJava>()
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_vended_storage_NativeBridge_writerWrite<'l>(
    mut env: EnvUnowned<'l>,
    _class: JClass<'l>,
    handle: jlong,
    b: JByteArray<'l>,
    off: jint,
    len: jint,
) {
    env.with_env(|env| -> BridgeResult<()> {
        let w = writer(handle)?;
        let (off, len) = array_region(env, &b, off, len)?;
        if len == 0 {
            return Ok(());
        }
        // One copy: from the Java array into an owned buffer the part keeps.
        let mut data = vec![0u8; len];
        b.get_region(env, off as jint, as_jbytes_mut(&mut data))?;
        block_on(async { w.lock().await.put(data.into()).await })??;
        Ok(())
    })
    .resolve::<ThrowJava>()
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_vended_storage_NativeBridge_writerWriteDirect<'l>(
    mut env: EnvUnowned<'l>,
    _class: JClass<'l>,
    handle: jlong,
    b: JByteBuffer<'l>,
    off: jint,
    len: jint,
) {
    env.with_env(|env| -> BridgeResult<()> {
        let w = writer(handle)?;
        // SAFETY: used only within this call; see `direct_region`.
        let source = unsafe { direct_region(env, &b, off, len)? };
        if source.is_empty() {
            return Ok(());
        }
        let source: &[u8] = source;
        block_on(async { w.lock().await.write(source).await })??;
        Ok(())
    })
    .resolve::<ThrowJava>()
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_vended_storage_NativeBridge_writerClose<'l>(
    mut env: EnvUnowned<'l>,
    _class: JClass<'l>,
    handle: jlong,
) -> JObject<'l> {
    env.with_env(|env| -> BridgeResult<JObject<'l>> {
        let w = WRITERS
            .remove(handle)
            .ok_or(BridgeError::Closed("object writer"))?;
        let result = block_on(async { w.lock().await.finish().await })??;
        write_result(env, &result)
    })
    .resolve::<ThrowJava>()
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_vended_storage_NativeBridge_writerAbort<'l>(
    mut env: EnvUnowned<'l>,
    _class: JClass<'l>,
    handle: jlong,
) {
    env.with_env(|_env| -> BridgeResult<()> {
        if let Some(w) = WRITERS.remove(handle) {
            block_on(async { w.lock().await.abort().await })??;
        }
        Ok(())
    })
    .resolve::<ThrowJava>()
}
