//! The data plane (crate `io` module) against `memory://`: logic without a network.

use crate::common;

use common::data;

use std::collections::HashMap;
use std::sync::Arc;

use bytes::Bytes;
use rand::{Rng, SeedableRng};
use vended_storage::io::RangeMerge;
use vended_storage::{
    Error, ErrorKind, RefreshConfig, Session, SessionConfig, VendedStore, WriteMode, WriterOptions,
};

fn store(name: &str) -> VendedStore {
    common::registry()
        .open(
            &format!("memory://{name}/base"),
            HashMap::new(),
            None,
            RefreshConfig::default(),
        )
        .unwrap()
}

fn kind<T: std::fmt::Debug>(r: Result<T, Error>) -> ErrorKind {
    r.unwrap_err().kind()
}

#[tokio::test]
async fn ranged_reads_at_random_offsets_equal_the_source() {
    let s = store("ranges");
    let src = data(1 << 20, 1);
    s.put("obj", Bytes::from(src.clone())).await.unwrap();
    let mut rng = rand::rngs::StdRng::seed_from_u64(2);
    for _ in 0..200 {
        let offset = rng.random_range(0..src.len() as u64 + 10);
        let len = rng.random_range(1..70_000usize);
        let mut buf = vec![0xAAu8; len];
        let n = s.read_range_into("obj", offset, &mut buf).await.unwrap();
        let start = (offset as usize).min(src.len());
        let end = (start + len).min(src.len());
        assert_eq!(n, end - start, "offset {offset} len {len}");
        assert_eq!(&buf[..n], &src[start..end]);
        assert!(
            buf[n..].iter().all(|b| *b == 0xAA),
            "bytes past n untouched"
        );
    }
}

#[tokio::test]
async fn a_read_at_or_past_the_end_is_empty_and_an_empty_buffer_reads_nothing() {
    let s = store("eof");
    s.put("obj", Bytes::from_static(b"0123456789"))
        .await
        .unwrap();
    let mut buf = [0u8; 4];
    assert_eq!(s.read_range_into("obj", 10, &mut buf).await.unwrap(), 0);
    assert_eq!(
        s.read_range_into("obj", 1 << 40, &mut buf).await.unwrap(),
        0
    );
    assert_eq!(s.read_range_into("obj", 8, &mut buf).await.unwrap(), 2);
    assert_eq!(&buf[..2], b"89");
    assert_eq!(s.read_range_into("obj", 3, &mut []).await.unwrap(), 0);
    let body = s.read_range("obj", 20..30, None).await.unwrap();
    assert!(body.is_empty());
    assert_eq!(body.info().size, 10);
    s.put("empty", Bytes::new()).await.unwrap();
    assert_eq!(s.read_range_into("empty", 0, &mut buf).await.unwrap(), 0);
    // Missing objects stay errors.
    assert_eq!(
        kind(s.read_range_into("missing", 0, &mut buf).await),
        ErrorKind::NotFound
    );
    assert_eq!(
        kind(s.read_range("obj", 5..5, None).await),
        ErrorKind::InvalidOptions
    );
    assert_eq!(
        kind(s.read_range_into("obj", u64::MAX - 1, &mut buf).await),
        ErrorKind::InvalidOptions
    );
}

#[tokio::test]
async fn a_read_with_the_etag_of_a_replaced_object_is_a_precondition_failure() {
    let s = store("ifmatch");
    s.put("obj", Bytes::from_static(b"version one"))
        .await
        .unwrap();
    let first = s.read_range("obj", 0..7, None).await.unwrap();
    let e_tag = first.info().e_tag.clone().expect("memory gives ETags");
    let mut buf = [0u8; 3];
    assert_eq!(
        s.read_range_into_if_match("obj", 8, &mut buf, Some(&e_tag))
            .await
            .unwrap(),
        3
    );
    s.put("obj", Bytes::from_static(b"version two"))
        .await
        .unwrap();
    assert_eq!(
        kind(
            s.read_range_into_if_match("obj", 8, &mut buf, Some(&e_tag))
                .await
        ),
        ErrorKind::Precondition
    );
}

