//! The HTTP clients of every cloud store, shared, and the server clock they observe.
//!
//! - [`SharedHttpConnector`]: an `object_store` [`HttpConnector`] that hands out one HTTP client
//!   per distinct set of transport options (timeouts, proxy, allow-http, certificates policy,
//!   HTTP/2 settings...), so that opening a store builds no new `reqwest` client (which loads
//!   the system certificate store, milliseconds) and stores to the same endpoint share
//!   connections. At most [`MAX_CLIENTS`] clients are kept. A caller-driven read (the `io`
//!   module's blocking reader) gets a connection of its own instead, from a client of
//!   the same options that keeps no idle connection (HTTP/1.1), so that the connection lives on
//!   the reader's runtime and closes with the response.
//! - Server clock: every response's `Date` header (RFC 9110 §6.6.1 / RFC 7231 §7.1.1.2
//!   IMF-fixdate, second precision) is reported to the store's credential refresher
//!   ([`RefresherHandle::observe_server_time`]) with the local times the request was sent and
//!   its answer read, so each sample bounds the clock offset; the refresher judges expiry by
//!   the endpoint's clock only when agreeing samples prove it off by more than a couple of
//!   seconds (case C23).
//! - Counters and audit: every attempt is counted in the store's [`RequestCounters`], and
//!   carries the audit context of its operation ([`crate::audit`]) in its `User-Agent`.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use async_trait::async_trait;
use object_store::client::{
    HttpClient, HttpConnector, HttpError, HttpErrorKind, HttpRequest, HttpResponse, HttpService,
    ReqwestConnector,
};
use object_store::{ClientConfigKey, ClientOptions, HeaderMap};
use once_cell::sync::{Lazy, OnceCell};
use reqwest::header::USER_AGENT;

use crate::cloud::integrity::{self, Rules};
use crate::cloud::requests::RequestCounters;
use crate::driven;
use crate::refresh::RefresherHandle;

pub(crate) mod condition;

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

static CLIENTS: Lazy<moka::sync::Cache<TransportKey, (u64, HttpClient)>> = Lazy::new(|| {
    moka::sync::Cache::builder()
        .max_capacity(MAX_CLIENTS)
        .build()
});

/// An [`HttpConnector`] sharing one HTTP client between all stores whose client options are
/// equal, and reporting the server clock of every response (its `Date` header) to the store's
/// credential refresher, if it has one (see the module docs). Building one is cheap: two
/// `Arc` clones.
///
/// Only for stores configured through option keys (every [`ClientConfigKey`]): options set
/// through `ClientOptions` methods that have no key (root certificates, default headers) are
/// not part of the sharing decision, and this library sets none.
#[derive(Debug, Default, Clone)]
pub struct SharedHttpConnector {
    observer: Option<Arc<dyn RefresherHandle>>,
    counters: Arc<RequestCounters>,
    integrity: Option<&'static Rules>,
}

impl SharedHttpConnector {
    /// A connector whose responses' `Date` headers reach `observer` (the store's refresher;
    /// `None` for stores with static credentials, which have no expiry to judge).
    pub fn new(observer: Option<Arc<dyn RefresherHandle>>) -> Self {
        Self {
            observer,
            counters: Arc::default(),
            integrity: None,
        }
    }

    /// The connector with end-to-end checksums by the cloud's `rules` (see
    /// [`crate::cloud::integrity`]): write checksums added before each request is sent, and
    /// whole-object reads checked against the stored checksum.
    pub fn with_integrity(mut self, rules: &'static Rules) -> Self {
        self.integrity = Some(rules);
        self
    }

    /// The request counters of every client this connector hands out (the store's; see
    /// [`RequestCounters`]).
    pub fn counters(&self) -> Arc<RequestCounters> {
        self.counters.clone()
    }
}

/// The `User-Agent` of a store without a `user_agent` option, when an audit context is added.
const DEFAULT_USER_AGENT: &str = concat!("vended-storage/", env!("CARGO_PKG_VERSION"));

impl HttpConnector for SharedHttpConnector {
    fn connect(&self, options: &ClientOptions) -> object_store::Result<HttpClient> {
        let (_, pooled) = shared_client(options)?;
        Ok(HttpClient::new(StoreHttpService {
            pooled,
            options: options.clone(),
            own: OnceCell::new(),
            wait: network_wait(options),
            observer: self.observer.clone(),
            counters: self.counters.clone(),
            integrity: self.integrity,
            user_agent: options
                .get_config_value(&ClientConfigKey::UserAgent)
                .unwrap_or_else(|| DEFAULT_USER_AGENT.to_string()),
        }))
    }
}

/// The client options for requests on connections of their own: the same transport settings,
/// HTTP/1.1 (one request per connection, never multiplexed), no idle connection kept, and
/// neither a total-request nor a socket read timeout: a caller-driven body is read at the
/// caller's pace (a scan of a 40 GB object, a task working between reads) and must not be cut
/// while the caller is busy elsewhere. The reader bounds each of its waits for the network
/// instead, by [`network_wait`].
fn own_connection_options(options: &ClientOptions) -> ClientOptions {
    options
        .clone()
        .with_timeout_disabled()
        .with_read_timeout_disabled()
        .with_config(ClientConfigKey::PoolMaxIdlePerHost, "0")
        .with_config(ClientConfigKey::Http1Only, "true")
        .with_config(ClientConfigKey::Http2Only, "false")
}

