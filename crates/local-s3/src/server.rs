//! The HTTP front: admin calls go to [`crate::admin`], everything else to s3s (S3 and the STS
//! route) inside a request scope that records the auth outcome. The server runs on its own
//! tokio runtime on a dedicated thread, so it keeps serving while the caller's runtime blocks.

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, UNIX_EPOCH};

use hyper::body::Incoming;
use hyper::{Request, StatusCode};
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto::Builder as ConnBuilder;
use hyper_util::server::graceful::GracefulShutdown;
use s3s::service::{S3Service, S3ServiceBuilder};
use s3s::{Body, HttpError, HttpResponse};
use tokio::sync::oneshot;

use crate::admin;
use crate::auth::{Access, Auth, RequestContext, REQUEST};
use crate::state::State;
use crate::sts::AssumeRoleRoute;
use crate::types::RequestRecord;

/// How long shutdown waits for in-flight requests before dropping connections.
const GRACE: Duration = Duration::from_secs(1);

/// The hyper service: admin API plus s3s with our auth, access check and STS route.
#[derive(Clone)]
pub(crate) struct Frontend {
    s3: S3Service,
    state: Arc<State>,
}

impl Frontend {
    pub fn new(state: Arc<State>) -> io::Result<Frontend> {
        let mut builder = S3ServiceBuilder::new(crate::store::Store::new(state.clone())?);
        builder.set_auth(Auth {
            state: state.clone(),
        });
        builder.set_access(Access {
            state: state.clone(),
        });
        builder.set_route(AssumeRoleRoute {
            state: state.clone(),
        });
        Ok(Frontend {
            s3: builder.build(),
            state,
        })
    }

    async fn serve(self, req: Request<Incoming>) -> Result<HttpResponse, HttpError> {
        if req.uri().path().starts_with(admin::ADMIN_PREFIX) {
            return Ok(admin::handle(&self.state, req.method(), req.uri()));
        }
        let method = req.method().to_string();
        let signer = signer_from_request(&req);
        let user_agent = req
            .headers()
            .get(hyper::header::USER_AGENT)
            .map(|v| String::from_utf8_lossy(&v.as_bytes()[..v.len().min(512)]).into_owned());
        let (path_bucket, path_key) = bucket_and_key(req.uri().path());
        // A PutObject (not UploadPart, not CopyObject): its answer may be armed to be lost.
        let put_object = req.method() == hyper::Method::PUT
            && !req.uri().query().unwrap_or("").contains("uploadId=")
            && !req.headers().contains_key("x-amz-copy-source");

        let ctx = Arc::new(Mutex::new(RequestContext::default()));
        let result = REQUEST
            .scope(ctx.clone(), self.s3.call(req.map(Body::from)))
            .await;
        let ctx = std::mem::take(&mut *ctx.lock().unwrap_or_else(PoisonError::into_inner));

        let mut result = result;
        if put_object && matches!(&result, Ok(resp) if resp.status().is_success()) {
            let bucket = ctx.bucket.clone().or_else(|| path_bucket.clone());
            let key = ctx.key.clone().or_else(|| path_key.clone());
            if let (Some(b), Some(k)) = (bucket, key) {
                if self.state.answers().take_lost(&b, &k) {
                    result = Ok(lost_answer());
                }
            }
        }
        let status = match &result {
            Ok(resp) => resp.status(),
            Err(_) => StatusCode::INTERNAL_SERVER_ERROR,
        };
        let (accepted, reason) = match ctx.outcome {
            Some(Ok(())) => (true, None),
            Some(Err(code)) => (false, Some(code.to_owned())),
            // No check ran: s3s refused the request before (bad signature, skew, bad path).
            None if status.is_success() => (true, None),
            None => {
                let code = result
                    .as_ref()
                    .ok()
                    .and_then(|resp| error_code(resp.body()));
                (
                    false,
                    Some(code.unwrap_or_else(|| format!("HTTP {}", status.as_u16()))),
                )
            }
        };
        self.state.record(RequestRecord {
            access_key_id: ctx.access_key.or(signer).unwrap_or_default(),
            method,
            bucket: ctx.bucket.or(path_bucket),
            key: ctx.key.or(path_key),
            accepted,
            reason,
            status: status.as_u16(),
            user_agent,
        });
        let offset = self.state.clock_offset_millis();
        result.map(|mut resp| {
            if offset != 0 {
                // hyper adds a `Date` of the machine's clock only when the answer has none.
                let when = UNIX_EPOCH + Duration::from_millis(self.state.now().max(0) as u64);
                if let Ok(v) = httpdate::fmt_http_date(when).parse() {
                    resp.headers_mut().insert(hyper::header::DATE, v);
                }
            }
            resp
        })
    }
}