#[tokio::test]
async fn get_into_fills_one_presized_buffer_and_refuses_a_small_one() {
    let s = store("getinto");
    let src = data(300_000, 3);
    s.put("obj", Bytes::from(src.clone())).await.unwrap();
    let mut buf = vec![0u8; src.len() + 5];
    assert_eq!(s.get_into("obj", &mut buf).await.unwrap(), src.len() as u64);
    assert_eq!(&buf[..src.len()], &src[..]);
    let mut small = vec![0u8; src.len() - 1];
    let e = s.get_into("obj", &mut small).await.unwrap_err();
    assert!(
        matches!(&e, Error::InvalidOption { key, .. } if key == "buffer"),
        "{e}"
    );
    let mut body = s.get_body("obj").await.unwrap();
    assert_eq!(body.len(), src.len() as u64);
    let mut total = 0;
    while let Some(chunk) = body.next_chunk().await.unwrap() {
        assert_eq!(&chunk[..], &src[total..total + chunk.len()]);
        total += chunk.len();
    }
    assert_eq!(total, src.len());
}

#[tokio::test]
async fn get_ranges_returns_each_range_in_order() {
    let s = store("vectored");
    let src = data(2 << 20, 4);
    s.put("obj", Bytes::from(src.clone())).await.unwrap();
    let ranges = vec![1_500_000..1_500_100, 0..10, 10..20, 2_000_000..(2 << 20)];
    let got = s.get_ranges("obj", &ranges).await.unwrap();
    assert_eq!(got.len(), ranges.len());
    for (r, b) in ranges.iter().zip(&got) {
        assert_eq!(&b[..], &src[r.start as usize..r.end as usize]);
    }
    assert!(s.get_ranges("obj", &[]).await.unwrap().is_empty());
    assert_eq!(
        kind(
            s.get_ranges("obj", &[0..10, std::ops::Range { start: 9, end: 3 }])
                .await
        ),
        ErrorKind::InvalidOptions
    );
}

#[tokio::test]
async fn vectored_ranges_pinned_to_an_etag_fail_once_the_object_is_replaced() {
    let s = store("vectored-pinned");
    s.put("obj", Bytes::from(data(3 << 20, 5))).await.unwrap();
    let e_tag = s
        .head("obj")
        .await
        .unwrap()
        .e_tag
        .expect("memory gives ETags");
    // Two GETs (the ranges are 2 MiB apart), both pinned.
    let ranges = [0..10, (2 << 20)..(2 << 20) + 10];
    let merge = RangeMerge::HADOOP;
    let parts = s
        .get_ranges_chunked("obj", &ranges, merge, Some(&e_tag))
        .await
        .unwrap();
    assert_eq!(parts.len(), 2);
    s.put("obj", Bytes::from(data(3 << 20, 6))).await.unwrap();
    assert_eq!(
        kind(
            s.get_ranges_chunked("obj", &ranges, merge, Some(&e_tag))
                .await
        ),
        ErrorKind::Precondition
    );
    // Unpinned, the new version reads (its GETs agree on one ETag).
    assert!(s
        .get_ranges_chunked("obj", &ranges, merge, None)
        .await
        .is_ok());
}

fn small_parts(part_size: usize) -> WriterOptions {
    WriterOptions {
        part_size,
        max_concurrency: 2,
        ..Default::default()
    }
}

#[tokio::test]
async fn a_multipart_write_is_invisible_until_finish_and_equals_the_source() {
    let s = store("writer");
    let src = data(1_000_003, 5);
    let mut w = s.writer("out/obj", small_parts(64 * 1024)).unwrap();
    for chunk in src.chunks(10_007) {
        w.write(chunk).await.unwrap();
    }
    assert_eq!(w.bytes_written(), src.len() as u64);
    assert_eq!(kind(s.head("out/obj").await), ErrorKind::NotFound);
    let result = w.finish().await.unwrap();
    assert!(result.e_tag.is_some());
    assert_eq!(&s.get("out/obj").await.unwrap()[..], &src[..]);
    // Closed after finish.
    assert_eq!(kind(w.write(b"more").await), ErrorKind::Closed);
    assert_eq!(kind(w.finish().await), ErrorKind::Closed);
    w.abort().await.unwrap();
    assert_eq!(
        &s.get("out/obj").await.unwrap()[..],
        &src[..],
        "abort after finish changes nothing"
    );
}

#[tokio::test]
async fn owned_writes_and_an_empty_object() {
    let s = store("owned");
    let src = Bytes::from(data(200_000, 6));
    let mut w = s.writer("obj", small_parts(50_000)).unwrap();
    w.put(src.slice(..123)).await.unwrap();
    w.put(src.slice(123..)).await.unwrap();
    w.finish().await.unwrap();
    assert_eq!(s.get("obj").await.unwrap(), src);

    let mut w = s.writer("empty", WriterOptions::default()).unwrap();
    w.finish().await.unwrap();
    assert_eq!(s.head("empty").await.unwrap().size, 0);
}

