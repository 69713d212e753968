//! The table of async tasks: spawning an operation on the runtime, telling Java when it ended
//! (`sink.ready`), and handing its result over (`take`) or stopping it (`cancel`).

use std::future::{poll_fn, Future};
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::Poll;

use bytes::Bytes;
use jni::objects::{JClass, JObject, JValue};
use jni::refs::Global;
use jni::sys::{jboolean, jlong};
use jni::{jni_sig, jni_str, Env, EnvUnowned, JavaVM};
use once_cell::sync::Lazy;
use tokio::sync::oneshot;

use vended_storage::error::{panic_message, Error};
use vended_storage::io::WriteResult;
use vended_storage::object::ObjectInfo;

use crate::errors::{BridgeError, ThrowJava};
use crate::handles::HandleTable;
use crate::streams::{array_of_chunks, arrays_of_chunks, fill_buffer};
use crate::{info_strings, runtime, string_array, BridgeResult};

/// A finished operation's value.
pub(super) enum Value {
    /// One range as the chunks it arrived in (copied once, into its Java array, by `take`).
    Chunks(Vec<Bytes>),
    /// Several ranges, each as its chunks.
    Parts(Vec<Vec<Bytes>>),
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
pub(super) fn spawn<F>(env: &mut Env<'_>, sink: &JObject<'_>, op: F) -> BridgeResult<jlong>
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
    // The task runs on the runtime's threads: it carries the caller's audit context.
    let op = vended_storage::audit::scoped(vended_storage::audit::thread_context(), op);
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

fn to_java<'l>(env: &mut Env<'l>, value: Value) -> BridgeResult<JObject<'l>> {
    match value {
        Value::Chunks(chunks) => Ok(array_of_chunks(env, &chunks)?.into()),
        Value::Parts(parts) => arrays_of_chunks(env, &parts),
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
        match take_state(task)? {
            State::Done(Ok(value)) => to_java(env, value),
            ended => not_done(ended),
        }
    })
    .resolve::<ThrowJava>()
}

/// The state of an ended task, which is freed: of two racing takes exactly one gets it.
fn take_state(task: jlong) -> BridgeResult<State> {
    let entry = TASKS.get(task).ok_or(BridgeError::Closed("async task"))?;
    let mut state = lock(&entry);
    // A running task stays registered (and running): it is taken after `ready`.
    if matches!(*state, State::Running(_)) {
        return Err(BridgeError::Argument(format!(
            "async task {task} is still running"
        )));
    }
    // Ended: removed while locked.
    if TASKS.remove(task).is_none() {
        return Err(BridgeError::Closed("async task"));
    }
    Ok(std::mem::replace(&mut *state, State::Cancelled))
}

/// What `take` gives for a task that did not end with a value: its error, `null` when it was
/// cancelled, its panic.
fn not_done<'l>(state: State) -> BridgeResult<JObject<'l>> {
    match state {
        State::Done(Ok(_)) => Err(BridgeError::Argument("the task ended with a value".into())),
        State::Done(Err(e)) => Err(e.into()),
        State::Cancelled | State::Running(_) => Ok(JObject::null()),
        // Re-raised here (without the panic hook printing it again) so that the entry
        // point's policy reports it as for synchronous calls.
        State::Panicked(message) => std::panic::resume_unwind(Box::new(message)),
    }
}

/// `takeRangesInto(task, allocate)`: the ranges of a `startGetRanges` task copied straight into
/// buffers of `allocate` (a `java.util.function.IntFunction<ByteBuffer>`, called here on the
/// calling thread with each range's length, in order, once the task has succeeded) at their
/// positions, which are not moved: one copy per byte. Returns `null`; otherwise as `take`.
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_vended_storage_AsyncNative_takeRangesInto<'l>(
    mut env: EnvUnowned<'l>,
    _class: JClass<'l>,
    task: jlong,
    allocate: JObject<'l>,
) -> JObject<'l> {
    env.with_env(|env| -> BridgeResult<JObject<'l>> {
        if allocate.is_null() {
            return Err(BridgeError::Argument("allocate must not be null".into()));
        }
        let parts = match take_state(task)? {
            State::Done(Ok(Value::Parts(parts))) => parts,
            State::Done(Ok(_)) => {
                return Err(BridgeError::Argument(format!(
                    "async task {task} did not read ranges"
                )))
            }
            ended => return not_done(ended),
        };
        for chunks in &parts {
            let len: usize = chunks.iter().map(Bytes::len).sum();
            env.with_local_frame(4, |env| -> BridgeResult<()> {
                let buffer = env
                    .call_method(
                        &allocate,
                        jni_str!("apply"),
                        jni_sig!("(I)Ljava/lang/Object;"),
                        &[JValue::Int(len as i32)],
                    )?
                    .l()?;
                fill_buffer(env, &buffer, chunks)
            })?;
        }
        Ok(JObject::null())
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
