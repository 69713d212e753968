//! Vectored reads: several ranges of one object, nearby ranges merged into one ranged GET by
//! one rule ([`RangeMerge`]), the GETs run concurrently, each range handed back as slices of
//! the chunks its GET's body arrived in (no copy; gathered into one buffer only on request).

use std::ops::Range;

use bytes::Bytes;
use futures::stream::{StreamExt, TryStreamExt};

use crate::error::{Error, Result};
use crate::store::VendedStore;

/// Ranged GETs of one vectored read in flight at once (as `object_store`'s `get_ranges`).
pub const VECTORED_PARALLEL: usize = 10;

/// When two ranges of a vectored read are fetched with one GET, Hadoop's rule
/// (`PositionedReadable.minSeekForVectorReads` / `maxReadSizeForVectorReads`, as S3A applies
/// them): ranges sorted by start are merged while the gap from the merged range's end to the
/// next range's start is **below** `min_seek` bytes and the merged range stays at most
/// `max_merged` bytes long. A single range longer than `max_merged` is fetched whole (one GET),
/// never split. Bytes in the gaps are fetched and dropped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RangeMerge {
    /// Gaps of at least this many bytes end a merged range (0: only overlapping ranges merge).
    pub min_seek: u64,
    /// A merged range is at most this many bytes (ranges longer on their own stay whole).
    pub max_merged: u64,
}

impl RangeMerge {
    /// `object_store`'s own coalescing: gaps up to 1 MiB merged, no size limit. What
    /// [`VendedStore::get_ranges`] uses.
    pub const OBJECT_STORE: RangeMerge = RangeMerge {
        min_seek: 1024 * 1024 + 1,
        max_merged: u64::MAX,
    };

    /// S3A's defaults (`fs.s3a.vectored.read.min.seek.size` 4 KiB,
    /// `fs.s3a.vectored.read.max.merged.size` 1 MiB), Hadoop's `PositionedReadable` defaults.
    pub const HADOOP: RangeMerge = RangeMerge {
        min_seek: 4 * 1024,
        max_merged: 1024 * 1024,
    };

    /// The ranged GETs that cover `ranges` (any order; empty ranges are not allowed), sorted by
    /// start: one per merged run.
    pub fn plan(&self, ranges: &[Range<u64>]) -> Vec<Range<u64>> {
        let mut sorted = ranges.to_vec();
        sorted.sort_unstable_by_key(|r| (r.start, r.end));
        let mut out: Vec<Range<u64>> = Vec::with_capacity(sorted.len());
        for r in sorted {
            if let Some(last) = out.last_mut() {
                let gap = r.start.saturating_sub(last.end);
                let end = last.end.max(r.end);
                // Overlapping ranges always share a GET: their bytes are needed anyway.
                if r.start < last.end
                    || (gap < self.min_seek && end - last.start <= self.max_merged)
                {
                    last.end = end;
                    continue;
                }
            }
            out.push(r);
        }
        out
    }
}

impl VendedStore {
    /// Reads several ranges of one object (start inclusive, end exclusive), in the order given,
    /// merging nearby ranges by `object_store`'s rule ([`RangeMerge::OBJECT_STORE`]: gaps up to
    /// 1 MiB, no size limit); see [`get_ranges_merged`](Self::get_ranges_merged).
    ///
    /// # Errors
    /// As [`get_ranges_merged`](Self::get_ranges_merged).
    pub async fn get_ranges(&self, path: &str, ranges: &[Range<u64>]) -> Result<Vec<Bytes>> {
        self.get_ranges_merged(path, ranges, RangeMerge::OBJECT_STORE)
            .await
    }

    /// Reads several ranges of one object (start inclusive, end exclusive), in the order given:
    /// one ranged GET per run merged by `merge` ([`RangeMerge::plan`]), up to
    /// [`VECTORED_PARALLEL`] GETs at once; each range comes back as one `Bytes`, a slice of its
    /// GET's body when that body came in one chunk, else its chunks gathered (one copy). A
    /// caller that copies the bytes anyway should use
    /// [`get_ranges_chunked`](Self::get_ranges_chunked), which never gathers.
    ///
    /// # Errors
    /// As [`get_ranges_chunked`](Self::get_ranges_chunked).
    pub async fn get_ranges_merged(
        &self,
        path: &str,
        ranges: &[Range<u64>],
        merge: RangeMerge,
    ) -> Result<Vec<Bytes>> {
        let chunked = self.get_ranges_chunked(path, ranges, merge, None).await?;
        Ok(chunked.into_iter().map(gather).collect())
    }