/// The longest a caller-driven read waits for the network: the store's `read_timeout` if set,
/// else its `timeout` (`object_store`'s default: 30 s); `None` when the timeout is disabled.
fn network_wait(options: &ClientOptions) -> Option<Duration> {
    let value = options
        .get_config_value(&ClientConfigKey::ReadTimeout)
        .or_else(|| options.get_config_value(&ClientConfigKey::Timeout))?;
    // Values come back as `object_store` formats them (humantime); it parsed them first.
    Some(humantime::parse_duration(&value).unwrap_or(DEFAULT_NETWORK_WAIT))
}

/// `object_store`'s default request timeout.
const DEFAULT_NETWORK_WAIT: Duration = Duration::from_secs(30);

/// The shared client for `options` and its number (distinct clients have distinct numbers).
fn shared_client(options: &ClientOptions) -> object_store::Result<(u64, HttpClient)> {
    let key: TransportKey = CLIENT_KEYS
        .iter()
        .map(|k| options.get_config_value(k))
        .collect();
    if let Some(found) = CLIENTS.get(&key) {
        return Ok(found);
    }
    // Two stores opened at once may both build; one client wins, the other is dropped. The
    // shared client has no default headers: the stores that set some (S3's checksum mode) add
    // them to each request before signing, and a client shared with a store without them
    // must not send them unsigned.
    let bare = options.clone().with_default_headers(HeaderMap::new());
    let client = ReqwestConnector::default().connect(&bare)?;
    let entry = (NEXT_CLIENT_ID.fetch_add(1, Ordering::Relaxed), client);
    CLIENTS.insert(key, entry.clone());
    Ok(entry)
}

static NEXT_CLIENT_ID: AtomicU64 = AtomicU64::new(1);

/// How many distinct HTTP clients [`SharedHttpConnector`] holds now (approximate: the cache
/// settles evictions lazily).
pub fn shared_client_count() -> u64 {
    CLIENTS.run_pending_tasks();
    CLIENTS.entry_count()
}

/// Passes requests to the shared client, or inside a caller-driven read (`crate::driven`) to
/// the shared client that keeps no connection (each such request connects on the reader's own
/// runtime and its connection closes with the response), and reports each response's `Date`
/// header to the store's refresher, if it has one.
struct StoreHttpService {
    pooled: HttpClient,
    /// The store's client options, for the client of caller-driven reads.
    options: ClientOptions,
    own: OnceCell<HttpClient>,
    /// What a caller-driven read of a body may wait for the network ([`network_wait`]).
    wait: Option<Duration>,
    observer: Option<Arc<dyn RefresherHandle>>,
    /// The store's request counters.
    counters: Arc<RequestCounters>,
    /// The cloud's checksum rules, when checksums are on.
    integrity: Option<&'static Rules>,
    /// The `User-Agent` requests carry (option `user_agent`, else this library's).
    user_agent: String,
}

impl std::fmt::Debug for StoreHttpService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SharedHttpClient")
            .field("provider", &self.observer.as_ref().map(|o| o.provider_id()))
            .finish_non_exhaustive()
    }
}

impl StoreHttpService {
    /// The client of caller-driven requests, built on first use.
    fn own_client(&self) -> Result<&HttpClient, HttpError> {
        self.own.get_or_try_init(|| {
            shared_client(&own_connection_options(&self.options))
                .map(|(_, client)| client)
                .map_err(|e| HttpError::new(HttpErrorKind::Connect, e))
        })
    }
}

#[async_trait]
impl HttpService for StoreHttpService {
    async fn call(&self, mut req: HttpRequest) -> Result<HttpResponse, HttpError> {
        self.audit(&mut req);
        if let Some(rules) = self.integrity {
            (rules.prepare)(&mut req);
        }
        let method = req.method().clone();
        self.counters.sent(&method);
        let outcome = self.send(req).await;
        self.counters.answered(&outcome);
        match (outcome, self.integrity) {
            (Ok(response), Some(rules)) => Ok(integrity::watch(rules, &method, response)),
            (outcome, _) => outcome,
        }
    }
}

impl StoreHttpService {
    /// Appends the audit context ([`crate::audit::current`]), if any, to the request's
    /// `User-Agent`: the store's `user_agent` option, else `vended-storage/<version>`.
    fn audit(&self, req: &mut HttpRequest) {
        if let Some(context) = crate::audit::current() {
            let agent = crate::audit::user_agent_with(&self.user_agent, &context);
            if let Ok(value) = agent.parse() {
                req.headers_mut().insert(USER_AGENT, value);
            }
        }
    }

