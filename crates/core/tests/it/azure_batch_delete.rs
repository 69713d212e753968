//! Multi-key delete on Azure (`object_store`'s Blob Batch `POST ?restype=container&comp=batch`)
//! against Azurite, through the counting proxy.
//!
//! Azurite 3.35.0 cannot authorize a container batch with an *account* SAS: its
//! `AccountSASAuthenticator` has no permission entry for `Container_SubmitBatch` (only for
//! `Service_SubmitBatch`, in `dist/src/blob/authentication/OperationAccountSASPermission.js`) and
//! throws, which its error middleware turns into a bodiless 500. A *service* (container) SAS is
//! mapped (`OPERATION_BLOB_SAS_CONTAINER_PERMISSIONS` has `Container_SubmitBatch`), so the test
//! uses one (`emulators::container_sas`). Real Azure accepts both kinds for a container batch.

use crate::emulators;

use bytes::Bytes;
use emulators::{
    container_sas, create_container, now_millis, start_azurite, Proxy, AZURITE_ACCOUNT,
};
use futures::{StreamExt, TryStreamExt};
use object_store::path::Path;
use vended_storage::{ErrorKind, ObjectStoreRegistry, RefreshConfig, RegistryConfig};

const CONTAINER: &str = "vended";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn azure_multi_key_delete_is_one_batch_request() {
    let Some(azurite) = start_azurite("azure_multi_key_delete") else {
        return;
    };
    create_container(&azurite, CONTAINER).await;
    let proxy = Proxy::start(&azurite.url, None).await;
    let options = [
        ("azure_storage_use_emulator", "true".to_string()),
        ("azure_storage_endpoint", proxy.url.clone()),
        ("azure_storage_account_name", AZURITE_ACCOUNT.to_string()),
        (
            "azure_storage_sas_token",
            container_sas(CONTAINER, now_millis() + 600_000),
        ),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect();
    let store = ObjectStoreRegistry::new(RegistryConfig::default())
        .open(
            &format!("az://{CONTAINER}/batch"),
            options,
            None,
            RefreshConfig::default(),
        )
        .unwrap();
    let names = ["a", "b", "c", "d"];
    for n in names {
        store.put(n, Bytes::from_static(b"x")).await.unwrap();
    }
    let before = proxy.stats.requests();
    let paths: Vec<Path> = names
        .iter()
        .map(|n| Path::from(format!("batch/{n}")))
        .collect();
    let deleted: Vec<Path> = store
        .object_store()
        .delete_stream(futures::stream::iter(paths.clone().into_iter().map(Ok)).boxed())
        .try_collect()
        .await
        .expect("batch delete");
    assert_eq!(deleted.len(), names.len());
    assert_eq!(proxy.stats.requests() - before, 1, "one batch request");
    for n in names {
        assert_eq!(
            store.head(n).await.unwrap_err().kind(),
            ErrorKind::NotFound,
            "{n}"
        );
    }
    // A batch with a missing blob: the others are deleted, the missing one reports NotFound.
    for n in ["e", "f"] {
        store.put(n, Bytes::from_static(b"x")).await.unwrap();
    }
    let before = proxy.stats.requests();
    let results: Vec<_> = store
        .object_store()
        .delete_stream(
            futures::stream::iter(
                ["e", "missing", "f"].map(|n| Ok(Path::from(format!("batch/{n}")))),
            )
            .boxed(),
        )
        .collect()
        .await;
    assert_eq!(proxy.stats.requests() - before, 1, "one batch request");
    assert_eq!(results.len(), 3);
    let failed: Vec<_> = results.iter().filter_map(|r| r.as_ref().err()).collect();
    assert_eq!(failed.len(), 1, "{results:?}");
    assert!(
        matches!(failed[0], object_store::Error::NotFound { .. }),
        "{:?}",
        failed[0]
    );
    for n in ["e", "f"] {
        assert_eq!(
            store.head(n).await.unwrap_err().kind(),
            ErrorKind::NotFound,
            "{n}"
        );
    }
    assert_eq!(proxy.stats.rejections(), 0);
}
