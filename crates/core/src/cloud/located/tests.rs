//! Tests of [`super::LocatedStore`]'s locations, missing-bucket probe and refused-permission
//! wording.

use super::*;

#[derive(Debug)]
struct Answer(&'static str);
impl fmt::Display for Answer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0)
    }
}
impl std::error::Error for Answer {}

fn place(terms: CloudTerms) -> Place {
    Place::new(terms, "b")
}

fn not_found(text: &'static str) -> object_store::Error {
    object_store::Error::NotFound {
        path: "k".into(),
        source: Box::new(Answer(text)),
    }
}

#[test]
fn a_redacted_azure_url_becomes_the_az_location_and_the_code_tells_what_is_missing() {
    let p = place(crate::cloud::azure::builder::TERMS);
    let e = p.locate(
        not_found("Error performing GET REDACTED in 1ms - Server returned non-2xx status code: 404 Not Found: <?xml version=\"1.0\"?><Error><Code>ContainerNotFound</Code><Message>The specified container does not exist.\nRequestId:1</Message></Error>"),
        "a/k",
        None,
    );
    assert!(matches!(e, object_store::Error::NotFound { .. }));
    assert_eq!(
        crate::Error::from(e).to_string(),
        "GET az://b/a/k: 404 ContainerNotFound: container 'b' does not exist"
    );
    assert!(!p.bucket_seen.load(Ordering::Relaxed));
    let e = p.locate(
        not_found("Error performing GET REDACTED in 1ms - Server returned non-2xx status code: 404 Not Found: <Error><Code>BlobNotFound</Code><Message>The specified blob does not exist.</Message></Error>"),
        "a/k",
        None,
    );
    assert_eq!(
        crate::Error::from(e).to_string(),
        "GET az://b/a/k: 404 BlobNotFound: no object at az://b/a/k"
    );
    assert!(
        p.bucket_seen.load(Ordering::Relaxed),
        "a missing blob proves the container"
    );
}