    /// Sends one attempt, through the shared or the caller-driven client.
    async fn send(&self, req: HttpRequest) -> Result<HttpResponse, HttpError> {
        let req = condition::apply(req);
        // Read before the request leaves: with the time its answer is read, it bounds when
        // the endpoint stamped the answer's `Date` (see `observe_server_time`).
        let sent = self
            .observer
            .as_ref()
            .and_then(|_| epoch_millis(SystemTime::now()));
        let response = if !driven::in_scope() {
            self.pooled.execute(req).await?
        } else {
            driven::report_wait(self.wait);
            let client = self.own_client()?;
            match self.wait {
                // The own-connection client has no timeout (its body is read at the caller's
                // pace): the wait for the answer's headers is bounded here, per attempt, as
                // the store's timeout bounds a pooled request; `object_store` retries a
                // timeout of an idempotent request within its retry budget.
                Some(wait) => tokio::time::timeout(wait, client.execute(req))
                    .await
                    .map_err(|_| {
                        HttpError::new(
                            HttpErrorKind::Timeout,
                            std::io::Error::new(
                                std::io::ErrorKind::TimedOut,
                                format!("no answer within {} ms", wait.as_millis()),
                            ),
                        )
                    })??,
                None => client.execute(req).await?,
            }
        };
        if let (Some(observer), Some(sent)) = (&self.observer, sent) {
            if let Some(server) = server_date_millis(response.headers()) {
                if let Some(received) = epoch_millis(SystemTime::now()) {
                    // The header is truncated to the second, and the answer may have waited
                    // to be read: the refresher takes the sample as bounds, not as a value.
                    observer.observe_server_time(server, sent, received);
                }
            }
        }
        condition::observe(response.status().as_u16());
        Ok(response)
    }
}

/// The `Date` header of a response (RFC 9110 IMF-fixdate, second precision), epoch ms.
fn server_date_millis(headers: &object_store::HeaderMap) -> Option<i64> {
    let date = headers.get("date")?.to_str().ok()?;
    epoch_millis(httpdate::parse_http_date(date).ok()?)
}

fn epoch_millis(t: SystemTime) -> Option<i64> {
    t.duration_since(UNIX_EPOCH)
        .ok()
        .and_then(|d| i64::try_from(d.as_millis()).ok())
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
        let (a, _) = shared_client(&base()).unwrap();
        let (b, _) = shared_client(&base()).unwrap();
        let (c, _) = shared_client(&base().with_config(ClientConfigKey::Timeout, "7s")).unwrap();
        assert_eq!(a, b);
        assert_ne!(a, c);
    }

    #[test]
    fn a_caller_driven_read_waits_as_long_as_the_store_timeout_and_its_connection_never_times_out()
    {
        let secs = |s| Some(Duration::from_secs(s));
        assert_eq!(network_wait(&ClientOptions::new()), secs(30));
        let seven = ClientOptions::new().with_config(ClientConfigKey::Timeout, "7s");
        assert_eq!(network_wait(&seven), secs(7));
        let read = seven
            .clone()
            .with_config(ClientConfigKey::ReadTimeout, "2s");
        assert_eq!(network_wait(&read), secs(2));
        assert_eq!(
            network_wait(&ClientOptions::new().with_timeout_disabled()),
            None
        );
        let own = own_connection_options(&read);
        assert_eq!(own.get_config_value(&ClientConfigKey::Timeout), None);
        assert_eq!(own.get_config_value(&ClientConfigKey::ReadTimeout), None);
        assert_eq!(
            own.get_config_value(&ClientConfigKey::PoolMaxIdlePerHost),
            Some("0".into())
        );
    }

    #[tokio::test]
    async fn the_audit_context_of_a_scope_is_appended_to_the_store_user_agent() {
        let options = ClientOptions::new().with_config(ClientConfigKey::UserAgent, "app/1");
        let service = StoreHttpService {
            pooled: shared_client(&options).unwrap().1,
            options: options.clone(),
            own: OnceCell::new(),
            wait: None,
            observer: None,
            counters: Arc::default(),
            integrity: None,
            user_agent: "app/1".into(),
        };
        let request = || HttpRequest::new(object_store::client::HttpRequestBody::empty());
        let mut plain = request();
        service.audit(&mut plain);
        assert!(plain.headers().get(USER_AGENT).is_none());
        let mut audited = request();
        crate::audit::scoped(Some("spark-job/3 spark-task/1.7.0".into()), async {
            service.audit(&mut audited)
        })
        .await;
        assert_eq!(
            audited.headers()[USER_AGENT],
            "app/1 spark-job/3 spark-task/1.7.0"
        );
    }

    #[test]
    fn date_headers_are_read_as_epoch_millis() {
        let mut headers = object_store::HeaderMap::new();
        headers.insert("date", "Sun, 06 Nov 1994 08:49:37 GMT".parse().unwrap());
        assert_eq!(server_date_millis(&headers), Some(784_111_777_000));
        headers.insert("date", "not a date".parse().unwrap());
        assert_eq!(server_date_millis(&headers), None);
    }
}
