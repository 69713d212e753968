//! Vectored reads: several ranges of one object, nearby ranges merged into one ranged GET by
//! one rule ([`RangeMerge`]), the GETs run concurrently, each range handed back as a slice of
//! its GET's body (no copy).

use std::ops::Range;

use bytes::Bytes;
use futures::stream::{StreamExt, TryStreamExt};
use object_store::ObjectStoreExt;

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
    /// [`VECTORED_PARALLEL`] GETs at once; each returned `Bytes` is a slice of its GET's body
    /// (no copy).
    ///
    /// # Errors
    /// [`Error::InvalidOption`] (key `range`) for an empty or inverted range; otherwise as
    /// [`get`](Self::get) (a range past the end of the object is an error).
    pub async fn get_ranges_merged(
        &self,
        path: &str,
        ranges: &[Range<u64>],
        merge: RangeMerge,
    ) -> Result<Vec<Bytes>> {
        if let Some(r) = ranges.iter().find(|r| r.start >= r.end) {
            return Err(Error::invalid_option(
                "range",
                format!("start {} must be below end {}", r.start, r.end),
            ));
        }
        if ranges.is_empty() {
            return Ok(Vec::new());
        }
        let p = self.path(path)?;
        let plan = merge.plan(ranges);
        let store = &self.entry.store;
        let fetched: Vec<Bytes> = futures::stream::iter(plan.iter().cloned())
            .map(|r| {
                let p = &p;
                async move {
                    let want = r.end - r.start;
                    let bytes = store.get_range(p, r.clone()).await?;
                    if (bytes.len() as u64) < want {
                        return Err(Error::invalid_option(
                            "range",
                            format!(
                                "range [{}, {}) is past the end of the object ({} bytes returned)",
                                r.start,
                                r.end,
                                bytes.len()
                            ),
                        ));
                    }
                    Ok(bytes)
                }
            })
            .buffered(VECTORED_PARALLEL)
            .try_collect()
            .await?;
        Ok(ranges
            .iter()
            .map(|r| {
                // The GET holding r: the last one starting at or before it (plan is sorted).
                let i = plan.partition_point(|g| g.start <= r.start) - 1;
                let from = (r.start - plan[i].start) as usize;
                let to = (r.end - plan[i].start) as usize;
                fetched[i].slice(from..to)
            })
            .collect())
    }
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
}
