//! The HTTP clients of every cloud store, shared, and the server clock they observe.
//!
//! - [`SharedHttpConnector`]: an `object_store` [`HttpConnector`] that hands out one HTTP client
//!   per distinct set of transport options (timeouts, proxy, allow-http, certificates policy,
//!   HTTP/2 settings...), so that opening a store builds no new `reqwest` client (which loads
//!   the system certificate store, milliseconds) and stores to the same endpoint share
//!   connections. At most [`MAX_CLIENTS`] clients are kept.
//! - Server clock: every response's `Date` header (RFC 9110 §6.6.1 / RFC 7231 §7.1.1.2
//!   IMF-fixdate, second precision) is recorded as a process-wide estimate of how far the
//!   endpoint's clock is from the local one: [`server_clock_offset_millis`]. Skew is a property
//!   of the local clock against the endpoint, not of a store, so one estimate serves every
//!   credential refresher.

use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use async_trait::async_trait;
use object_store::client::{
    HttpClient, HttpConnector, HttpError, HttpRequest, HttpResponse, HttpService, ReqwestConnector,
};
use object_store::{ClientConfigKey, ClientOptions};
use once_cell::sync::Lazy;

/// Most distinct HTTP clients kept by [`SharedHttpConnector`] (least recently used dropped).
pub const MAX_CLIENTS: u64 = 64;

/// Every client option key of `object_store` 0.14 (its [`ClientConfigKey`]); the values of all
/// of them decide which shared client a store gets.
const CLIENT_KEYS: [ClientConfigKey; 20] = [
    ClientConfigKey::AllowHttp,
    ClientConfigKey::AllowInvalidCertificates,
    ClientConfigKey::NoSystemCertificates,
    ClientConfigKey::ConnectTimeout,
    ClientConfigKey::DefaultContentType,
    ClientConfigKey::Http1Only,
    ClientConfigKey::Http2KeepAliveInterval,
    ClientConfigKey::Http2KeepAliveTimeout,
    ClientConfigKey::Http2KeepAliveWhileIdle,
    ClientConfigKey::Http2MaxFrameSize,
    ClientConfigKey::Http2Only,
    ClientConfigKey::PoolIdleTimeout,
    ClientConfigKey::PoolMaxIdlePerHost,
    ClientConfigKey::ProxyUrl,
    ClientConfigKey::ProxyCaCertificate,
    ClientConfigKey::ProxyExcludes,
    ClientConfigKey::RandomizeAddresses,
    ClientConfigKey::ReadTimeout,
    ClientConfigKey::Timeout,
    ClientConfigKey::UserAgent,
];

type TransportKey = Vec<Option<String>>;

static CLIENTS: Lazy<moka::sync::Cache<TransportKey, HttpClient>> = Lazy::new(|| {
    moka::sync::Cache::builder()
        .max_capacity(MAX_CLIENTS)
        .build()
});

/// An [`HttpConnector`] sharing one HTTP client between all stores whose client options are
/// equal. Each client reports the server clock of its responses (see the module docs).
///
/// Only for stores configured through option keys (every [`ClientConfigKey`]): options set
/// through `ClientOptions` methods that have no key (root certificates, default headers) are
/// not part of the sharing decision, and this library sets none.
#[derive(Debug, Default, Clone, Copy)]
pub struct SharedHttpConnector;

impl HttpConnector for SharedHttpConnector {
    fn connect(&self, options: &ClientOptions) -> object_store::Result<HttpClient> {
        let key: TransportKey = CLIENT_KEYS
            .iter()
            .map(|k| options.get_config_value(k))
            .collect();
        if let Some(client) = CLIENTS.get(&key) {
            return Ok(client);
        }
        // Two stores opened at once may both build; one client wins, the other is dropped.
        let client = HttpClient::new(DateObservingService {
            id: NEXT_CLIENT_ID.fetch_add(1, Ordering::Relaxed),
            inner: ReqwestConnector::default().connect(options)?,
        });
        CLIENTS.insert(key, client.clone());
        Ok(client)
    }
}

/// How many distinct HTTP clients [`SharedHttpConnector`] holds now (approximate: the cache
/// settles evictions lazily).
pub fn shared_client_count() -> u64 {
    CLIENTS.run_pending_tasks();
    CLIENTS.entry_count()
}

