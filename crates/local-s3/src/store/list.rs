//! Listings: `ListObjectsV2`, `ListObjects` and `ListMultipartUploads`, in key order, with
//! prefix, delimiter, markers/continuation and `encoding-type=url`.

use std::sync::Arc;

use s3s::dto::*;
use s3s::{s3_error, S3Result};

use super::index::Object;
use crate::state::State;

/// One page of a listing.
pub(crate) struct Page {
    pub objects: Vec<Arc<Object>>,
    pub prefixes: Vec<String>,
    pub truncated: bool,
    /// Last key or common prefix returned, when truncated.
    pub next: Option<String>,
}

/// Keys of `objects` (in order) after `after` that start with `prefix`, grouped by
/// `delimiter`, at most `max` entries (objects plus common prefixes).
pub(crate) fn page(
    objects: &std::collections::BTreeMap<String, Arc<Object>>,
    prefix: &str,
    delimiter: Option<&str>,
    after: Option<&str>,
    max: usize,
) -> Page {
    use std::ops::Bound;
    let start = match after {
        Some(a) if a >= prefix => Bound::Excluded(a.to_owned()),
        _ => Bound::Included(prefix.to_owned()),
    };
    let mut page = Page {
        objects: Vec::new(),
        prefixes: Vec::new(),
        truncated: false,
        next: None,
    };
    let mut last_prefix: Option<String> = None;
    for (key, object) in objects.range::<String, _>((start, Bound::Unbounded)) {
        if !key.starts_with(prefix) {
            break;
        }
        let common = delimiter.filter(|d| !d.is_empty()).and_then(|d| {
            key[prefix.len()..]
                .find(d)
                .map(|pos| key[..prefix.len() + pos + d.len()].to_owned())
        });
        if let Some(common) = common {
            if last_prefix.as_ref() == Some(&common) || after.is_some_and(|a| common.as_str() <= a)
            {
                continue;
            }
            if page.objects.len() + page.prefixes.len() == max {
                page.truncated = true;
                break;
            }
            last_prefix = Some(common.clone());
            page.next = Some(common.clone());
            page.prefixes.push(common);
            continue;
        }
        if page.objects.len() + page.prefixes.len() == max {
            page.truncated = true;
            break;
        }
        page.next = Some(key.clone());
        page.objects.push(object.clone());
    }
    if !page.truncated {
        page.next = None;
    }
    page
}

/// `max-keys`/`max-uploads`: default and most 1000; negative is refused.
pub(crate) fn max_entries(value: Option<i32>) -> S3Result<usize> {
    match value {
        None => Ok(1000),
        Some(n) if n < 0 => Err(s3_error!(InvalidArgument, "max-keys must not be negative")),
        Some(n) => Ok(usize::try_from(n).unwrap_or(1000).min(1000)),
    }
}

/// Whether the request asked for `encoding-type=url`.
pub(crate) fn url_encoded(encoding: Option<&EncodingType>) -> bool {
    encoding.is_some_and(|e| e.as_str() == EncodingType::URL)
}

/// Percent-encodes all but unreserved characters and `/` (the SDKs URL-decode the keys of
/// an `encoding-type=url` listing; `+` and `%` must survive that).
pub(crate) fn encode(text: &str, on: bool) -> String {
    if !on {
        return text.to_owned();
    }
    let mut out = String::with_capacity(text.len());
    for b in text.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' | b'/' => {
                out.push(char::from(b));
            }
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

/// The `Contents` entry of an object.
pub(crate) fn entry(object: &Object, url: bool) -> s3s::dto::Object {
    let m = &object.manifest;
    s3s::dto::Object {
        key: Some(encode(&m.key, url)),
        size: Some(i64::try_from(m.size).unwrap_or(i64::MAX)),
        e_tag: Some(ETag::Strong(m.etag.clone())),
        last_modified: Some(super::timestamp(m.last_modified_millis)),
        storage_class: Some(ObjectStorageClass::from_static(
            ObjectStorageClass::STANDARD,
        )),
        ..Default::default()
    }
}

pub(crate) fn common_prefixes(prefixes: Vec<String>, url: bool) -> Option<Vec<CommonPrefix>> {
    (!prefixes.is_empty()).then(|| {
        prefixes
            .into_iter()
            .map(|p| CommonPrefix {
                prefix: Some(encode(&p, url)),
            })
            .collect()
    })
}

/// `ListMultipartUploads` over the registry: prefix, delimiter, key/upload-id markers and
/// `max-uploads` (default and most 1000), ordered by key then start time as S3 does.
pub(crate) fn list_uploads(
    state: &State,
    input: ListMultipartUploadsInput,
) -> S3Result<ListMultipartUploadsOutput> {
    let prefix = input.prefix.clone().unwrap_or_default();
    let max = max_entries(input.max_uploads)?;
    let url = url_encoded(input.encoding_type.as_ref());
    let key_marker = input.key_marker.clone().unwrap_or_default();
    let id_marker = input.upload_id_marker.clone();
    let mut uploads = Vec::new();
    let mut prefixes: Vec<String> = Vec::new();
    let mut truncated = false;
    let mut last: Option<(String, String)> = None;
    for u in state.uploads().list(Some(&input.bucket)) {
        if !u.key.starts_with(&prefix) {
            continue;
        }
        // After the markers: keys after key-marker, or the same key with a later upload id.
        if !key_marker.is_empty() {
            let after = match &id_marker {
                Some(id) if u.key == key_marker => u.upload_id.as_str() > id.as_str(),
                _ => u.key > key_marker,
            };
            if !after {
                continue;
            }
        }
        if let Some(d) = input.delimiter.as_deref().filter(|d| !d.is_empty()) {
            if let Some(pos) = u.key[prefix.len()..].find(d) {
                let common = u.key[..prefix.len() + pos + d.len()].to_owned();
                if prefixes.last() != Some(&common) {
                    if uploads.len() + prefixes.len() == max {
                        truncated = true;
                        break;
                    }
                    prefixes.push(common);
                }
                continue;
            }
        }
        if uploads.len() + prefixes.len() == max {
            truncated = true;
            break;
        }
        last = Some((u.key.clone(), u.upload_id.clone()));
        uploads.push(MultipartUpload {
            key: Some(encode(&u.key, url)),
            upload_id: Some(u.upload_id),
            initiated: Some(super::timestamp(u.initiated_millis)),
            ..Default::default()
        });
    }
    let (next_key, next_id) = match (truncated, last) {
        (true, Some((k, id))) => (Some(k), Some(id)),
        _ => (None, None),
    };
    Ok(ListMultipartUploadsOutput {
        bucket: Some(input.bucket),
        prefix: input.prefix,
        delimiter: input.delimiter,
        key_marker: input.key_marker,
        upload_id_marker: input.upload_id_marker,
        max_uploads: Some(i32::try_from(max).unwrap_or(1000)),
        is_truncated: Some(truncated),
        next_key_marker: next_key.map(|k| encode(&k, url)),
        next_upload_id_marker: next_id,
        uploads: Some(uploads),
        common_prefixes: common_prefixes(prefixes, url),
        encoding_type: input.encoding_type,
        ..Default::default()
    })
}