    /// [`get_ranges_merged`](Self::get_ranges_merged) without gathering: each range comes back
    /// as the chunks of its GET's body that hold it, as they came from the network (slices of
    /// the network buffers, no copy), in order. For a caller that copies each range into memory
    /// of its own (one copy per byte in all).
    ///
    /// Every range comes from one version of the object: with `if_match` (an ETag exactly as
    /// [`head`](Self::head) gives it, quotes included) every GET is pinned to it; without, the
    /// GETs' answers must carry one ETag (where the store gives ETags), so an object replaced
    /// between two of them is an error, never a mix of both versions.
    ///
    /// # Errors
    /// [`Error::InvalidOption`] (key `range`) for an empty or inverted range, or one past the
    /// end of the object; [`ErrorKind::Precondition`](crate::ErrorKind::Precondition) when the object no longer has the ETag
    /// `if_match`, or changed between the GETs; otherwise as [`get`](Self::get).
    pub async fn get_ranges_chunked(
        &self,
        path: &str,
        ranges: &[Range<u64>],
        merge: RangeMerge,
        if_match: Option<&str>,
    ) -> Result<Vec<Vec<Bytes>>> {
        if let Some(r) = ranges.iter().find(|r| r.start >= r.end) {
            return Err(Error::invalid_option(
                "range",
                format!("start {} must be below end {}", r.start, r.end),
            ));
        }
        if ranges.is_empty() {
            return Ok(Vec::new());
        }
        let plan = merge.plan(ranges);
        let fetched: Vec<(Option<String>, Vec<Bytes>)> =
            futures::stream::iter(plan.iter().cloned())
                .map(|r| async move {
                    let want = r.end - r.start;
                    let mut body = self.read_range(path, r.clone(), if_match).await?;
                    if body.len() < want {
                        return Err(Error::invalid_option(
                            "range",
                            format!(
                                "range [{}, {}) is past the end of the object ({} bytes)",
                                r.start,
                                r.end,
                                body.info().size
                            ),
                        ));
                    }
                    let e_tag = body.info().e_tag.clone();
                    Ok((e_tag, body.next_chunks(want as usize).await?))
                })
                .buffered(VECTORED_PARALLEL)
                .try_collect()
                .await?;
        one_version(path, fetched.iter().map(|(e_tag, _)| e_tag.as_deref()))?;
        Ok(ranges
            .iter()
            .map(|r| {
                // The GET holding r: the last one starting at or before it (plan is sorted).
                let i = plan.partition_point(|g| g.start <= r.start) - 1;
                let from = r.start - plan[i].start;
                slice_chunks(&fetched[i].1, from, r.end - r.start)
            })
            .collect())
    }
}

/// Checks that the GETs of one vectored read answered with one ETag (answers without one are
/// not compared: a store that gives none cannot tell).
///
/// # Errors
/// A precondition error naming both ETags (ETags are not secrets) when two differ.
fn one_version<'a>(path: &str, e_tags: impl Iterator<Item = Option<&'a str>>) -> Result<()> {
    let mut first: Option<&str> = None;
    for e_tag in e_tags.flatten() {
        match first {
            None => first = Some(e_tag),
            Some(seen) if seen != e_tag => {
                return Err(Error::from(object_store::Error::Precondition {
                    path: path.to_string(),
                    source: format!(
                        "the object changed during a vectored read: its GETs answered ETags \
                         {seen} and {e_tag}; read it again"
                    )
                    .into(),
                }));
            }
            Some(_) => {}
        }
    }
    Ok(())
}

/// The bytes `[from, from + len)` of a body that came as `chunks`: slices of them, no copy.
fn slice_chunks(chunks: &[Bytes], from: u64, len: u64) -> Vec<Bytes> {
    let (mut skip, mut left) = (from as usize, len as usize);
    let mut out = Vec::new();
    for chunk in chunks {
        if left == 0 {
            break;
        }
        if skip >= chunk.len() {
            skip -= chunk.len();
            continue;
        }
        let n = (chunk.len() - skip).min(left);
        out.push(chunk.slice(skip..skip + n));
        left -= n;
        skip = 0;
    }
    out
}

/// The chunks in one `Bytes`: the chunk itself when there is one (no copy).
fn gather(mut chunks: Vec<Bytes>) -> Bytes {
    if chunks.len() == 1 {
        return chunks.pop().unwrap_or_default();
    }
    let mut all = bytes::BytesMut::with_capacity(chunks.iter().map(Bytes::len).sum());
    for c in &chunks {
        all.extend_from_slice(c);
    }
    all.freeze()
}