impl hyper::service::Service<Request<Incoming>> for Frontend {
    type Response = HttpResponse;
    type Error = HttpError;
    type Future = Pin<Box<dyn Future<Output = Result<HttpResponse, HttpError>> + Send>>;

    fn call(&self, req: Request<Incoming>) -> Self::Future {
        Box::pin(self.clone().serve(req))
    }
}

/// The answer that replaces a stored PutObject's success when its answer is armed to be lost
/// (see [`crate::answers`]).
fn lost_answer() -> HttpResponse {
    let mut resp = hyper::Response::new(Body::from(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Error><Code>InternalError</Code>\
         <Message>We encountered an internal error. Please try again.</Message></Error>"
            .to_owned(),
    ));
    *resp.status_mut() = StatusCode::INTERNAL_SERVER_ERROR;
    resp.headers_mut().insert(
        hyper::header::CONTENT_TYPE,
        hyper::header::HeaderValue::from_static("application/xml"),
    );
    resp
}

/// `<Code>` of an S3 error document held in memory.
fn error_code(body: &Body) -> Option<String> {
    let bytes = body.bytes()?;
    let text = std::str::from_utf8(&bytes).ok()?;
    let start = text.find("<Code>")? + "<Code>".len();
    let end = start + text[start..].find("</Code>")?;
    Some(text[start..end].to_owned())
}

/// Access key named by the request's signature (SigV4 or SigV2, header or query), if any.
fn signer_from_request<B>(req: &Request<B>) -> Option<String> {
    if let Some(auth) = req
        .headers()
        .get(hyper::header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
    {
        if let Some((_, rest)) = auth.split_once("Credential=") {
            return rest.split('/').next().map(|s| s.trim().to_owned());
        }
        if let Some(rest) = auth.strip_prefix("AWS ") {
            return rest.split(':').next().map(|s| s.trim().to_owned());
        }
    }
    let uri = req.uri();
    if let Some(cred) = crate::auth::query_param(uri, "X-Amz-Credential") {
        return cred.split('/').next().map(str::to_owned);
    }
    crate::auth::query_param(uri, "AWSAccessKeyId")
}

/// Path-style bucket and key of a request path (percent-decoded).
fn bucket_and_key(path: &str) -> (Option<String>, Option<String>) {
    let decoded = percent_encoding::percent_decode_str(path).decode_utf8_lossy();
    let trimmed = decoded.trim_start_matches('/');
    match trimmed.split_once('/') {
        _ if trimmed.is_empty() => (None, None),
        Some((bucket, key)) if !key.is_empty() => (Some(bucket.to_owned()), Some(key.to_owned())),
        Some((bucket, _)) => (Some(bucket.to_owned()), None),
        None => (Some(trimmed.to_owned()), None),
    }
}

async fn accept_loop(
    listener: tokio::net::TcpListener,
    frontend: Frontend,
    mut shutdown: oneshot::Receiver<()>,
) {
    let builder = ConnBuilder::new(TokioExecutor::new());
    let graceful = GracefulShutdown::new();
    loop {
        tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((socket, _)) => {
                    // Without TCP_NODELAY a body written after its headers waits for the
                    // client's delayed ACK: ~40 ms per small response.
                    let _ = socket.set_nodelay(true);
                    let conn = builder.serve_connection(TokioIo::new(socket), frontend.clone());
                    let conn = graceful.watch(conn.into_owned());
                    tokio::spawn(async move {
                        let _ = conn.await;
                    });
                }
                // For example out of file descriptors: back off instead of spinning.
                Err(_) => tokio::time::sleep(Duration::from_millis(20)).await,
            },
            _ = &mut shutdown => break,
        }
    }
    drop(listener);
    tokio::select! {
        () = graceful.shutdown() => {}
        () = tokio::time::sleep(GRACE) => {}
    }
}