#[tokio::test]
async fn an_aborted_write_leaves_nothing_and_refuses_more_writes() {
    let s = store("abort");
    let mut w = s.writer("obj", small_parts(1000)).unwrap();
    w.write(&data(5000, 7)).await.unwrap();
    w.abort().await.unwrap();
    assert!(w.is_closed());
    assert_eq!(kind(s.head("obj").await), ErrorKind::NotFound);
    assert_eq!(kind(w.write(b"x").await), ErrorKind::Closed);
    assert_eq!(kind(w.finish().await), ErrorKind::Closed);
    // A buffered (single-part) writer aborted: nothing written either.
    let mut w = s.writer("small", WriterOptions::default()).unwrap();
    w.write(b"tiny").await.unwrap();
    w.abort().await.unwrap();
    assert_eq!(kind(s.head("small").await), ErrorKind::NotFound);
    // Dropping an unfinished writer writes nothing.
    let mut w = s.writer("dropped", small_parts(1000)).unwrap();
    w.write(&data(5000, 8)).await.unwrap();
    drop(w);
    assert_eq!(kind(s.head("dropped").await), ErrorKind::NotFound);
}

#[tokio::test]
async fn bad_writer_options_name_the_option() {
    let s = store("badopts");
    let e = s
        .writer(
            "obj",
            WriterOptions {
                max_concurrency: 0,
                ..Default::default()
            },
        )
        .unwrap_err();
    assert!(
        matches!(&e, Error::InvalidOption { key, .. } if key == "max_concurrency"),
        "{e}"
    );
    let e = s.writer("obj", small_parts(0)).unwrap_err();
    assert!(
        matches!(&e, Error::InvalidOption { key, .. } if key == "part_size"),
        "{e}"
    );
    assert_eq!(
        kind(s.writer("", WriterOptions::default())),
        ErrorKind::InvalidOptions
    );
    // More than 10,000 parts: refused with the option to change, and the writer is closed.
    let mut w = s.writer("many", small_parts(1)).unwrap();
    w.write(&[1u8; 9_999]).await.unwrap();
    let e = w.write(&[1u8; 2]).await.unwrap_err();
    assert!(
        matches!(&e, Error::InvalidOption { key, .. } if key == "part_size"),
        "{e}"
    );
    let again = w.finish().await.unwrap_err();
    assert_eq!(
        again.to_string(),
        e.to_string(),
        "a failed writer repeats its error"
    );
    assert_eq!(kind(s.head("many").await), ErrorKind::NotFound);
}

#[tokio::test]
async fn conditional_puts_create_only_and_if_match() {
    let s = store("conditional");
    let first = s
        .put_opts("obj", Bytes::from_static(b"1"), WriteMode::Create)
        .await
        .unwrap();
    assert_eq!(
        kind(
            s.put_opts("obj", Bytes::from_static(b"2"), WriteMode::Create)
                .await
        ),
        ErrorKind::AlreadyExists
    );
    let e_tag = first.e_tag.unwrap();
    let second = s
        .put_opts(
            "obj",
            Bytes::from_static(b"2"),
            WriteMode::IfMatch(e_tag.clone()),
        )
        .await
        .unwrap();
    assert_ne!(second.e_tag.as_deref(), Some(e_tag.as_str()));
    assert_eq!(
        kind(
            s.put_opts("obj", Bytes::from_static(b"3"), WriteMode::IfMatch(e_tag))
                .await
        ),
        ErrorKind::Precondition
    );
    assert_eq!(s.get("obj").await.unwrap(), Bytes::from_static(b"2"));
    // Multipart writers check the mode before completing.
    let mut w = s
        .writer(
            "obj",
            WriterOptions {
                part_size: 10,
                max_concurrency: 2,
                mode: WriteMode::Create,
            },
        )
        .unwrap();
    w.write(&[7u8; 35]).await.unwrap();
    assert_eq!(kind(w.finish().await), ErrorKind::AlreadyExists);
    assert_eq!(s.get("obj").await.unwrap(), Bytes::from_static(b"2"));
    let mut w = s
        .writer(
            "new",
            WriterOptions {
                part_size: 10,
                max_concurrency: 2,
                mode: WriteMode::Create,
            },
        )
        .unwrap();
    w.write(&[7u8; 35]).await.unwrap();
    w.finish().await.unwrap();
    assert_eq!(s.head("new").await.unwrap().size, 35);
}

