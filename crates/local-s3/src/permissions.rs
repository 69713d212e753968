//! [`Permissions`] of a temporary key: reading the admin API's and STS's parameters, and the
//! check of one S3 operation against them.

use crate::types::Permissions;

/// S3 operations that list (need [`Permissions::list`]).
pub(crate) const LIST_OPS: &[&str] = &[
    "ListObjects",
    "ListObjectsV2",
    "ListObjectVersions",
    "ListMultipartUploads",
];

/// Whether `op` (an s3s operation name such as `PutObject`) only reads.
fn is_read(op: &str) -> bool {
    ["Get", "Head", "List"].iter().any(|p| op.starts_with(p)) || op == "SelectObjectContent"
}

/// Why `permissions` forbid `op`, as the message of a 403 `AccessDenied`; `None` if allowed.
pub(crate) fn refusal(permissions: Permissions, op: &str) -> Option<String> {
    if !permissions.write && !is_read(op) {
        return Some(format!(
            "the credential is read-only: {op} is a write, which it does not allow"
        ));
    }
    if !permissions.list && LIST_OPS.contains(&op) {
        return Some(format!(
            "the credential does not allow listing: {op} is refused"
        ));
    }
    None
}

/// Reads the optional access level and list flag (`param_access`, `param_list` name them in
/// errors). `access`: `read` (also `read-only`) or `read-write` (the default); `list`: `true`
/// (the default) or `false`. Errors name the parameter and quote the value.
pub(crate) fn parse(
    access: Option<&str>,
    list: Option<&str>,
    param_access: &str,
    param_list: &str,
) -> Result<Permissions, String> {
    let write = match access.map(str::trim) {
        None | Some("read-write") => true,
        Some("read" | "read-only") => false,
        Some(other) => {
            return Err(format!(
                "{param_access} must be read, read-only or read-write, got {other:?}"
            ))
        }
    };
    let list = match list.map(str::trim) {
        None | Some("true") => true,
        Some("false") => false,
        Some(other) => return Err(format!("{param_list} must be true or false, got {other:?}")),
    };
    Ok(Permissions { write, list })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn read_only_allows_reads_and_lists_only() {
        let ro = Permissions::READ_ONLY;
        for op in [
            "GetObject",
            "HeadObject",
            "HeadBucket",
            "ListObjectsV2",
            "ListParts",
            "GetBucketLocation",
        ] {
            assert_eq!(refusal(ro, op), None, "{op}");
        }
        for op in [
            "PutObject",
            "CopyObject",
            "DeleteObject",
            "DeleteObjects",
            "CreateMultipartUpload",
            "UploadPart",
            "UploadPartCopy",
            "CompleteMultipartUpload",
            "AbortMultipartUpload",
            "CreateBucket",
        ] {
            let message = refusal(ro, op).expect(op);
            assert!(
                message.contains("read-only") && message.contains(op),
                "{message}"
            );
        }
        assert_eq!(refusal(Permissions::READ_WRITE, "PutObject"), None);
    }

    #[test]
    fn without_list_refuses_listings_only() {
        let no_list = Permissions::READ_WRITE.without_list();
        for op in LIST_OPS {
            let message = refusal(no_list, op).expect(op);
            assert_eq!(
                message,
                format!("the credential does not allow listing: {op} is refused")
            );
        }
        assert_eq!(refusal(no_list, "GetObject"), None);
        assert_eq!(refusal(no_list, "PutObject"), None);
        assert_eq!(refusal(no_list, "ListParts"), None);
    }

    #[test]
    fn parses_and_names_the_bad_parameter() {
        assert_eq!(
            parse(None, None, "access", "list"),
            Ok(Permissions::READ_WRITE)
        );
        assert_eq!(
            parse(Some("read"), Some("false"), "access", "list"),
            Ok(Permissions::READ_ONLY.without_list())
        );
        assert_eq!(
            parse(Some("read-only"), Some("true"), "access", "list"),
            Ok(Permissions::READ_ONLY)
        );
        assert_eq!(
            parse(Some("write"), None, "Access", "List"),
            Err("Access must be read, read-only or read-write, got \"write\"".into())
        );
        assert_eq!(
            parse(None, Some("no"), "access", "list"),
            Err("list must be true or false, got \"no\"".into())
        );
    }
}
