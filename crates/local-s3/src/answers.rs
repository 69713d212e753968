//! Faults of the answer and of conditions, for tests of what a client does when a server
//! misbehaves after storing:
//!
//! - **Lost answers.** An armed PutObject of `bucket`/`key` is stored as usual, then its
//!   success answer is replaced by `500 InternalError` (what S3 answers when it "encountered
//!   an internal error", the object stored or not): the client cannot know that it was
//!   stored, and retries. Armed per key and counted; one armed answer is used by one
//!   successful PutObject (an UploadPart or a refused PUT leaves it armed).
//! - **Ignored conditions.** In a marked bucket, PutObject ignores `If-None-Match` and
//!   `If-Match` (as S3-compatible servers without conditional writes do): every PUT
//!   overwrites.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};

/// Armed lost answers and buckets ignoring conditions.
#[derive(Default)]
pub(crate) struct AnswerFaults {
    lose: Mutex<HashMap<(String, String), u64>>,
    lost: AtomicU64,
    ignoring: Mutex<HashSet<String>>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl AnswerFaults {
    /// Arms `count` more lost answers for PutObject of `bucket`/`key`.
    pub fn lose_answers(&self, bucket: &str, key: &str, count: u64) {
        *lock(&self.lose)
            .entry((bucket.to_owned(), key.to_owned()))
            .or_default() += count;
    }

    /// Takes one armed lost answer of `bucket`/`key`: whether this (successful) PutObject's
    /// answer is to be replaced by a 500.
    pub fn take_lost(&self, bucket: &str, key: &str) -> bool {
        let mut armed = lock(&self.lose);
        if armed.is_empty() {
            return false;
        }
        let target = (bucket.to_owned(), key.to_owned());
        let Some(n) = armed.get_mut(&target) else {
            return false;
        };
        *n -= 1;
        if *n == 0 {
            armed.remove(&target);
        }
        self.lost.fetch_add(1, Ordering::SeqCst);
        true
    }

    /// `(answers lost so far, answers still armed)`.
    pub fn counts(&self) -> (u64, u64) {
        (
            self.lost.load(Ordering::SeqCst),
            lock(&self.lose).values().sum(),
        )
    }

    /// Makes PutObject in `bucket` ignore (`true`) or honour (`false`) its conditions.
    pub fn ignore_conditions(&self, bucket: &str, ignore: bool) {
        let mut set = lock(&self.ignoring);
        if ignore {
            set.insert(bucket.to_owned());
        } else {
            set.remove(bucket);
        }
    }

    /// Whether PutObject in `bucket` ignores its conditions.
    pub fn ignores_conditions(&self, bucket: &str) -> bool {
        lock(&self.ignoring).contains(bucket)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn armed_answers_are_used_once_each_per_key() {
        let f = AnswerFaults::default();
        f.lose_answers("b", "k", 2);
        assert!(!f.take_lost("b", "other"));
        assert!(f.take_lost("b", "k"));
        assert_eq!(f.counts(), (1, 1));
        assert!(f.take_lost("b", "k"));
        assert!(!f.take_lost("b", "k"));
        assert_eq!(f.counts(), (2, 0));
    }

    #[test]
    fn conditions_are_ignored_per_bucket_until_turned_back_on() {
        let f = AnswerFaults::default();
        f.ignore_conditions("b", true);
        assert!(f.ignores_conditions("b"));
        assert!(!f.ignores_conditions("c"));
        f.ignore_conditions("b", false);
        assert!(!f.ignores_conditions("b"));
    }
}
