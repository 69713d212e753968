//! The conformance suite (tests/conformance/) against LocalStack (`localstack-core` under
//! Python 3.13, no Docker; installed by bin/install-s3-servers.sh), S3 only, started on a
//! free port and killed on drop. Its free build checks no key, signature or policy: only the
//! data-plane checks and the client side of refresh are provable against it.

use crate::conformance;

use conformance::servers::{self, LocalStack};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn conformance_localstack() {
    let Some(python) = servers::tool_python("VENDED_STORAGE_LOCALSTACK_PYTHON", "localstack-venv")
    else {
        if servers::skip_requested() {
            conformance::report_unavailable(
                "localstack",
                &format!("not installed, {}=1", servers::SKIP_ENV),
                true,
            );
            return;
        }
        // The installer leaves LocalStack out when no Python 3.13 exists and says why: not
        // provable here, reported so, rather than a failure of the library.
        if let Some(reason) = servers::unavailable_reason("localstack-unavailable") {
            conformance::report_unavailable("localstack", &reason, false);
            return;
        }
        panic!(
            "LocalStack is not installed: run bin/install-s3-servers.sh (or set {}=1 to skip)",
            servers::SKIP_ENV
        );
    };
    let localstack = LocalStack::start(&python)
        .await
        .unwrap_or_else(|e| panic!("LocalStack did not start: {e}"));
    let summary = conformance::run(localstack.backend()).await;
    assert_eq!(summary.failed, 0, "{summary:?}");
}
