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
//!                                   Object sink);
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

use std::future::{poll_fn, Future};
use std::ops::Range;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::Poll;

use jni::objects::{JByteArray, JClass, JLongArray, JObject, JObjectArray, JString, JValue};
use jni::refs::Global;
use jni::sys::{jboolean, jint, jlong};
use jni::{jni_sig, jni_str, Env, EnvUnowned, JavaVM};
use once_cell::sync::Lazy;
use tokio::sync::oneshot;

use vended_storage::error::{panic_message, Error};
use vended_storage::io::{WriteMode, WriteResult};
use vended_storage::object::ObjectInfo;
use vended_storage::store::VendedStore;

use crate::errors::{BridgeError, ThrowJava};
use crate::handles::HandleTable;
use crate::{
    info_strings, optional_string, runtime, store, string_arg, string_array, BridgeResult,
};

/// Bytes as the core returns them (kept without copying until `take` copies them into Java).
type Buf = Box<dyn AsRef<[u8]> + Send + Sync>;

/// A finished operation's value.
enum Value {
    Bytes(Buf),
    Parts(Vec<Buf>),
    Info(ObjectInfo),
    Infos(Vec<ObjectInfo>),
    Written(WriteResult),
    Unit,
}

/// Where a task is.
enum State {
    /// Running; the sender (taken by `cancel`) stops it.
    Running(Option<oneshot::Sender<()>>),
    Done(Result<Value, Error>),
    /// The operation panicked (message): `take` raises it as the synchronous calls do.
    Panicked(String),
    Cancelled,
}

/// How a task ended.
enum Ended<T> {
    Done(T),
    Panicked(String),
    Cancelled,
}

/// Tasks started and not yet taken.
static TASKS: Lazy<HandleTable<Mutex<State>>> = Lazy::new(HandleTable::default);

fn lock(state: &Mutex<State>) -> std::sync::MutexGuard<'_, State> {
    state.lock().unwrap_or_else(|p| p.into_inner())
}

/// Runs `op` until it ends, panics or is cancelled; when cancelled, `op` is dropped, which
/// abandons its request.
async fn until_cancelled<F: Future>(op: F, mut cancel: oneshot::Receiver<()>) -> Ended<F::Output> {
    let mut op = std::pin::pin!(op);
    poll_fn(|cx| {
        // A dropped sender (the task was freed) also stops the work.
        if Pin::new(&mut cancel).poll(cx).is_ready() {
            return Poll::Ready(Ended::Cancelled);
        }
        // A panic ends the task like a result (it is never polled again), so Java still hears.
        match std::panic::catch_unwind(AssertUnwindSafe(|| op.as_mut().poll(cx))) {
            Ok(Poll::Ready(v)) => Poll::Ready(Ended::Done(v)),
            Ok(Poll::Pending) => Poll::Pending,
            Err(payload) => Poll::Ready(Ended::Panicked(panic_message(payload.as_ref()))),
        }
    })
    .await
}

/// Registers a task running `op` on the runtime; `sink.ready(task)` is called when it ends.
fn spawn<F>(env: &mut Env<'_>, sink: &JObject<'_>, op: F) -> BridgeResult<jlong>
where
    F: Future<Output = Result<Value, Error>> + Send + 'static,
{
    if sink.is_null() {
        return Err(BridgeError::Argument("sink must not be null".into()));
    }
    let rt = runtime::runtime()?;
    let sink = env.new_global_ref(sink)?;
    let (tx, rx) = oneshot::channel();
    let id = TASKS.insert(Arc::new(Mutex::new(State::Running(Some(tx)))));
    rt.spawn(async move {
        let outcome = until_cancelled(op, rx).await;
        if let Some(state) = TASKS.get(id) {
            *lock(&state) = match outcome {
                Ended::Done(result) => State::Done(result),
                Ended::Panicked(message) => State::Panicked(message),
                Ended::Cancelled => State::Cancelled,
            };
        }
        notify(sink, id);
    });
    Ok(id)
}

