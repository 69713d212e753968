//! The conformance suite (tests/conformance/) against the project's local endpoint
//! (crates/local-s3, in-process): the only backend that enforces expiry, so every check
//! is provable here.

use crate::common;
use crate::conformance;

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use conformance::{Backend, Capabilities, Vended, Vendor};
use local_s3::LocalS3;

/// Temporary keys issued by the endpoint itself (what its STS `AssumeRole` returns).
struct LocalVendor(Arc<LocalS3>);

#[async_trait]
impl Vendor for LocalVendor {
    async fn vend(&self, ttl: Duration, scope: Option<&str>) -> Result<Vended, String> {
        let creds = self.0.issue_credentials(ttl, scope);
        Ok(Vended {
            options: self.0.storage_options(&creds),
            access_key_id: creds.access_key_id,
        })
    }

    async fn vend_revocable(&self) -> Result<Vended, String> {
        let creds = self.0.issue_credentials(Duration::from_secs(3600), None);
        let mut options = self.0.storage_options(&creds);
        options.remove("expires_at_millis");
        Ok(Vended {
            options,
            access_key_id: creds.access_key_id,
        })
    }

    async fn revoke(&self, access_key_id: &str) -> Result<(), String> {
        self.0.revoke(access_key_id);
        Ok(())
    }

    fn fresh_key_per_vend(&self) -> bool {
        true
    }

    fn describe(&self) -> String {
        "temporary keys+session token issued by the endpoint, server-side expiry = announced expiry"
            .into()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn conformance_local() {
    let s3 = common::endpoint().await;
    let backend = Backend {
        name: "local",
        bucket: common::BUCKET.into(),
        caps: Capabilities {
            enforces_expiry: true,
            enforces_signature: true,
            enforces_prefix_scope: true,
            atomic_conditional_writes: true,
        },
        vendor: Arc::new(LocalVendor(s3.clone())),
        missing_expiry: "",
        missing_signature: "",
        missing_scope: "",
    };
    let summary = conformance::run(backend).await;
    assert_eq!(summary.failed, 0, "{summary:?}");
    assert_eq!(summary.not_provable, 0, "{summary:?}");
}
