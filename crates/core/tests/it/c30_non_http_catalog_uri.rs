//! Case C30: a catalog whose `uri` is not HTTP (JDBC's `jdbc:sqlite:...`, Hive's
//! `thrift://...`) gives the FileIO an absolute `client.refresh-credentials-endpoint`. The
//! catalog URI is needed only to resolve a relative endpoint: with an absolute one the provider
//! builds and refreshes through it; with a relative one the error names both keys.

use crate::catalog_support;

use catalog_support::{MockCatalog, Reply};
use serde_json::json;
use vended_storage::catalog::iceberg::S3_REFRESH_ENDPOINT;
use vended_storage::catalog::IcebergRestCredentialsProvider;
use vended_storage::{Error, StorageOptionsProvider};

fn now_millis() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64
}

fn answer(prefix: &str, key: &str) -> Reply {
    let expires = (now_millis() + 3_600_000).to_string();
    Reply::json(
        200,
        json!({"storage-credentials": [{"prefix": prefix, "config": {
            "s3.access-key-id": key, "s3.secret-access-key": "secret-of-refresh",
            "s3.session-token": "t", "s3.session-token-expires-at-ms": expires}}]})
        .to_string(),
    )
}

const NON_HTTP_URIS: [&str; 3] = [
    "jdbc:sqlite:/tmp/catalog.db",
    "thrift://metastore:9083",
    "jdbc:postgresql://db:5432/iceberg",
];

#[tokio::test]
async fn c30_an_absolute_endpoint_works_with_a_non_http_catalog_uri() {
    let location = "s3://b/wh/t1";
    let refresher = MockCatalog::start(move |_| answer("s3://b/wh/t1/", "REFRESHED"));
    let endpoint = format!("{}/v1/credentials/t1", refresher.url());
    for uri in NON_HTTP_URIS {
        let before = refresher.count();
        // What VendedFileIO builds for a config-only table (no namespace and table)...
        let p = IcebergRestCredentialsProvider::builder_for_location(uri, location)
            .load_table_config([(S3_REFRESH_ENDPOINT, endpoint.as_str())])
            .build()
            .unwrap_or_else(|e| panic!("{uri}: {e}"));
        assert_eq!(p.credentials_url(), endpoint);
        let o = p.fetch_storage_options().await.unwrap().unwrap();
        assert_eq!(o["aws_access_key_id"], "REFRESHED");
        assert_eq!(refresher.count() - before, 1, "{uri}: one call");
        // ...and a provider that knows its table: the endpoint replaces loadCredentials, so
        // the catalog URI is not needed either.
        let p = IcebergRestCredentialsProvider::builder(uri, ["db"], "t1", location)
            .load_table_config([(S3_REFRESH_ENDPOINT, endpoint.as_str())])
            .build()
            .unwrap_or_else(|e| panic!("{uri} with a table: {e}"));
        let o = p.fetch_storage_options().await.unwrap().unwrap();
        assert_eq!(o["aws_access_key_id"], "REFRESHED");
    }
}

#[test]
fn c30_a_relative_endpoint_with_a_non_http_catalog_uri_names_both_keys() {
    for uri in NON_HTTP_URIS {
        for endpoint in ["v1/credentials/t1", "/v1/credentials/t1"] {
            let e = IcebergRestCredentialsProvider::builder_for_location(uri, "s3://b/wh/t1")
                .load_table_config([(S3_REFRESH_ENDPOINT, endpoint)])
                .build()
                .expect_err("a relative endpoint needs an http(s) catalog URI");
            let text = e.to_string();
            assert!(matches!(e, Error::InvalidOption { .. }), "{text}");
            assert!(text.contains("'uri'"), "{text}");
            assert!(text.contains(S3_REFRESH_ENDPOINT), "{text}");
        }
    }
}

#[test]
fn c30_without_a_refresh_endpoint_loadcredentials_still_needs_an_http_uri() {
    let e = IcebergRestCredentialsProvider::builder("jdbc:sqlite:x", ["db"], "t1", "s3://b/t1")
        .build()
        .expect_err("loadCredentials is under the catalog URI");
    assert!(e.to_string().contains("uri"), "{e}");
}
