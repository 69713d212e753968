//! End-to-end checksums on Azure (Azurite) and GCS (fake-gcs-server), with the emulator proxy
//! flipping one bit of a response or request body: the library catches each flip with
//! checksums on, and hands the flipped bytes on (or stores them) with checksums off, so the
//! tests cannot pass by accident. Skipped, with a printed notice, where an emulator is not
//! installed.

use crate::emulators;

use bytes::Bytes;
use emulators::{
    account_sas, create_container, create_gcs_bucket, now_millis, start_azurite, start_fake_gcs,
    Proxy, TokenAuthority, AZURITE_ACCOUNT,
};
use vended_storage::{
    ObjectStoreRegistry, RefreshConfig, RegistryConfig, StorageOptions, VendedStore,
};

fn data(len: usize) -> Bytes {
    (0..len)
        .map(|i| (i * 31 + 7) as u8)
        .collect::<Vec<u8>>()
        .into()
}

fn open(uri: &str, mut options: StorageOptions, checksums: bool) -> VendedStore {
    options.insert("checksums".into(), checksums.to_string());
    ObjectStoreRegistry::new(RegistryConfig::default())
        .open(uri, options, None, RefreshConfig::default())
        .unwrap()
}

/// The flips one store (checksums on) and its control (off) see through `proxy`, at `prefix`.
async fn flips_are_caught(
    proxy: &Proxy,
    on: &VendedStore,
    off: &VendedStore,
    path_of: impl Fn(&str) -> String,
) {
    let src = data(1 << 20);
    on.put("r.bin", src.clone()).await.unwrap();
    let before = on.stats();
    assert_eq!(on.get("r.bin").await.unwrap(), src);
    assert_eq!(on.stats().checksums_matched - before.checksums_matched, 1);

    // A flipped response: caught, read again, the right bytes returned.
    proxy.flips.arm_response(&path_of("on/r.bin"));
    assert_eq!(on.get("r.bin").await.unwrap(), src, "read again, intact");
    assert_eq!(on.stats().checksum_mismatches, 1);
    assert_eq!(proxy.flips.responses_flipped(), 1);

    // The control: the flipped bytes are handed on without checksums.
    off.put("r.bin", src.clone()).await.unwrap();
    proxy.flips.arm_response(&path_of("off/r.bin"));
    assert_ne!(
        off.get("r.bin").await.unwrap(),
        src,
        "handed on one bit off"
    );
    assert_eq!(proxy.flips.responses_flipped(), 2);

    // A flipped request: the service verifies the checksum the client sent and refuses.
    proxy.flips.arm_request(&path_of("on/w.bin"));
    let e = on.put("w.bin", src.clone()).await.unwrap_err();
    eprintln!("flipped write refused: {e}");
    assert!(on.head("w.bin").await.is_err(), "nothing stored");
    proxy.flips.arm_request(&path_of("off/w.bin"));
    off.put("w.bin", src.clone()).await.unwrap();
    assert_ne!(off.get("w.bin").await.unwrap(), src, "stored one bit off");
    assert_eq!(proxy.flips.requests_flipped(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn azure_flipped_bits_are_caught_with_content_md5() {
    let Some(azurite) = start_azurite("integrity_azure") else {
        return;
    };
    create_container(&azurite, "integrity").await;
    let proxy = Proxy::start(&azurite.url, None).await;
    let options = |sas: String| -> StorageOptions {
        [
            ("azure_storage_use_emulator", "true".to_string()),
            ("azure_storage_endpoint", proxy.url.clone()),
            ("azure_storage_account_name", AZURITE_ACCOUNT.to_string()),
            ("azure_storage_sas_token", sas),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect()
    };
    let sas = account_sas(now_millis() + 600_000, false);
    let on = open("az://integrity/on", options(sas.clone()), true);
    let off = open("az://integrity/off", options(sas), false);
    flips_are_caught(&proxy, &on, &off, |p| format!("integrity/{p}")).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gcs_flipped_bits_are_caught_with_crc32c() {
    let Some(gcs) = start_fake_gcs("integrity_gcs") else {
        return;
    };
    create_gcs_bucket(&gcs, "integrity").await;
    // GCS mode (a token authority): the proxy also serves the XML-API PUT fake-gcs lacks.
    let authority = std::sync::Arc::new(TokenAuthority::default());
    let proxy = Proxy::start(&gcs.url, Some(authority.clone())).await;
    let expires = now_millis() + 600_000;
    let token = authority.issue(expires);
    let options = || -> StorageOptions {
        [
            ("google_base_url", proxy.url.clone()),
            ("google_storage_token", token.clone()),
            ("expires_at_millis", expires.to_string()),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect()
    };
    let on = open("gs://integrity/on", options(), true);
    let off = open("gs://integrity/off", options(), false);
    // object_store sends GCS object names with `/` and `.` percent-encoded. fake-gcs-server
    // does not verify `x-goog-hash` on uploads; the proxy does, as GCS does.
    flips_are_caught(&proxy, &on, &off, |p| {
        p.replace('/', "%2F").replace('.', "%2E")
    })
    .await;
}
