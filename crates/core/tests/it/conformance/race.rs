//! The conditional-write race (case C25): 16 concurrent writers `put_opts(WriteMode::Create)`
//! the same 50 keys; 8 concurrent writers `put_opts(WriteMode::IfMatch)` with the same ETag,
//! 20 rounds. On a server whose conditional writes are atomic per key exactly one writer wins
//! each key and each ETag, every other gets `AlreadyExists` / `Precondition`.
//!
//! Against the project's own endpoint a second winner fails the check. Against a server we
//! did not write it is reported "not provable" with the counts: the library cannot make a
//! server atomic. The writers run concurrently on the test's task (`join_all`), and the check
//! also reports "not provable" when no two attempts on one key were in flight together (the
//! race never happened).

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Instant;

use bytes::Bytes;
use vended_storage::{ErrorKind, VendedStore, WriteMode};

use super::checks::{open_refreshing, Verdict, HOUR};
use super::Backend;

const WRITERS: usize = 16;
const KEYS: usize = 50;
const CAS_WRITERS: usize = 8;
const CAS_ROUNDS: usize = 20;

/// One attempt: key index, start and end (s since the check began), won or not.
struct Attempt {
    key: usize,
    start: f64,
    end: f64,
    won: bool,
}

async fn writer(store: &VendedStore, w: usize, t0: Instant) -> Result<Vec<Attempt>, String> {
    let mut out = Vec::with_capacity(KEYS);
    for k in 0..KEYS {
        // Writers start at different keys so that every key sees contention mid-run too.
        let key = (k + w * 3) % KEYS;
        let start = t0.elapsed().as_secs_f64();
        let result = store
            .put_opts(
                &format!("race/k{key}"),
                Bytes::from(format!("writer {w}")),
                WriteMode::Create,
            )
            .await;
        let end = t0.elapsed().as_secs_f64();
        let won = match result {
            Ok(_) => true,
            Err(e) if e.kind() == ErrorKind::AlreadyExists => false,
            Err(e) => return Err(format!("writer {w} key {key}: {:?}: {e}", e.kind())),
        };
        out.push(Attempt {
            key,
            start,
            end,
            won,
        });
    }
    Ok(out)
}

pub async fn race(b: Arc<Backend>, prefix: String) -> Verdict {
    let (_p, store) = open_refreshing(&b, &prefix, HOUR, None).await;
    let t0 = Instant::now();
    let results = futures::future::join_all((0..WRITERS).map(|w| writer(&store, w, t0))).await;
    let mut attempts = Vec::new();
    let mut problems = Vec::new();
    for r in results {
        match r {
            Ok(a) => attempts.extend(a),
            Err(e) => problems.push(e),
        }
    }
    let mut by_key: HashMap<usize, Vec<&Attempt>> = HashMap::new();
    for a in &attempts {
        by_key.entry(a.key).or_default().push(a);
    }
    let overlapping = by_key
        .values()
        .filter(|v| {
            v.iter().any(|a| {
                v.iter()
                    .any(|b| !std::ptr::eq(*a, *b) && a.start < b.end && b.start < a.end)
            })
        })
        .count();
    let multi: Vec<(usize, usize)> = {
        let mut m: Vec<(usize, usize)> = by_key
            .iter()
            .map(|(k, v)| (*k, v.iter().filter(|a| a.won).count()))
            .filter(|(_, w)| *w != 1)
            .collect();
        m.sort_unstable();
        m
    };
    let (cas_winners_bad, cas_problems) = cas_race(&store).await;
    problems.extend(cas_problems);

    let summary = format!(
        "{} writers x {KEYS} keys: {} keys without exactly one winner {:?}; {overlapping} of {KEYS} keys had attempts in flight together; if-match {CAS_WRITERS} writers x {CAS_ROUNDS} rounds: {} rounds without exactly one winner; other errors: {:?}",
        WRITERS,
        multi.len(),
        &multi[..multi.len().min(5)],
        cas_winners_bad,
        &problems[..problems.len().min(3)],
    );
    let atomic = multi.is_empty() && cas_winners_bad == 0 && problems.is_empty();
    if b.caps.atomic_conditional_writes {
        assert!(atomic, "conditional writes not atomic: {summary}");
    } else if !atomic {
        return Verdict::NotProvable(format!(
            "{}'s conditional writes are not atomic per key: {summary}",
            b.name
        ));
    }
    if overlapping == 0 {
        return Verdict::NotProvable(format!("the writers never overlapped: {summary}"));
    }
    Verdict::Proven(format!(
        "one winner per key and per ETag: {WRITERS} writers x {KEYS} keys ({overlapping} keys with attempts in flight together), if-match {CAS_WRITERS} writers x {CAS_ROUNDS} rounds"
    ))
}

/// Rounds where 8 concurrent `IfMatch` writers with the object's current ETag did not
/// produce exactly one winner, and unexpected errors.
async fn cas_race(store: &VendedStore) -> (usize, Vec<String>) {
    let first = store
        .put_opts("race/cas", Bytes::from_static(b"0"), WriteMode::Overwrite)
        .await;
    let mut etag = match first.map(|r| r.e_tag) {
        Ok(Some(e)) => e,
        Ok(None) => return (0, vec!["the server returned no ETag".into()]),
        Err(e) => return (0, vec![format!("seeding the object: {e}")]),
    };
    let mut bad = 0;
    let mut problems = Vec::new();
    for round in 0..CAS_ROUNDS {
        let results = futures::future::join_all((0..CAS_WRITERS).map(|w| {
            store.put_opts(
                "race/cas",
                Bytes::from(format!("{round}-{w}")),
                WriteMode::IfMatch(etag.clone()),
            )
        }))
        .await;
        let mut winners = Vec::new();
        for r in results {
            match r {
                Ok(r) => winners.push(r.e_tag),
                Err(e) if e.kind() == ErrorKind::Precondition => {}
                Err(e) => problems.push(format!("if-match round {round}: {:?}: {e}", e.kind())),
            }
        }
        if winners.len() != 1 {
            bad += 1;
        }
        match winners.into_iter().flatten().next() {
            Some(e) => etag = e,
            None => break,
        }
    }
    (bad, problems)
}