#[tokio::test]
async fn listings_are_relative_to_the_base() {
    let s = store("list");
    for p in ["a/1", "a/2", "a/sub/3", "b/4", "top"] {
        s.put(p, Bytes::from_static(b"x")).await.unwrap();
    }
    use futures::TryStreamExt;
    let mut all: Vec<String> = s
        .list_stream(None)
        .unwrap()
        .map_ok(|i| i.path)
        .try_collect()
        .await
        .unwrap();
    all.sort();
    assert_eq!(all, ["a/1", "a/2", "a/sub/3", "b/4", "top"]);
    for info in s
        .list_stream(None)
        .unwrap()
        .try_collect::<Vec<_>>()
        .await
        .unwrap()
    {
        assert_eq!(
            s.head(&info.path).await.unwrap(),
            info,
            "head and list agree"
        );
        assert!(info.e_tag.is_some());
    }
    let mut under_a: Vec<String> = s
        .list_stream(Some("a/"))
        .unwrap()
        .map_ok(|i| i.path)
        .try_collect()
        .await
        .unwrap();
    under_a.sort();
    assert_eq!(under_a, ["a/1", "a/2", "a/sub/3"]);
    let level = s.list_with_delimiter(None).await.unwrap();
    assert_eq!(
        level
            .objects
            .iter()
            .map(|o| o.path.as_str())
            .collect::<Vec<_>>(),
        ["top"]
    );
    let mut prefixes = level.common_prefixes.clone();
    prefixes.sort();
    assert_eq!(prefixes, ["a", "b"]);
    let level = s.list_with_delimiter(Some("a")).await.unwrap();
    let mut objects: Vec<_> = level.objects.iter().map(|o| o.path.clone()).collect();
    objects.sort();
    assert_eq!(objects, ["a/1", "a/2"]);
    assert_eq!(level.common_prefixes, ["a/sub"]);
    assert_eq!(
        kind(s.list_stream(Some("a/../b")).map(|_| ())),
        ErrorKind::InvalidOptions
    );
}

#[tokio::test]
async fn copies_and_renames() {
    let s = store("copy");
    s.put("src", Bytes::from_static(b"data")).await.unwrap();
    s.copy("src", "dst").await.unwrap();
    assert_eq!(s.get("dst").await.unwrap(), Bytes::from_static(b"data"));
    assert_eq!(
        kind(s.copy_if_not_exists("src", "dst").await),
        ErrorKind::AlreadyExists
    );
    s.copy_if_not_exists("src", "dst2").await.unwrap();
    s.rename("dst2", "moved").await.unwrap();
    assert_eq!(kind(s.head("dst2").await), ErrorKind::NotFound);
    assert_eq!(s.get("moved").await.unwrap(), Bytes::from_static(b"data"));
    assert_eq!(
        kind(s.rename_if_not_exists("moved", "dst").await),
        ErrorKind::AlreadyExists
    );
    assert_eq!(kind(s.copy("missing", "x").await), ErrorKind::NotFound);
}

#[tokio::test]
async fn writes_copies_and_renames_drop_session_entries() {
    let session = Arc::new(Session::new(SessionConfig::default()).unwrap());
    let s = store("session").with_session(session.clone());
    s.put("obj", Bytes::from_static(b"one")).await.unwrap();
    s.put("other", Bytes::from_static(b"longer")).await.unwrap();
    assert_eq!(s.head("obj").await.unwrap().size, 3); // cached now
    s.put_opts("obj", Bytes::from_static(b"four"), WriteMode::Overwrite)
        .await
        .unwrap();
    assert_eq!(s.head("obj").await.unwrap().size, 4);
    let mut w = s.writer("obj", WriterOptions::default()).unwrap();
    w.write(b"fived").await.unwrap();
    w.finish().await.unwrap();
    assert_eq!(s.head("obj").await.unwrap().size, 5);
    s.copy("other", "obj").await.unwrap();
    assert_eq!(s.head("obj").await.unwrap().size, 6);
    assert_eq!(s.head("other").await.unwrap().size, 6);
    s.rename("other", "obj").await.unwrap();
    assert_eq!(kind(s.head("other").await), ErrorKind::NotFound);
}

/// A writer can be driven from a spawned task: `write` and `finish` futures are `Send`, also
/// for a conditional multipart write (whose finish checks the mode first).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_writer_can_be_finished_in_a_spawned_task() {
    let s = store("spawned");
    let src = data(300_000, 9);
    let options = WriterOptions {
        mode: WriteMode::Create,
        ..small_parts(64 * 1024)
    };
    let mut w = s.writer("spawned/obj", options).unwrap();
    let payload = src.clone();
    let result = tokio::spawn(async move {
        w.write(&payload).await?;
        w.finish().await
    })
    .await
    .expect("the task ran");
    assert!(result.unwrap().e_tag.is_some());
    assert_eq!(&s.get("spawned/obj").await.unwrap()[..], &src[..]);
}