/// Calls `sink.ready(id)` on this (runtime) thread, then deletes the global reference. If the
/// call fails the task is freed here (nobody would take it).
fn notify(sink: Global<JObject<'static>>, id: jlong) {
    let called = JavaVM::singleton().and_then(|vm| {
        vm.attach_current_thread(|env| -> jni::errors::Result<()> {
            let called = env.call_method(
                &*sink,
                jni_str!("ready"),
                jni_sig!("(J)V"),
                &[JValue::Long(id)],
            );
            if env.exception_check() {
                env.exception_clear();
            }
            // Deleted while attached, inside this thread's frame.
            drop(sink);
            called.map(|_| ())
        })
    });
    if let Err(e) = called {
        log::error!("async task {id}: could not hand the result to Java: {e}");
        TASKS.remove(id);
    }
}

fn store_path(
    env: &Env<'_>,
    handle: jlong,
    path: &JString<'_>,
) -> BridgeResult<(Arc<VendedStore>, String)> {
    let store = store(handle)?;
    Ok((store, string_arg(env, path, "path")?))
}

fn boxed(b: impl AsRef<[u8]> + Send + Sync + 'static) -> Buf {
    Box::new(b)
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
            Ok(Value::Bytes(boxed(store.get(&path).await?)))
        })
    })
    .resolve::<ThrowJava>()
}

/// Checks `[start, end)`: `start >= 0`, `end >= start` (`allow_empty`) or `end > start`.
fn range(start: jlong, end: jlong, allow_empty: bool) -> BridgeResult<Range<u64>> {
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
                return Ok(Value::Bytes(boxed(Vec::new())));
            }
            Ok(Value::Bytes(boxed(store.get_range(&path, r).await?)))
        })
    })
    .resolve::<ThrowJava>()
}

/// Largest Java array (as the synchronous reads refuse larger ranges).
const MAX_JAVA_ARRAY: u64 = i32::MAX as u64 - 8;

