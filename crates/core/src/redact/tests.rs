//! Tests of the scrubbing of known values and well-known patterns.

use super::*;

#[test]
fn known_values_are_scrubbed_in_every_form_and_by_part() {
    // The secret values of a store (see `cloud::secrets`): not its key id nor its region.
    let s = Scrubber::new(
        [
            "wJalrXUtnFEMI/K7MDENG+bPxRfiCY",
            "IQoJb3JpZ2luX2VjE/token+x==",
            "sv=2022-11-02&se=2026-12-08&sig=abcDEF123%2Bxyz%3D",
            "short",
        ],
        MIN_PART_LEN,
    );
    let text = "key wJalrXUtnFEMI/K7MDENG+bPxRfiCY token IQoJb3JpZ2luX2VjE%2Ftoken%2Bx%3D%3D \
                sig abcDEF123+xyz= and abcDEF123%2Bxyz%3D in us-east-1 by AKIDPRINTABLE1, short";
    let out = s.scrub_values(text);
    for secret in ["wJalrXUtnFEMI", "IQoJb3JpZ2luX2VjE", "abcDEF123"] {
        assert!(!out.contains(secret), "{secret} in {out}");
    }
    // Values of non-secret keys, short values and a SAS's non-secret parameters (when not
    // quoted as the whole SAS) stay.
    assert!(out.contains("us-east-1") && out.contains("AKIDPRINTABLE1") && out.contains("short"));
    assert_eq!(
        s.scrub_values("?se=2026-12-08&sv=2022-11-02&sig=abcDEF123%2Bxyz%3D"),
        "?se=2026-12-08&sv=2022-11-02&sig=***"
    );
    assert!(Scrubber::default().is_empty());
    assert_eq!(Scrubber::default().scrub_values("x"), "x");
}

#[test]
fn well_known_patterns_are_scrubbed() {
    let cases = [
        (
            "GET https://b.s3.amazonaws.com/k?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKID%2F2026&X-Amz-Signature=0123abcd&X-Amz-Security-Token=IQo%2Ftok ok",
            "GET https://b.s3.amazonaws.com/k?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=***&X-Amz-Signature=***&X-Amz-Security-Token=*** ok",
        ),
        (
            "blob https://a.blob.core.windows.net/c/k?sv=2022&se=2026&sig=AbC%2B1= denied",
            "blob https://a.blob.core.windows.net/c/k?sv=2022&se=2026&sig=*** denied",
        ),
        (
            "saw Authorization: AWS4-HMAC-SHA256 Credential=AKID/x, SignedHeaders=host, Signature=ff00\nnext line",
            "saw Authorization: ***\nnext line",
        ),
        ("got 'Bearer ya29.tok-en' from you", "got 'Bearer ***' from you"),
        (
            "<Error><Code>SignatureDoesNotMatch</Code><StringToSign>AWS4 x</StringToSign><SignatureProvided>ab12</SignatureProvided></Error>",
            "<Error><Code>SignatureDoesNotMatch</Code><StringToSign>***</StringToSign><SignatureProvided>***</SignatureProvided></Error>",
        ),
        ("x-amz-security-token: IQoJ tail", "x-amz-security-token: ***"),
        // Not a parameter: part of a longer name; and plain text without any pattern.
        ("mysig=keep designation=keep", "mysig=keep designation=keep"),
        ("GET s3://b/k: 403 AccessDenied: Access Denied", "GET s3://b/k: 403 AccessDenied: Access Denied"),
    ];
    for (text, expected) in cases {
        assert_eq!(scrub_patterns(text), expected, "{text}");
    }
    // Idempotent.
    let once = scrub_patterns(cases[0].0).into_owned();
    assert_eq!(scrub_patterns(&once), once);
}
