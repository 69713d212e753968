//! The S3 storage option keys this library reads itself. Every other `aws_` key is passed to
//! `object_store`'s `AmazonS3Builder` by its `AmazonS3ConfigKey` name.

/// AWS access key id.
pub const AWS_ACCESS_KEY_ID: &str = "aws_access_key_id";
/// AWS secret access key (secret).
pub const AWS_SECRET_ACCESS_KEY: &str = "aws_secret_access_key";
/// AWS session token (secret).
pub const AWS_SESSION_TOKEN: &str = "aws_session_token";
/// AWS region, e.g. `us-east-1`.
pub const AWS_REGION: &str = "aws_region";
/// S3 endpoint URL, e.g. `http://127.0.0.1:9000`.
pub const AWS_ENDPOINT: &str = "aws_endpoint";
/// `"true"` to allow plain HTTP endpoints.
pub const AWS_ALLOW_HTTP: &str = "aws_allow_http";

/// `"true"` to send unsigned requests (public buckets).
pub const AWS_SKIP_SIGNATURE: &str = "aws_skip_signature";