#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_vended_storage_AsyncNative_startGetRanges<'l>(
    mut env: EnvUnowned<'l>,
    _class: JClass<'l>,
    handle: jlong,
    path: JString<'l>,
    starts: JLongArray<'l>,
    ends: JLongArray<'l>,
    sink: JObject<'l>,
) -> jlong {
    env.with_env(|env| -> BridgeResult<jlong> {
        let (store, path) = store_path(env, handle, &path)?;
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
        spawn(env, &sink, async move {
            if ranges.is_empty() {
                return Ok(Value::Parts(Vec::new()));
            }
            let parts = store.get_ranges(&path, &ranges).await?;
            Ok(Value::Parts(parts.into_iter().map(boxed).collect()))
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
        let mode = match mode {
            0 => None,
            1 => Some(WriteMode::Create),
            2 => Some(WriteMode::IfMatch(string_arg(env, &e_tag, "eTag")?)),
            m => {
                return Err(BridgeError::Argument(format!(
                    "mode {m} is not 0 (overwrite), 1 (create) or 2 (if-match)"
                )))
            }
        };
        // Copied now: the caller may reuse its array once the call returns.
        let bytes = env.convert_byte_array(&data)?;
        spawn(env, &sink, async move {
            match mode {
                // The synchronous put(): a plain PUT, no result.
                None => {
                    store.put(&path, bytes.into()).await?;
                    Ok(Value::Unit)
                }
                Some(mode) => Ok(Value::Written(
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

fn byte_array<'l>(env: &mut Env<'l>, b: &[u8]) -> BridgeResult<JObject<'l>> {
    if b.len() as u64 > MAX_JAVA_ARRAY {
        return Err(BridgeError::Argument(format!(
            "the object of {} bytes does not fit in a Java array; read it in ranges",
            b.len()
        )));
    }
    Ok(env.byte_array_from_slice(b)?.into())
}

fn to_java<'l>(env: &mut Env<'l>, value: Value) -> BridgeResult<JObject<'l>> {
    match value {
        Value::Bytes(b) => byte_array(env, (*b).as_ref()),
        Value::Parts(parts) => {
            let result = JObjectArray::<JByteArray>::new(env, parts.len(), JByteArray::null())?;
            for (i, part) in parts.iter().enumerate() {
                env.with_local_frame(2, |env| -> BridgeResult<()> {
                    let array = byte_array(env, (**part).as_ref())?;
                    result.set_element(env, i, &env.cast_local::<JByteArray>(array)?)?;
                    Ok(())
                })?;
            }
            Ok(result.into())
        }
        Value::Info(info) => string_array(env, info_strings(&info).into_iter()),
        Value::Infos(infos) => {
            let flat: Vec<Option<String>> = infos.iter().flat_map(info_strings).collect();
            string_array(env, flat.into_iter())
        }
        Value::Written(r) => string_array(env, [r.e_tag, r.version].into_iter()),
        Value::Unit => Ok(JObject::null()),
    }
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_vended_storage_AsyncNative_take<'l>(
    mut env: EnvUnowned<'l>,
    _class: JClass<'l>,
    task: jlong,
) -> JObject<'l> {
    env.with_env(|env| -> BridgeResult<JObject<'l>> {
        let state = TASKS
            .remove(task)
            .ok_or(BridgeError::Closed("async task"))?;
        let state = std::mem::replace(&mut *lock(&state), State::Cancelled);
        match state {
            State::Done(Ok(value)) => to_java(env, value),
            State::Done(Err(e)) => Err(e.into()),
            State::Cancelled => Ok(JObject::null()),
            // Raised here so that the entry point's policy reports it as for synchronous calls.
            State::Panicked(message) => panic!("{message}"),
            State::Running(_) => Err(BridgeError::Argument(format!(
                "async task {task} is still running"
            ))),
        }
    })
    .resolve::<ThrowJava>()
}

/// Sends the stop signal of a running task; `false` when it already ended or is unknown.
fn cancel(task: jlong) -> bool {
    let Some(state) = TASKS.get(task) else {
        return false;
    };
    let sender = match &mut *lock(&state) {
        State::Running(sender) => sender.take(),
        _ => None,
    };
    sender.is_some_and(|s| s.send(()).is_ok())
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_vended_storage_AsyncNative_cancel<'l>(
    mut env: EnvUnowned<'l>,
    _class: JClass<'l>,
    task: jlong,
) -> jboolean {
    env.with_env(|_env| -> BridgeResult<jboolean> { Ok(cancel(task)) })
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

    #[test]
    fn cancel_stops_a_pending_operation_and_drops_it() {
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        struct Dropped(Arc<std::sync::atomic::AtomicBool>);
        impl Drop for Dropped {
            fn drop(&mut self) {
                self.0.store(true, std::sync::atomic::Ordering::SeqCst);
            }
        }
        let dropped = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let guard = Dropped(dropped.clone());
        let (tx, rx) = oneshot::channel::<()>();
        let op = async move {
            let _guard = guard;
            std::future::pending::<()>().await;
        };
        tx.send(()).unwrap();
        assert!(matches!(
            rt.block_on(until_cancelled(op, rx)),
            Ended::Cancelled
        ));
        assert!(dropped.load(std::sync::atomic::Ordering::SeqCst));

        let (_tx, rx) = oneshot::channel::<()>();
        assert!(matches!(
            rt.block_on(until_cancelled(async { 7 }, rx)),
            Ended::Done(7)
        ));

        let (_tx, rx) = oneshot::channel::<()>();
        let panics = async { panic!("boom {}", 42) };
        match rt.block_on(until_cancelled(panics, rx)) {
            Ended::Panicked(m) => assert!(m.contains("boom 42"), "{m}"),
            _ => panic!("the panic was not caught"),
        }
    }

    #[test]
    fn cancel_of_an_unknown_or_finished_task_is_false() {
        assert!(!cancel(i64::MAX));
        let id = TASKS.insert(Arc::new(Mutex::new(State::Cancelled)));
        assert!(!cancel(id));
        let (tx, mut rx) = oneshot::channel();
        let id = TASKS.insert(Arc::new(Mutex::new(State::Running(Some(tx)))));
        assert!(cancel(id));
        assert!(rx.try_recv().is_ok());
        assert!(!cancel(id), "a second cancel sends nothing");
        TASKS.remove(id);
    }
}
