//! The HTTP client and retry settings as storage options: the same keys for every cloud, checked
//! when the store is opened with errors naming the key (no request is sent).

use vended_storage::{ErrorKind, ObjectStoreRegistry, RefreshConfig, RegistryConfig};

/// Static options that open a store of each cloud without any request.
fn base(uri: &str) -> Vec<(&'static str, &'static str)> {
    if uri.starts_with("s3://") {
        vec![
            ("aws_access_key_id", "AKID"),
            ("aws_secret_access_key", "SECRET-hunter2"),
            ("aws_region", "us-east-1"),
        ]
    } else if uri.starts_with("az://") {
        vec![
            ("azure_storage_account_name", "acct"),
            (
                "azure_storage_sas_token",
                "sv=2021-08-06&se=2099-01-01T00:00:00Z&sig=SECRETSIG",
            ),
        ]
    } else {
        vec![
            ("google_bearer_token", "SECRET-token"),
            ("expires_at_millis", "4102444800000"),
        ]
    }
}

fn open(uri: &str, extra: &[(&str, &str)]) -> vended_storage::Result<()> {
    let options = base(uri)
        .into_iter()
        .chain(extra.iter().copied())
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    ObjectStoreRegistry::new(RegistryConfig::default())
        .open(uri, options, None, RefreshConfig::default())
        .map(|_| ())
}

const URIS: [&str; 3] = ["s3://bucket/p", "az://container/p", "gs://bucket/p"];

#[test]
fn timeouts_and_retries_are_accepted_as_options_by_every_cloud() {
    for uri in URIS {
        open(
            uri,
            &[
                ("timeout", "45s"),
                ("connect_timeout", "2s"),
                ("max_retries", "3"),
                ("retry_timeout", "1m"),
                ("retry_init_backoff", "50ms"),
                ("retry_max_backoff", "5s"),
            ],
        )
        .unwrap_or_else(|e| panic!("{uri}: {e}"));
    }
}

#[test]
fn bad_timeouts_and_retries_are_rejected_by_name_on_every_cloud() {
    for uri in URIS {
        for (key, value) in [
            ("timeout", "soon"),
            ("connect_timeout", "0s"),
            ("max_retries", "-1"),
            ("retry_timeout", "30"),
            ("retry_max_backoff", "1ms"),
        ] {
            let extra = [(key, value), ("retry_init_backoff", "10ms")];
            let e = open(uri, &extra).expect_err(&format!("{uri} {key}={value}"));
            assert_eq!(e.kind(), ErrorKind::InvalidOptions, "{uri} {key}: {e}");
            let text = e.to_string();
            assert!(text.contains(&format!("'{key}'")), "{uri}: {text}");
            assert!(!text.contains("SECRET"), "{uri}: {text}");
        }
    }
}

/// A server on 127.0.0.1 that answers every request `503` and counts them.
async fn always_busy() -> (String, std::sync::Arc<std::sync::atomic::AtomicUsize>) {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let count = std::sync::Arc::new(AtomicUsize::new(0));
    let counter = count.clone();
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            let counter = counter.clone();
            tokio::spawn(async move {
                let mut buf = vec![0u8; 64 * 1024];
                let mut seen = Vec::new();
                while let Ok(n) = socket.read(&mut buf).await {
                    if n == 0 {
                        return;
                    }
                    seen.extend_from_slice(&buf[..n]);
                    // Requests here have no body: one request per header block.
                    while let Some(end) = seen.windows(4).position(|w| w == b"\r\n\r\n") {
                        seen.drain(..end + 4);
                        counter.fetch_add(1, Ordering::SeqCst);
                        let answer =
                            b"HTTP/1.1 503 Service Unavailable\r\ncontent-length: 0\r\n\r\n";
                        if socket.write_all(answer).await.is_err() {
                            return;
                        }
                    }
                }
            });
        }
    });
    (url, count)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_retry_count_given_as_an_option_is_used_by_every_cloud() {
    for uri in URIS {
        let (url, requests) = always_busy().await;
        let endpoint: Vec<(&str, &str)> = match &uri[..2] {
            "s3" => vec![("aws_endpoint", url.as_str()), ("aws_allow_http", "true")],
            "az" => vec![
                ("azure_storage_use_emulator", "true"),
                ("azure_storage_endpoint", url.as_str()),
            ],
            _ => vec![("google_base_url", url.as_str())],
        };
        let options = base(uri)
            .into_iter()
            .chain(endpoint)
            .chain([
                ("max_retries", "2"),
                ("retry_init_backoff", "1ms"),
                ("retry_max_backoff", "2ms"),
            ])
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let store = ObjectStoreRegistry::new(RegistryConfig::default())
            .open(uri, options, None, RefreshConfig::default())
            .unwrap();
        let e = store.head("obj").await.unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Transient, "{uri}: {e}");
        let n = requests.load(std::sync::atomic::Ordering::SeqCst);
        assert_eq!(
            n, 3,
            "{uri}: one request and max_retries=2 retries, got {n}"
        );
        // The store's own counters saw the same three attempts, each a throttled (503)
        // retryable failure, and no provider call (static credentials).
        let s = store.stats();
        assert_eq!(
            (s.requests, s.head, s.get, s.retryable_failures, s.throttled),
            (3, 3, 0, 3, 3),
            "{uri}: {s:?}"
        );
        assert_eq!(s.credential_refreshes, 0, "{uri}");
    }
}
