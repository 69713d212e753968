//! Bytes from the binding's runtime to a blocked Java thread, in batches.
//!
//! A synchronous read blocks its Java thread while a runtime worker reads the connection.
//! Polled on the Java thread (`block_on`), a body wakes that thread for every chunk the HTTP
//! client hands over (tens of KiB: about 90 wake-ups, each a futex round trip between two
//! threads, per 8 MiB). Here the request and its body are read by a task on the runtime, which
//! the connection wakes without leaving its worker, and the Java thread is woken once per batch
//! of up to [`BATCH`] bytes. The chunks are handed over as they came from the network (`Bytes`,
//! never gathered), so the caller copies each byte once, into Java memory.

use std::future::Future;
use std::time::Duration;

use bytes::Bytes;
use tokio::task::JoinHandle;

use vended_storage::io::{ObjectBody, RangeRead};

use jni::{jni_sig, jni_str};

use crate::errors::BridgeError;
use crate::{runtime, BridgeResult};

/// Most bytes handed from the runtime to the Java thread per wake-up (8 MiB): what the runtime
/// holds ahead of the caller's copy, besides the kernel's socket buffer.
pub(crate) const BATCH: usize = 1 << 20;

/// Runs `fut` as a task on the binding's runtime, the calling (Java) thread blocked until it
/// ends: one wake-up, however many steps the task takes. The thread's audit context goes with
/// it. A panic of the task is resumed on the calling thread (where the entry point's policy
/// turns it into a Java exception).
///
/// # Errors
/// [`vended_storage::Error::Closed`] when the runtime cannot be started or is shutting down.
pub(crate) fn on_runtime<T, F>(fut: F) -> BridgeResult<T>
where
    F: Future<Output = T> + Send + 'static,
    T: Send + 'static,
{
    wait(start(fut)?)
}

/// Starts `fut` on the runtime with the calling thread's audit context.
fn start<T, F>(fut: F) -> BridgeResult<JoinHandle<T>>
where
    F: Future<Output = T> + Send + 'static,
    T: Send + 'static,
{
    let audit = vended_storage::audit::thread_context();
    Ok(runtime::runtime()?.spawn(vended_storage::audit::scoped(audit, fut)))
}

/// How long a waiting Java thread goes between checks of its interrupt status.
const INTERRUPT_CHECK: Duration = Duration::from_millis(50);

/// Blocks the calling thread until `task` ends (see [`on_runtime`]). Every
/// [`INTERRUPT_CHECK`] it looks at the Java thread's interrupt status: an interrupted thread
/// (Spark killing a task, an executor shutting down) stops waiting, the task is aborted (its
/// request and connection dropped) and the read fails with [`BridgeError::Interrupted`]; the
/// thread stays interrupted.
fn wait<T>(mut task: JoinHandle<T>) -> BridgeResult<T> {
    let runtime = runtime::runtime()?;
    loop {
        // The timer is created inside `block_on`: it needs the runtime's context.
        let slice =
            runtime.block_on(async { tokio::time::timeout(INTERRUPT_CHECK, &mut task).await });
        let ended = match slice {
            Ok(ended) => ended,
            Err(_) if interrupted() => {
                task.abort();
                return Err(BridgeError::Interrupted);
            }
            Err(_) => continue,
        };
        return match ended {
            Ok(value) => Ok(value),
            Err(e) if e.is_panic() => std::panic::resume_unwind(e.into_panic()),
            Err(_) => Err(vended_storage::Error::Closed("runtime (shutting down)").into()),
        };
    }
}

/// Whether the calling Java thread is interrupted (`Thread.currentThread().isInterrupted()`,
/// which leaves the status set). `false` when it cannot be asked (not a Java thread).
fn interrupted() -> bool {
    let Ok(vm) = jni::JavaVM::singleton() else {
        return false;
    };
    vm.attach_current_thread(|env| -> jni::errors::Result<bool> {
        let thread = env
            .call_static_method(
                jni_str!("java/lang/Thread"),
                jni_str!("currentThread"),
                jni_sig!("()Ljava/lang/Thread;"),
                &[],
            )?
            .l()?;
        env.call_method(&thread, jni_str!("isInterrupted"), jni_sig!("()Z"), &[])?
            .z()
    })
    .unwrap_or(false)
}

/// The bytes of one GET, read on the runtime and handed over batch by batch (see the module
/// docs). The first batch comes with the answer's headers.
pub(crate) struct Batches {
    /// `None` for bytes that came whole (a cached range) or once the body has ended.
    body: Option<ObjectBody>,
    len: u64,
    first: Vec<Bytes>,
}

impl Batches {
    /// Sends the request `open` (a ranged or whole GET) on the runtime and reads the first
    /// batch there too.
    ///
    /// # Errors
    /// The request's errors; [`on_runtime`]'s.
    pub(crate) fn open<F>(open: F) -> BridgeResult<Self>
    where
        F: Future<Output = vended_storage::Result<RangeRead>> + Send + 'static,
    {
        on_runtime(async move {
            match open.await? {
                RangeRead::Cached(bytes) => Ok(Self {
                    body: None,
                    len: bytes.len() as u64,
                    first: vec![bytes],
                }),
                RangeRead::Body(mut body) => {
                    let first = body.next_chunks(BATCH).await?;
                    Ok(Self {
                        len: body.len(),
                        body: Some(body),
                        first,
                    })
                }
            }
        })?
    }

    /// The number of bytes the answer announced.
    pub(crate) fn len(&self) -> u64 {
        self.len
    }

    /// Hands every byte of the body to `put(offset, bytes)` on the calling thread, chunk by
    /// chunk as they came from the network; while one batch is copied the runtime reads the
    /// next. Returns the number of bytes handed over (the announced length: a body that ends
    /// early or runs long is an error of the core's).
    ///
    /// # Errors
    /// The body's errors (a checksum mismatch at its end among them); the first error of `put`.
    pub(crate) fn for_each(
        mut self,
        mut put: impl FnMut(usize, &[u8]) -> BridgeResult<()>,
    ) -> BridgeResult<usize> {
        let mut at = 0usize;
        let mut batch = std::mem::take(&mut self.first);
        loop {
            let handed: usize = batch.iter().map(Bytes::len).sum();
            // Past this batch there is more to read (an empty batch is the end): read it while
            // this one is copied. At the announced length `next_chunks` has read the body to
            // its end (and checked it).
            let next = match self.body.take() {
                Some(mut body) if handed > 0 && ((at + handed) as u64) < self.len => {
                    Some(start(async move {
                        let next = body.next_chunks(BATCH).await;
                        (body, next)
                    })?)
                }
                _ => None,
            };
            for chunk in &batch {
                if let Err(e) = put(at, chunk) {
                    if let Some(task) = next {
                        task.abort();
                    }
                    return Err(e);
                }
                at += chunk.len();
            }
            let Some(next) = next else {
                return Ok(at);
            };
            let (body, chunks) = wait(next)?;
            batch = chunks?;
            self.body = Some(body);
        }
    }
}
