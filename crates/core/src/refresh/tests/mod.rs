//! Refresher rules on a manual clock: the scripted provider and fixture shared by the topic
//! modules. Case ids refer to shared/CASES.md.

mod answers;
mod basics;
mod c05;
mod c17;
mod c18;
mod skew;
mod windows;

use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use tokio::sync::Notify;

use super::*;
use crate::options::EXPIRES_AT_MILLIS;

// Option names as a cloud would use them; the refresher itself knows no cloud.
const AWS_ACCESS_KEY_ID: &str = "aws_access_key_id";
const AWS_SECRET_ACCESS_KEY: &str = "aws_secret_access_key";
const AWS_ENDPOINT: &str = "aws_endpoint";
const AWS_REGION: &str = "aws_region";

const T0: i64 = 1_800_000_000_000;

type Answer = Box<dyn FnOnce(i64) -> Result<Option<StorageOptions>> + Send>;

/// A provider that answers from a script (then repeats `fallback`), counts calls, can sleep,
/// and signals when it is entered.
struct Scripted {
    clock: Arc<ManualClock>,
    script: Mutex<VecDeque<Answer>>,
    calls: AtomicUsize,
    served: AtomicUsize,
    delay: Duration,
    entered: Notify,
    hang: bool,
}

impl std::fmt::Debug for Scripted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Scripted")
    }
}

#[async_trait]
impl StorageOptionsProvider for Scripted {
    async fn fetch_storage_options(&self) -> Result<Option<StorageOptions>> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        self.entered.notify_waiters();
        if self.hang {
            futures::future::pending::<()>().await;
        }
        if !self.delay.is_zero() {
            tokio::time::sleep(self.delay).await;
        }
        let next = self.script.lock().unwrap().pop_front();
        let now = self.clock.now_millis();
        match next {
            Some(answer) => answer(now),
            None => {
                // Default answers are named gen2, gen3, ... in the order they are served.
                let served = self.served.fetch_add(1, Ordering::SeqCst) + 2;
                Ok(Some(creds(&format!("gen{served}"), Some(now + 600_000))))
            }
        }
    }
    fn provider_id(&self) -> String {
        "scripted".into()
    }
}

fn creds(key: &str, expires: Option<i64>) -> StorageOptions {
    let mut o: StorageOptions = [
        (AWS_ACCESS_KEY_ID.to_string(), key.to_string()),
        (
            AWS_SECRET_ACCESS_KEY.to_string(),
            format!("secret-of-{key}"),
        ),
    ]
    .into_iter()
    .collect();
    if let Some(e) = expires {
        o.insert(EXPIRES_AT_MILLIS.into(), e.to_string());
    }
    o
}

struct Fixture {
    clock: Arc<ManualClock>,
    provider: Arc<Scripted>,
    refresher: CredentialRefresher<String>,
}

fn key_mapper() -> CredentialMapper<String> {
    Arc::new(|o: &StorageOptions| {
        let k = o
            .get(AWS_ACCESS_KEY_ID)
            .ok_or_else(|| Error::invalid_option(AWS_ACCESS_KEY_ID, "missing"))?;
        o.get(AWS_SECRET_ACCESS_KEY)
            .ok_or_else(|| Error::invalid_option(AWS_SECRET_ACCESS_KEY, "missing or empty"))?;
        Ok(k.clone())
    })
}

fn fixture(
    initial: StorageOptions,
    config: RefreshConfig,
    script: Vec<Answer>,
    delay: Duration,
    hang: bool,
) -> Fixture {
    let clock = Arc::new(ManualClock::new(T0));
    let provider = Arc::new(Scripted {
        clock: clock.clone(),
        script: Mutex::new(script.into()),
        calls: AtomicUsize::new(0),
        served: AtomicUsize::new(0),
        delay,
        entered: Notify::new(),
        hang,
    });
    let refresher = CredentialRefresher::new(
        provider.clone(),
        initial,
        key_mapper(),
        config,
        clock.clone(),
    )
    .unwrap();
    Fixture {
        clock,
        provider,
        refresher,
    }
}

fn no_jitter(lead_s: u64) -> RefreshConfig {
    RefreshConfig {
        lead_time: Duration::from_secs(lead_s),
        jitter: 0.0,
        ..RefreshConfig::default()
    }
}

impl Fixture {
    async fn key(&self) -> Result<String> {
        self.refresher
            .get_credential()
            .await
            .map(|(c, _)| (*c).clone())
    }
    fn calls(&self) -> usize {
        self.provider.calls.load(Ordering::SeqCst)
    }
}
