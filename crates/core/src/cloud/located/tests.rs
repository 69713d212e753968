//! Tests of [`super::LocatedStore`]'s locations and missing-bucket probe.

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
    Place {
        terms,
        bucket: "b".into(),
        bucket_seen: AtomicBool::new(false),
    }
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
        "LIST gs://b/dir/: 403 Forbidden: Access denied."
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
