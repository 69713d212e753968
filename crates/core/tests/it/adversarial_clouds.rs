//! Bad Azure and GCS input (issue 13, "Bad input"), as a hostile or careless catalog or user
//! would give it: each is refused when the store is opened with a clear
//! [`ErrorKind::InvalidOptions`]-kind error naming the offending option key, and neither the
//! message nor `Debug` of the error contains the secret. No server is contacted, except for a
//! SAS signed for another account, which only the server can tell (Azurite, skipped when it is
//! not installed): a clear credentials error, again without the signature.

use crate::emulators;

use bytes::Bytes;
use emulators::{account_sas, create_container, now_millis, start_azurite, AZURITE_ACCOUNT};
use vended_storage::{ObjectStoreRegistry, RefreshConfig, RegistryConfig, StorageOptions};

/// A value that must never appear in an error.
const SECRET: &str = "s3cr3tSIGNATUREzz";

fn opts(pairs: &[(&str, &str)]) -> StorageOptions {
    let mut o = StorageOptions::default();
    for (k, v) in pairs {
        o.insert(k.to_string(), v.to_string());
    }
    o
}

/// Opens `uri` with `options` and returns the error's text (Display and Debug).
fn refused(uri: &str, options: StorageOptions) -> String {
    let registry = ObjectStoreRegistry::new(RegistryConfig::default());
    match registry.open(uri, options, None, RefreshConfig::default()) {
        Ok(_) => panic!("{uri}: opened"),
        Err(e) => format!("{e} | {e:?} | kind {:?}", e.kind()),
    }
}

fn assert_names_key_not_secret(text: &str, key: &str) {
    assert!(text.contains(key), "the error does not name {key}: {text}");
    assert!(!text.contains(SECRET), "the error shows the secret: {text}");
}

#[test]
fn sas_without_se_names_the_key() {
    let sas = format!("sv=2022-11-02&sp=rw&sr=c&sig={SECRET}");
    let text = refused(
        "az://vended/p/",
        opts(&[
            ("azure_storage_account_name", "acct1"),
            ("azure_storage_sas_token", &sas),
        ]),
    );
    println!("{text}");
    assert_names_key_not_secret(&text, "azure_storage_sas_token");
}

#[test]
fn illegal_account_names_are_refused() {
    for name in [
        "A",
        "UPPERcase1",
        "has-dash",
        "way_too_long_account_name_x",
        "ab",
    ] {
        let text = refused(
            "az://vended/p/",
            opts(&[
                ("azure_storage_account_name", name),
                ("azure_storage_token", SECRET),
            ]),
        );
        println!("{text}");
        assert_names_key_not_secret(&text, "azure_storage_account_name");
    }
    let text = refused(
        "abfss://vended@Bad_Account.dfs.core.windows.net/p/",
        opts(&[("azure_storage_token", SECRET)]),
    );
    println!("{text}");
    assert!(!text.contains(SECRET), "{text}");
    assert!(text.contains("abfss"), "{text}");
}

#[test]
fn tokens_with_control_characters_name_the_key() {
    for bad in [
        format!("{SECRET}\r\nX-Injected: 1"),
        format!("{SECRET}\0"),
        format!("\t{SECRET}\u{7f}"),
    ] {
        let text = refused(
            "az://vended/p/",
            opts(&[
                ("azure_storage_account_name", "acct1"),
                ("azure_storage_token", &bad),
            ]),
        );
        println!("{text}");
        assert_names_key_not_secret(&text, "azure_storage_token");
        let sas = format!("se=2099-01-01T00:00:00Z&sig={bad}");
        let text = refused(
            "az://vended/p/",
            opts(&[
                ("azure_storage_account_name", "acct1"),
                ("azure_storage_sas_token", &sas),
            ]),
        );
        println!("{text}");
        assert_names_key_not_secret(&text, "azure_storage_sas_token");
        let text = refused("gs://bucket/p/", opts(&[("google_storage_token", &bad)]));
        println!("{text}");
        assert_names_key_not_secret(&text, "google_storage_token");
    }
}