/// A running server thread. Stopping (or dropping) it closes the listener, lets in-flight
/// requests finish for up to [`GRACE`], then shuts the runtime down.
pub(crate) struct ServerHandle {
    shutdown: Option<oneshot::Sender<()>>,
    done: Option<oneshot::Receiver<()>>,
    thread: Option<JoinHandle<()>>,
}

impl ServerHandle {
    pub fn spawn(listener: std::net::TcpListener, frontend: Frontend) -> io::Result<ServerHandle> {
        listener.set_nonblocking(true)?;
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("local-s3-worker")
            .enable_all()
            .build()?;
        let (shutdown_tx, shutdown_rx) = oneshot::channel();
        let (done_tx, done_rx) = oneshot::channel();
        let thread = std::thread::Builder::new()
            .name("local-s3".to_owned())
            .spawn(move || {
                runtime.block_on(async move {
                    match tokio::net::TcpListener::from_std(listener) {
                        Ok(listener) => accept_loop(listener, frontend, shutdown_rx).await,
                        Err(err) => eprintln!("local-s3: cannot serve: {err}"),
                    }
                });
                runtime.shutdown_timeout(GRACE);
                let _ = done_tx.send(());
            })?;
        Ok(ServerHandle {
            shutdown: Some(shutdown_tx),
            done: Some(done_rx),
            thread: Some(thread),
        })
    }

    /// Stops the server and waits for it without blocking the caller's runtime.
    pub async fn stop(mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        if let Some(done) = self.done.take() {
            let _ = done.await;
        }
        // Drop joins the thread, which has finished by now.
    }
}

impl Drop for ServerHandle {
    fn drop(&mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_bucket_and_key() {
        assert_eq!(bucket_and_key("/"), (None, None));
        assert_eq!(bucket_and_key("/b"), (Some("b".into()), None));
        assert_eq!(bucket_and_key("/b/"), (Some("b".into()), None));
        assert_eq!(
            bucket_and_key("/b/a%20b/c"),
            (Some("b".into()), Some("a b/c".into()))
        );
    }

    #[test]
    fn finds_signer() {
        let req = Request::builder()
            .uri("/b/k")
            .header(
                "authorization",
                "AWS4-HMAC-SHA256 Credential=AKID1/20250101/us-east-1/s3/aws4_request, SignedHeaders=host, Signature=00",
            )
            .body(())
            .unwrap();
        assert_eq!(signer_from_request(&req).as_deref(), Some("AKID1"));
        let req = Request::builder()
            .uri("/b/k?X-Amz-Credential=AKID2%2F20250101%2Fus-east-1%2Fs3%2Faws4_request&X-Amz-Signature=0")
            .body(())
            .unwrap();
        assert_eq!(signer_from_request(&req).as_deref(), Some("AKID2"));
        let req = Request::builder().uri("/b/k").body(()).unwrap();
        assert_eq!(signer_from_request(&req), None);
    }

    #[test]
    fn reads_error_code() {
        let body = Body::from(
            "<?xml version=\"1.0\"?><Error><Code>SignatureDoesNotMatch</Code></Error>".to_owned(),
        );
        assert_eq!(error_code(&body).as_deref(), Some("SignatureDoesNotMatch"));
        assert_eq!(error_code(&Body::empty()), None);
    }
}
