//! The JNI binding: native methods of `dev.vended.storage.NativeBridge`.
//!
//! Every entry point runs inside `EnvUnowned::with_env` (which catches panics) and resolves
//! through [`errors::ThrowJava`], so no panic or Rust error crosses into the JVM: each becomes a
//! Java exception (see [`errors`] for the mapping). Blocking work runs on the binding's runtime
//! ([`runtime`]), whose threads are attached to the JVM as daemons.
//!
//! The exports are grouped by module: [`open`] (opening a store), [`store_ops`] (an open store's
//! operations), [`sessions`], [`catalog`], [`streams`] and [`async_ops`]; this file holds the
//! argument rules they share, the library's load hook and its version/ABI exports.

mod alloc;
mod async_ops;
mod batches;
mod catalog;
mod errors;
mod handles;
mod iceberg;
mod logging;
mod open;
mod pending;
mod provider;
mod runtime;
mod sessions;
mod store_ops;
mod streams;

pub use provider::JavaStorageOptionsProvider;

pub(crate) use open::{open_store, refresh_config};

use std::ffi::c_void;
use std::ops::Range;
use std::sync::Arc;

use jni::objects::{JClass, JLongArray, JObject, JObjectArray, JString};
use jni::sys::{jint, jlong, JNI_VERSION_1_8};
use jni::{Env, EnvUnowned, JavaVM};

use errors::{BridgeError, ThrowJava};
use vended_storage::options::StorageOptions;
use vended_storage::session::Session;
use vended_storage::store::{ObjectInfo, VendedStore};

type BridgeResult<T> = std::result::Result<T, BridgeError>;

/// Stores the `JavaVM` (this also sets `JavaVM::singleton()`), for runtime threads to attach,
/// and sets the allocator's purge delay (`alloc::configure`).
///
/// # Safety
/// Called by the JVM with a valid `JavaVM` pointer when the library is loaded.
#[unsafe(no_mangle)]
pub unsafe extern "system" fn JNI_OnLoad(
    vm: *mut jni::sys::JavaVM,
    _reserved: *mut c_void,
) -> jint {
    let stored = std::panic::catch_unwind(|| {
        alloc::configure();
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

/// Runs `fut` to completion on the calling thread, with the thread's audit context.
fn block_on<F: std::future::Future>(fut: F) -> BridgeResult<F::Output> {
    let audit = vended_storage::audit::thread_context();
    Ok(runtime::runtime()?.block_on(vended_storage::audit::scoped(audit, fut)))
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

fn long_array<'l>(env: &mut Env<'l>, values: &[jlong]) -> BridgeResult<JLongArray<'l>> {
    let array = JLongArray::new(env, values.len())?;
    array.set_region(env, 0, values)?;
    Ok(array)
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
pub const NATIVE_ABI: u32 = 9;

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

/// The bodies of the test-only natives (`dev.vended.storage.NativeTestHooks`,
/// `AsyncTestHooks`, classes of the Java tests module). Only the test build of the library,
/// `crates/jni-test-hooks` (a `cdylib` of its own), exports JNI functions that call them; the
/// shipped library exports none, so the linker drops them from it. Not an API.
#[doc(hidden)]
pub mod test_support {
    use jni::objects::{JObject, JString};
    use jni::sys::{jboolean, jlong};
    use jni::EnvUnowned;

    use crate::errors::ThrowJava;
    use crate::{runtime, string_arg, BridgeResult};

    /// Panics with `message` (in the calling thread, or inside a runtime task when
    /// `in_runtime`) so tests can show a panic becomes a Java exception.
    pub fn panic(mut env: EnvUnowned<'_>, message: JString<'_>, in_runtime: jboolean) {
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

    /// Stream blocks lent to Java and not yet released, so tests can show that closing a
    /// stream (or replacing its block) frees the native memory.
    pub fn live_blocks() -> jlong {
        crate::streams::live_blocks() as jlong
    }

    /// Starts a task whose operation panics with `message`, to show the panic reaches Java
    /// through `take` as a `StorageException`; returns the task handle.
    pub fn start_panic(mut env: EnvUnowned<'_>, message: JString<'_>, sink: JObject<'_>) -> jlong {
        crate::async_ops::start_panic(&mut env, message, sink)
    }
}
