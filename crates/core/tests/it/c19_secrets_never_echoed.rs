//! C19: URIs carrying secrets, misspelled and uppercase secret keys. Each is a clear error
//! naming the key or URI part; no error, `Debug`, `Display` or log line contains the secret;
//! what is printed is decided by the allow-list of non-secret keys.

use crate::common;

use common::{registry, BUCKET};
use vended_storage::options::{is_secret_key, Redacted};
use vended_storage::{ErrorKind, RefreshConfig, StorageOptions};

const SECRET: &str = "SECRET-c19-hunter2";

fn opts(pairs: &[(&str, &str)]) -> StorageOptions {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

fn base() -> StorageOptions {
    opts(&[
        ("aws_endpoint", "http://127.0.0.1:9"),
        ("aws_allow_http", "true"),
        ("aws_access_key_id", "AKIDC19"),
        ("aws_secret_access_key", "good-secret"),
    ])
}

#[test]
fn c19_secret_inputs_are_named_errors_and_never_printed() {
    common::logs::capture();
    let reg = registry();
    let mut printed = Vec::new();

    // URIs: the error names the URI part.
    for (uri, part) in [
        (
            format!("s3://{BUCKET}/p/?X-Amz-Security-Token={SECRET}"),
            "query",
        ),
        (format!("s3://AKID:{SECRET}@{BUCKET}/p"), "user info"),
    ] {
        let e = reg
            .open(&uri, base(), None, RefreshConfig::default())
            .expect_err(&uri);
        assert_eq!(e.kind(), ErrorKind::InvalidOptions);
        assert!(e.to_string().contains(part), "{e}");
        printed.push(format!("{e} {e:?}"));
    }

    // Keys: the error names the key and suggests the right one; the value never appears.
    for (key, hint) in [
        ("aws_session_tokn", "aws_session_token"),
        ("aws_secret_access_keyy", "aws_secret_access_key"),
        ("AWS_SECRET_ACCESS_KEY", "aws_secret_access_key"),
        ("aws_token", "aws_session_token"),
        ("expires_at_milis", "expires_at_millis"),
    ] {
        let mut o = base();
        o.insert(key.into(), SECRET.into());
        assert!(is_secret_key(key), "{key} prints as ***");
        let shown = format!("{} {:?}", Redacted(&o), Redacted(&o));
        assert!(shown.contains(key) && shown.contains("***"), "{shown}");
        printed.push(shown);
        let e = reg
            .open(
                &format!("s3://{BUCKET}/p"),
                o,
                None,
                RefreshConfig::default(),
            )
            .expect_err(key);
        assert_eq!(e.kind(), ErrorKind::InvalidOptions);
        let text = e.to_string();
        assert!(
            text.contains(&format!("'{key}'")) && text.contains(&format!("did you mean '{hint}'?")),
            "{text}"
        );
        printed.push(format!("{e} {e:?}"));
    }

    // An unknown key of another layer is kept, but its value only ever appears as a
    // fingerprint or ***.
    let mut o = base();
    o.insert("x-api-key".into(), SECRET.into());
    let store = reg
        .open(
            &format!("s3://{BUCKET}/p"),
            o.clone(),
            None,
            RefreshConfig::default(),
        )
        .unwrap();
    printed.push(format!("{store:?} {:?} {}", store.key(), Redacted(&o)));

    printed.extend(common::logs::records());
    for text in &printed {
        assert!(!text.contains(SECRET), "secret leaked in: {text}");
    }
}