static NEXT_CLIENT_ID: AtomicU64 = AtomicU64::new(1);

/// Passes requests to `inner` and records each response's `Date` header.
struct DateObservingService {
    /// Distinguishes shared clients in `Debug` output.
    id: u64,
    inner: HttpClient,
}

impl std::fmt::Debug for DateObservingService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SharedHttpClient")
            .field("id", &self.id)
            .finish_non_exhaustive()
    }
}

#[async_trait]
impl HttpService for DateObservingService {
    async fn call(&self, req: HttpRequest) -> Result<HttpResponse, HttpError> {
        let response = self.inner.execute(req).await?;
        if let Some(server) = response
            .headers()
            .get("date")
            .and_then(|v| v.to_str().ok())
            .and_then(|v| httpdate::parse_http_date(v).ok())
        {
            if let (Some(server), Some(local)) =
                (epoch_millis(server), epoch_millis(SystemTime::now()))
            {
                // The header is truncated to the second: the server's clock was somewhere in
                // [server, server + 1000) ms when it answered, so the middle is the estimate.
                observe_server_time(server + 500, local);
            }
        }
        Ok(response)
    }
}

fn epoch_millis(t: SystemTime) -> Option<i64> {
    t.duration_since(UNIX_EPOCH)
        .ok()
        .and_then(|d| i64::try_from(d.as_millis()).ok())
}

/// No observation yet.
const UNKNOWN: i64 = i64::MIN;

static OFFSET_MILLIS: AtomicI64 = AtomicI64::new(UNKNOWN);

/// Records that the endpoint's clock read `server_millis` (epoch milliseconds) when the local
/// clock read `local_millis` (epoch milliseconds). Called for every HTTP response with a
/// `Date` header; the latest observation wins.
pub fn observe_server_time(server_millis: i64, local_millis: i64) {
    let offset = server_millis.saturating_sub(local_millis);
    // `UNKNOWN` is reserved for "no observation".
    OFFSET_MILLIS.store(offset.max(UNKNOWN + 1), Ordering::Relaxed);
}

/// How far the endpoints' clock is ahead of the local clock, in milliseconds (negative: the
/// local clock is fast), from the latest HTTP response with a `Date` header; `None` before
/// any. Accurate to about ±500 ms plus the response's network latency (the header has second
/// precision). A credential refresher adds it to its local clock to judge expiry as the
/// endpoint will.
pub fn server_clock_offset_millis() -> Option<i64> {
    match OFFSET_MILLIS.load(Ordering::Relaxed) {
        UNKNOWN => None,
        offset => Some(offset),
    }
}

/// The shared connector as the `Arc` `object_store` builders take.
pub fn shared_connector() -> Arc<SharedHttpConnector> {
    Arc::new(SharedHttpConnector)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_options_share_one_client_and_different_ones_do_not() {
        // A user agent of its own keeps this test's clients apart from other tests'.
        let base = || {
            ClientOptions::new()
                .with_allow_http(true)
                .with_config(ClientConfigKey::UserAgent, "shared-connector-test")
        };
        let a = SharedHttpConnector.connect(&base()).unwrap();
        let b = SharedHttpConnector.connect(&base()).unwrap();
        let c = SharedHttpConnector
            .connect(&base().with_config(ClientConfigKey::Timeout, "7s"))
            .unwrap();
        // The Debug output names the shared client's id.
        let id = |c: &HttpClient| {
            let text = format!("{c:?}");
            let start = text.find("id: ").expect("id in Debug") + 4;
            text[start..].split(',').next().unwrap().to_string()
        };
        assert_eq!(id(&a), id(&b));
        assert_ne!(id(&a), id(&c));
    }

    #[test]
    fn observed_offset_is_server_minus_local() {
        observe_server_time(10_000, 4_000);
        assert_eq!(server_clock_offset_millis(), Some(6_000));
        observe_server_time(1_000, 31_000);
        assert_eq!(server_clock_offset_millis(), Some(-30_000));
        observe_server_time(i64::MIN, i64::MAX);
        assert!(server_clock_offset_millis().is_some());
    }
}
