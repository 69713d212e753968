//! A body received ahead of its reader: a task on the runtime pulls the chunks of an
//! [`ObjectBody`] from the connection while the reader is busy elsewhere (a JNI caller copying
//! into Java memory, a consumer working on the previous bytes), up to a byte budget. Without
//! it, each chunk costs two thread hand-offs (the reader asks, the connection task reads the
//! socket, the reader is woken); with it, a reader that finds bytes waiting takes them without
//! parking.

use std::collections::VecDeque;
use std::sync::Arc;

use bytes::Bytes;
use tokio::sync::{mpsc, Semaphore};
use tokio::task::JoinHandle;

use super::ObjectBody;
use crate::error::Result;

/// An [`ObjectBody`] being received ahead of its reader, at most `budget` bytes (plus one
/// network chunk) ahead. Dropping it stops the receiving task and the connection.
#[derive(Debug)]
pub struct ReadAheadBody {
    batches: mpsc::UnboundedReceiver<Result<Vec<Bytes>>>,
    budget: Arc<Semaphore>,
    /// Bytes of budget; a chunk holds at most this many permits.
    limit: usize,
    /// Received chunks not yet read, each with the budget permits it still holds (its length,
    /// at most the whole budget); the first may be the rest of a split chunk.
    pending: VecDeque<(Bytes, usize)>,
    task: JoinHandle<()>,
}

/// Chunks are handed to the reader in batches of at least this many bytes (or fewer at the
/// end, or when the budget is full): one wake-up of a waiting reader per batch, not per chunk.
const BATCH: usize = 256 << 10;

impl ObjectBody {
    /// Starts receiving this body on the current tokio runtime, at most `budget` bytes ahead
    /// of the reader (a `budget` of 0 is taken as 1 byte: one chunk at a time).
    ///
    /// # Panics
    /// When called outside a tokio runtime.
    pub fn read_ahead(mut self, budget: usize) -> ReadAheadBody {
        let limit = u32::try_from(budget.max(1)).unwrap_or(u32::MAX);
        let threshold = BATCH.min(limit as usize);
        let permits = Arc::new(Semaphore::new(limit as usize));
        let (tx, rx) = mpsc::unbounded_channel::<Result<Vec<Bytes>>>();
        let sem = permits.clone();
        let task = tokio::spawn(async move {
            let mut batch: Vec<Bytes> = Vec::new();
            let mut batched = 0usize;
            loop {
                let chunk = match self.next_chunk().await {
                    Ok(Some(chunk)) => chunk,
                    Ok(None) => {
                        if !batch.is_empty() {
                            let _ = tx.send(Ok(batch));
                        }
                        return;
                    }
                    Err(e) => {
                        if !batch.is_empty() {
                            let _ = tx.send(Ok(std::mem::take(&mut batch)));
                        }
                        let _ = tx.send(Err(e));
                        return;
                    }
                };
                // Waits while `budget` bytes are received and not yet read (a chunk larger than
                // the whole budget takes all of it). A batch that holds permits is handed over
                // first, so that the reader can free them.
                let want = u32::try_from(chunk.len()).unwrap_or(u32::MAX).min(limit);
                let permit = match sem.try_acquire_many(want) {
                    Ok(permit) => permit,
                    Err(_) => {
                        if !batch.is_empty() {
                            batched = 0;
                            if tx.send(Ok(std::mem::take(&mut batch))).is_err() {
                                return;
                            }
                        }
                        match sem.acquire_many(want).await {
                            Ok(permit) => permit,
                            Err(_) => return,
                        }
                    }
                };
                permit.forget();
                batched += chunk.len();
                batch.push(chunk);
                if batched >= threshold {
                    batched = 0;
                    if tx.send(Ok(std::mem::take(&mut batch))).is_err() {
                        return;
                    }
                }
            }
        });
        ReadAheadBody {
            batches: rx,
            budget: permits,
            limit: limit as usize,
            pending: VecDeque::new(),
            task,
        }
    }
}

impl ReadAheadBody {
    /// The next bytes of the body, at most `max` (`max` 0 is taken as 1); `None` at its end.
    ///
    /// # Errors
    /// As [`ObjectBody::next_chunk`].
    pub async fn next_chunk_max(&mut self, max: usize) -> Result<Option<Bytes>> {
        if self.pending.is_empty() {
            match self.batches.recv().await {
                Some(Ok(batch)) => {
                    let limit = self.limit;
                    self.pending.extend(batch.into_iter().map(|c| {
                        let held = c.len().min(limit);
                        (c, held)
                    }));
                }
                Some(Err(e)) => return Err(e),
                None => return Ok(None),
            }
        }
        let Some((mut chunk, held)) = self.pending.pop_front() else {
            return Ok(None);
        };
        let max = max.max(1);
        let rest = (chunk.len() > max).then(|| chunk.split_off(max));
        // The bytes handed over no longer count against the budget.
        let freed = held.min(chunk.len());
        self.budget.add_permits(freed);
        if let Some(rest) = rest {
            self.pending.push_front((rest, held - freed));
        }
        Ok(Some(chunk))
    }
}

impl Drop for ReadAheadBody {
    fn drop(&mut self) {
        self.task.abort();
    }
}