#[test]
fn a_gcs_json_error_is_read_and_the_percent_encoded_url_replaced() {
    let p = place(crate::cloud::gcp::builder::TERMS);
    let e = p.locate(
        not_found(r#"Error performing GET http://127.0.0.1:1/storage/v1/b/b/o/a%2Fk?alt=json in 1ms - Server returned non-2xx status code: 404 Not Found: {"error":{"code":404,"message":"The specified bucket does not exist.","errors":[{"domain":"global","reason":"notFound","message":"The specified bucket does not exist."}]}}"#),
        "a/k",
        None,
    );
    assert_eq!(
        crate::Error::from(e).to_string(),
        "GET gs://b/a/k: 404 notFound: bucket 'b' does not exist"
    );
    let e = object_store::Error::Generic {
        store: "GCS",
        source: Box::new(Answer(
            r#"Error performing GET http://127.0.0.1:1/b?list-type=2 in 1ms - Server returned non-2xx status code: 403 Forbidden: {"error":{"code":403,"message":"Access denied."}}"#,
        )),
    };
    let e = crate::Error::from(p.locate(e, "dir/", Some("LIST")));
    assert_eq!(
        e.to_string(),
        format!("LIST gs://b/dir/: 403 Forbidden: {NO_LISTING}: Access denied.")
    );
    assert_eq!(e.kind(), crate::ErrorKind::Credentials);
}

#[test]
fn a_head_404_without_a_code_says_nothing_missing_until_told() {
    let p = place(crate::cloud::aws::builder::TERMS);
    let e = p.locate(
        not_found("Error performing HEAD http://127.0.0.1:1/b/k in 1ms - Server returned non-2xx status code: 404 Not Found: "),
        "k",
        None,
    );
    assert_eq!(
        crate::Error::from(e).to_string(),
        "HEAD s3://b/k: 404 Not Found (an answer to HEAD carries no error code)"
    );
}

fn denied(method: &str, answer: &str) -> object_store::Error {
    object_store::Error::PermissionDenied {
        path: "k".into(),
        source: Box::new(Text(format!(
            "Error performing {method} http://127.0.0.1:1/b/k in 1ms - Server returned non-2xx status code: {answer}"
        ))),
    }
}

#[derive(Debug)]
struct Text(String);
impl fmt::Display for Text {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}
impl std::error::Error for Text {}

/// `(message, kind)` of `e` located at `k` with `operation`.
fn located(
    p: &Place,
    e: object_store::Error,
    operation: Option<&'static str>,
) -> (String, crate::ErrorKind) {
    let e = crate::Error::from(p.locate(e, "k", operation));
    (e.to_string(), e.kind())
}

#[test]
fn a_write_or_listing_refused_a_permission_says_the_credential_does_not_allow_it() {
    use crate::ErrorKind::Credentials;
    let s3 = place(crate::cloud::aws::builder::TERMS);
    let access_denied = "403 Forbidden: <Error><Code>AccessDenied</Code><Message>the credential is read-only</Message></Error>";
    for method in ["PUT", "POST", "DELETE"] {
        assert_eq!(
            located(&s3, denied(method, access_denied), None),
            (
                format!(
                    "{method} s3://b/k: 403 AccessDenied: {NO_WRITES}: the credential is read-only"
                ),
                Credentials
            )
        );
    }
    assert_eq!(
        located(&s3, denied("PUT", access_denied), Some("COPY")).0,
        format!("COPY s3://b/k: 403 AccessDenied: {NO_WRITES}: the credential is read-only")
    );
    assert_eq!(
        located(&s3, denied("GET", access_denied), Some("LIST")),
        (
            format!("LIST s3://b/k: 403 AccessDenied: {NO_LISTING}: the credential is read-only"),
            Credentials
        )
    );
    // Located twice (the probe path), said once.
    let twice = s3.locate(
        s3.locate(denied("PUT", access_denied), "k", None),
        "k",
        None,
    );
    assert_eq!(
        crate::Error::from(twice).to_string(),
        format!("PUT s3://b/k: 403 AccessDenied: {NO_WRITES}: the credential is read-only")
    );
    // A read refused keeps the endpoint's words; so do rejected credentials.
    assert_eq!(
        located(&s3, denied("GET", access_denied), None).0,
        "GET s3://b/k: 403 AccessDenied: the credential is read-only"
    );
    for answer in [
        "403 Forbidden: <Error><Code>InvalidAccessKeyId</Code><Message>unknown</Message></Error>",
        "400 Bad Request: <Error><Code>ExpiredToken</Code><Message>expired</Message></Error>",
        "403 Forbidden: <Error><Code>SignatureDoesNotMatch</Code><Message>bad</Message></Error>",
    ] {
        let (message, _) = located(&s3, denied("PUT", answer), None);
        assert!(!message.contains("does not allow"), "{message}");
    }

    let az = place(crate::cloud::azure::builder::TERMS);
    assert_eq!(
        located(&az, denied("PUT", "403 Forbidden: <Error><Code>AuthorizationPermissionMismatch</Code><Message>This request is not authorized to perform this operation using this permission.</Message></Error>"), None).0,
        format!("PUT az://b/k: 403 AuthorizationPermissionMismatch: {NO_WRITES}: This request is not authorized to perform this operation using this permission.")
    );
    let (message, _) = located(
        &az,
        denied("PUT", "403 Forbidden: <Error><Code>AuthenticationFailed</Code><Message>Signature did not match</Message></Error>"),
        None,
    );
    assert!(!message.contains("does not allow"), "{message}");

    let gs = place(crate::cloud::gcp::builder::TERMS);
    assert_eq!(
        located(&gs, denied("POST", r#"403 Forbidden: {"error":{"code":403,"message":"no storage.objects.create access"}}"#), None).0,
        format!("POST gs://b/k: 403 Forbidden: {NO_WRITES}: no storage.objects.create access")
    );
    let (message, _) = located(&gs, denied("PUT", "401 Unauthorized: "), None);
    assert!(!message.contains("does not allow"), "{message}");
}

#[test]
fn a_server_refusing_checksum_headers_is_told_which_option_turns_them_off() {
    let p = place(crate::cloud::aws::builder::TERMS);
    let generic = |text: &'static str| object_store::Error::Generic {
        store: "S3",
        source: Box::new(Answer(text)),
    };
    let e = crate::Error::from(p.locate(
        generic("Error performing PUT http://127.0.0.1:1/b/k in 1ms - Server returned non-2xx status code: 400 Bad Request: <Error><Code>InvalidArgument</Code><Message>x-amz-checksum-crc64nvme is not supported</Message></Error>"),
        "k",
        None,
    ));
    assert!(e.to_string().contains(CHECKSUMS_HINT), "{e}");
    assert!(e.to_string().contains("checksums=false"), "{e}");
    // A checksum mismatch is the checksum doing its job: no hint.
    let e = crate::Error::from(p.locate(
        generic("Error performing PUT http://127.0.0.1:1/b/k in 1ms - Server returned non-2xx status code: 400 Bad Request: <Error><Code>BadDigest</Code><Message>The crc64nvme checksum you specified did not match the calculated checksum</Message></Error>"),
        "k",
        None,
    ));
    assert!(!e.to_string().contains(CHECKSUMS_HINT), "{e}");
    let e = crate::Error::from(p.locate(
        generic("Error performing PUT http://127.0.0.1:1/b/k in 1ms - Server returned non-2xx status code: 501 Not Implemented: <Error><Code>NotImplemented</Code><Message>A header you provided implies functionality that is not implemented</Message></Error>"),
        "k",
        None,
    ));
    assert!(e.to_string().contains(CHECKSUMS_HINT), "{e}");
}
