//! The emulator proxy's one-shot bit flips (tests/emulators/flip.rs), through Azurite and
//! fake-gcs-server with plain HTTP calls: a flipped request body reaches the emulator one bit
//! off, a flipped response body reaches the client one bit off (status and headers as the
//! emulator sent them), the next body passes intact, and each flip is counted. Skipped, with a
//! printed notice, where an emulator is not installed and `VENDED_STORAGE_SKIP_EMULATORS=1`.

use crate::emulators;

use std::sync::Arc;

use emulators::{
    account_sas, create_container, create_gcs_bucket, now_millis, start_azurite, start_fake_gcs,
    Proxy, TokenAuthority, AZURITE_ACCOUNT,
};

fn data(len: usize) -> Vec<u8> {
    (0..len).map(|i| (i * 17 + 3) as u8).collect()
}

/// The bits where `a` and `b` differ: `(byte, mask)`.
fn differing_bits(a: &[u8], b: &[u8]) -> Vec<(usize, u8)> {
    assert_eq!(a.len(), b.len());
    let mut out = Vec::new();
    for (i, (x, y)) in a.iter().zip(b).enumerate() {
        for bit in 0..8 {
            if (x ^ y) & (1 << bit) != 0 {
                out.push((i, 1 << bit));
            }
        }
    }
    out
}

async fn get(client: &reqwest::Client, url: &str, token: Option<&str>) -> Vec<u8> {
    let mut req = client.get(url).header("x-ms-version", "2021-08-06");
    if let Some(token) = token {
        req = req.bearer_auth(token);
    }
    let resp = req.send().await.unwrap();
    assert!(resp.status().is_success(), "GET {url}: {}", resp.status());
    resp.bytes().await.unwrap().to_vec()
}

#[tokio::test]
async fn proxy_flips_one_bit_of_an_azurite_request_and_response() {
    let Some(azurite) = start_azurite("proxy_flips_azurite") else {
        return;
    };
    create_container(&azurite, "flips").await;
    let proxy = Proxy::start(&azurite.url, None).await;
    let sas = account_sas(now_millis() + 600_000, false);
    let url = |base: &str, name: &str| format!("{base}/{AZURITE_ACCOUNT}/flips/{name}?{sas}");
    let client = reqwest::Client::new();
    let body = data(10_000);
    let put = |name: &str| {
        client
            .put(url(&proxy.url, name))
            .header("x-ms-blob-type", "BlockBlob")
            .header("x-ms-version", "2021-08-06")
            .body(body.clone())
            .send()
    };

    // Request side: Azurite stores what it received, one bit off (read back directly).
    proxy.flips.arm_request("flips/up.bin");
    assert_eq!(put("other.bin").await.unwrap().status(), 201);
    assert_eq!(proxy.flips.requests_flipped(), 0, "another path");
    assert_eq!(put("up.bin").await.unwrap().status(), 201);
    let stored = get(&client, &url(&azurite.url, "up.bin"), None).await;
    assert_eq!(differing_bits(&body, &stored), vec![(5000, 1)]);
    assert_eq!(put("up.bin").await.unwrap().status(), 201);
    let stored = get(&client, &url(&azurite.url, "up.bin"), None).await;
    assert!(stored == body, "one-shot");
    assert_eq!(proxy.flips.requests_flipped(), 1);

    // Response side: the client gets one bit off, then the intact body.
    proxy.flips.arm_response("flips/up.bin");
    let got = get(&client, &url(&proxy.url, "up.bin"), None).await;
    assert_eq!(differing_bits(&body, &got), vec![(5000, 1)]);
    let again = get(&client, &url(&proxy.url, "up.bin"), None).await;
    assert!(again == body, "one-shot");
    assert_eq!(proxy.flips.responses_flipped(), 1);
}

#[tokio::test]
async fn proxy_flips_one_bit_of_a_fake_gcs_request_and_response() {
    let Some(gcs) = start_fake_gcs("proxy_flips_gcs") else {
        return;
    };
    create_gcs_bucket(&gcs, "flips").await;
    let authority = Arc::new(TokenAuthority::default());
    let proxy = Proxy::start(&gcs.url, Some(authority.clone())).await;
    let token = authority.issue(now_millis() + 600_000);
    let client = reqwest::Client::new();
    let body = data(4097);
    let object = |base: &str| format!("{base}/flips/dir/object.bin");
    let put = || {
        client
            .put(object(&proxy.url))
            .bearer_auth(&token)
            .body(body.clone())
            .send()
    };

    proxy.flips.arm_request("/flips/dir/object.bin");
    let status = put().await.unwrap().status();
    assert!(status.is_success(), "{status}");
    let stored = get(&client, &object(&gcs.url), None).await;
    assert_eq!(differing_bits(&body, &stored), vec![(2048, 1)]);
    assert_eq!(proxy.flips.requests_flipped(), 1);

    assert!(put().await.unwrap().status().is_success());
    proxy.flips.arm_response("/flips/dir/object.bin");
    let got = get(&client, &object(&proxy.url), Some(&token)).await;
    assert_eq!(differing_bits(&body, &got), vec![(2048, 1)]);
    let again = get(&client, &object(&proxy.url), Some(&token)).await;
    assert!(again == body, "one-shot");
    assert_eq!(proxy.flips.responses_flipped(), 1);
    assert_eq!(proxy.flips.requests_flipped(), 1);
}