#[test]
fn az_without_container_is_refused() {
    for uri in [
        "az://",
        "az:///p/",
        "abfss://@acct1.dfs.core.windows.net/p/",
    ] {
        let text = refused(
            uri,
            opts(&[
                ("azure_storage_account_name", "acct1"),
                ("azure_storage_token", SECRET),
            ]),
        );
        println!("{uri}: {text}");
        assert!(!text.contains(SECRET), "{text}");
        assert!(text.to_lowercase().contains("container"), "{uri}: {text}");
    }
}

/// A GCS OAuth2 token without `expires_at_millis` (under either key) is refused at open with
/// an InvalidOptions error naming the token key and `expires_at_millis`, saying why, and
/// showing the token neither in Display nor in Debug; with an expiry it opens and the store's
/// `Debug` does not show it; a malformed expiry is refused by name.
#[test]
fn gcs_token_without_expiry_is_a_clear_error() {
    for key in ["google_storage_token", "google_bearer_token"] {
        for extra in [None, Some(("expires_at_millis", ""))] {
            let mut o = opts(&[(key, SECRET)]);
            if let Some((k, v)) = extra {
                o.insert(k.into(), v.into());
            }
            let text = refused("gs://bucket/p/", o);
            println!("{text}");
            assert_names_key_not_secret(&text, key);
            assert!(text.contains("expires_at_millis"), "{text}");
            assert!(text.contains("within an hour"), "{text}");
            assert!(text.contains("gcs.oauth2.token-expires-at"), "{text}");
            assert!(text.contains("kind InvalidOptions"), "{text}");
        }
    }
    let registry = ObjectStoreRegistry::new(RegistryConfig::default());
    let expiry = (now_millis() + 3_600_000).to_string();
    let store = registry
        .open(
            "gs://bucket/p/",
            opts(&[
                ("google_storage_token", SECRET),
                ("expires_at_millis", &expiry),
            ]),
            None,
            RefreshConfig::default(),
        )
        .expect("a token with an expiry is a static credential");
    let debug = format!("{store:?}");
    assert!(!debug.contains(SECRET), "{debug}");
    let text = refused(
        "gs://bucket/p/",
        opts(&[
            ("google_storage_token", SECRET),
            ("expires_at_millis", "soon"),
        ]),
    );
    println!("{text}");
    assert_names_key_not_secret(&text, "expires_at_millis");
}

/// A SAS signed with another account's key: Azurite answers 403; the error says the
/// credentials were refused and never shows the signature.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sas_for_another_account_is_a_clear_credentials_error() {
    let Some(azurite) = start_azurite("adversarial_sas_other_account") else {
        return;
    };
    create_container(&azurite, "vended").await;
    let sas = account_sas(now_millis() + 3_600_000, true);
    let sig = url::form_urlencoded::parse(sas.as_bytes())
        .find(|(k, _)| k == "sig")
        .map(|(_, v)| v.into_owned())
        .expect("sig");
    let registry = ObjectStoreRegistry::new(RegistryConfig::default());
    let store = registry
        .open(
            "az://vended/p/",
            opts(&[
                ("azure_storage_use_emulator", "true"),
                ("azure_storage_endpoint", azurite.url.as_str()),
                ("azure_storage_account_name", AZURITE_ACCOUNT),
                ("azure_storage_sas_token", &sas),
            ]),
            None,
            RefreshConfig::default(),
        )
        .expect("the SAS is well formed");
    let e = store
        .put("o", Bytes::from_static(b"x"))
        .await
        .expect_err("Azurite accepted a SAS signed with another key");
    let text = format!("{e} | {e:?} | kind {:?}", e.kind());
    println!("{text}");
    assert!(
        !text.contains(&sig),
        "the error shows the signature: {text}"
    );
    let encoded: String = url::form_urlencoded::byte_serialize(sig.as_bytes()).collect();
    assert!(
        !text.contains(&encoded),
        "the error shows the signature: {text}"
    );
    assert_eq!(e.kind(), vended_storage::ErrorKind::Credentials, "{text}");
}
