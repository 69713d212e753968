//! The conformance suite (tests/conformance/) against moto's server (`python -m moto.server`,
//! installed by bin/install-s3-servers.sh), started on a free port and killed on drop, with
//! auth switched on (`POST /moto-api/reset-auth`): SigV4, session tokens, deleted IAM keys
//! and IAM policies on object ARNs are enforced; expiry is not.

use crate::conformance;

use conformance::servers::{self, Moto};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn conformance_moto() {
    let Some(python) = servers::tool_python("VENDED_STORAGE_MOTO_PYTHON", "moto-venv") else {
        if servers::skip_requested() {
            conformance::report_unavailable(
                "moto",
                &format!("not installed, {}=1", servers::SKIP_ENV),
                true,
            );
            return;
        }
        panic!(
            "moto is not installed: run bin/install-s3-servers.sh (or set {}=1 to skip)",
            servers::SKIP_ENV
        );
    };
    let moto = Moto::start(&python)
        .await
        .unwrap_or_else(|e| panic!("moto did not start: {e}"));
    let summary = conformance::run(moto.backend()).await;
    assert_eq!(summary.failed, 0, "{summary:?}");
}