#[cfg(test)]
mod tests {
    use super::*;

    const KIB: u64 = 1024;
    const MIB: u64 = 1024 * KIB;

    fn requests_and_bytes(merge: RangeMerge, ranges: &[Range<u64>]) -> (usize, u64) {
        let plan = merge.plan(ranges);
        (plan.len(), plan.iter().map(|r| r.end - r.start).sum())
    }

    #[test]
    fn hadoop_rule_merges_only_small_gaps_up_to_the_size_limit() {
        // Four 100 KiB column chunks: gaps 1 KiB (merged), 4 KiB (not: a gap of min_seek
        // ends a run), 200 KiB (not).
        let c = |start: u64| start..start + 100 * KIB;
        let ranges = [c(0), c(101 * KIB), c(205 * KIB), c(505 * KIB)];
        assert_eq!(
            RangeMerge::HADOOP.plan(&ranges),
            vec![0..201 * KIB, 205 * KIB..305 * KIB, 505 * KIB..605 * KIB]
        );
        // object_store's rule: everything within 1 MiB is one GET, gaps fetched too.
        assert_eq!(
            requests_and_bytes(RangeMerge::OBJECT_STORE, &ranges),
            (1, 605 * KIB)
        );
        assert_eq!(
            requests_and_bytes(RangeMerge::HADOOP, &ranges),
            (3, 401 * KIB)
        );
    }

    #[test]
    fn a_merged_run_stops_at_max_merged_and_a_long_range_stays_whole() {
        // Adjacent 300 KiB ranges: at most 3 fit in 1 MiB (900 KiB), so 7 make 3 GETs.
        let ranges: Vec<_> = (0..7).map(|i| i * 300 * KIB..(i + 1) * 300 * KIB).collect();
        let plan = RangeMerge::HADOOP.plan(&ranges);
        assert_eq!(plan.len(), 3);
        assert!(plan.iter().all(|r| r.end - r.start <= MIB));
        assert_eq!(
            requests_and_bytes(RangeMerge::HADOOP, &ranges).1,
            2100 * KIB
        );
        // A 5 MiB range is one GET of 5 MiB; its small neighbour is not merged into it.
        let long = [0..5 * MIB, 5 * MIB + 10..5 * MIB + 20];
        assert_eq!(
            requests_and_bytes(RangeMerge::HADOOP, &long),
            (2, 5 * MIB + 10)
        );
    }

    #[test]
    fn unsorted_and_overlapping_ranges_are_covered_once() {
        let m = RangeMerge {
            min_seek: 0,
            max_merged: 10,
        };
        // Overlap merges even past max_merged; touching ranges (gap 0) do not with min_seek 0.
        assert_eq!(
            m.plan(&[50..60, 0..8, 5..20, 20..30]),
            vec![0..20, 20..30, 50..60]
        );
        assert!(m.plan(&[]).is_empty());
    }

    #[test]
    fn a_range_is_sliced_out_of_the_chunks_without_a_copy() {
        let chunks = [
            Bytes::from_static(b"abc"),
            Bytes::from_static(b"defg"),
            Bytes::from_static(b"hi"),
        ];
        let got = slice_chunks(&chunks, 2, 6);
        let text: Vec<&[u8]> = got.iter().map(|b| &b[..]).collect();
        assert_eq!(text, [&b"c"[..], &b"defg"[..], &b"h"[..]]);
        assert_eq!(
            got[1].as_ptr(),
            chunks[1].as_ptr(),
            "a whole chunk is not copied"
        );
        assert_eq!(got[0].as_ptr(), chunks[0][2..].as_ptr());
        assert!(slice_chunks(&chunks, 9, 0).is_empty());
        assert_eq!(&slice_chunks(&chunks, 3, 4)[..], &[chunks[1].clone()]);
        assert_eq!(&gather(got)[..], b"cdefgh");
        assert_eq!(gather(vec![chunks[2].clone()]).as_ptr(), chunks[2].as_ptr());
    }

    #[test]
    fn ranges_of_two_versions_are_refused_naming_both_etags() {
        assert!(one_version("o", [Some("\"a\""), None, Some("\"a\"")].into_iter()).is_ok());
        assert!(one_version("o", [None, None].into_iter()).is_ok());
        let err = one_version("o", [Some("\"a\""), Some("\"b\"")].into_iter()).unwrap_err();
        assert_eq!(err.kind(), crate::ErrorKind::Precondition);
        let text = err.to_string();
        assert!(
            text.contains("\"a\"") && text.contains("\"b\"") && text.contains("o"),
            "{text}"
        );
    }
}
