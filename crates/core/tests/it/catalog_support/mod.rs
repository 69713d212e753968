//! A scripted HTTP/1.1 catalog for catalog-provider tests: binds 127.0.0.1 on a free port,
//! serves each connection on its own thread (independent of any tokio runtime), records every
//! request, and answers with whatever the test's handler returns (status, JSON body, delay).
//! It also stands in for a misbehaving storage endpoint: any content type, extra headers, and
//! a `content-length` larger than the body sent (the connection is then closed early).

#![allow(dead_code)]

pub mod lance_rest;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// One request as received.
#[derive(Debug, Clone)]
pub struct Recorded {
    /// `GET`, `POST`...
    pub method: String,
    /// The raw request target (path and query, percent-encoded as sent).
    pub target: String,
    /// Header names in lower case, with their values.
    pub headers: Vec<(String, String)>,
    /// The request body.
    pub body: Vec<u8>,
}

impl Recorded {
    /// The first value of header `name` (case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        let name = name.to_ascii_lowercase();
        self.headers
            .iter()
            .find(|(k, _)| *k == name)
            .map(|(_, v)| v.as_str())
    }

    /// The body as text.
    pub fn body_text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
}

/// What to answer.
#[derive(Debug, Clone)]
pub struct Reply {
    pub status: u16,
    pub body: String,
    /// Wait this long before answering (to provoke client timeouts).
    pub delay: Duration,
    /// The `content-type` header.
    pub content_type: &'static str,
    /// More headers (name, value).
    pub headers: Vec<(String, String)>,
    /// The `content-length` announced, when not the body's (more: the body ends early).
    pub announced: Option<usize>,
}

impl Reply {
    /// `status` with a JSON `body`.
    pub fn json(status: u16, body: impl Into<String>) -> Self {
        Reply {
            status,
            body: body.into(),
            delay: Duration::ZERO,
            content_type: "application/json",
            headers: Vec::new(),
            announced: None,
        }
    }

    /// `status` with an XML `body` (a storage endpoint's error document).
    pub fn xml(status: u16, body: impl Into<String>) -> Self {
        Reply {
            content_type: "application/xml",
            ..Reply::json(status, body)
        }
    }

    /// This reply with header `name: value` too.
    pub fn header(mut self, name: &str, value: impl Into<String>) -> Self {
        self.headers.push((name.to_string(), value.into()));
        self
    }

    /// This reply announcing `len` bytes of body (`content-length`) whatever it sends.
    pub fn announcing(mut self, len: usize) -> Self {
        self.announced = Some(len);
        self
    }

    /// This reply after `delay`.
    pub fn after(mut self, delay: Duration) -> Self {
        self.delay = delay;
        self
    }
}

type Handler = dyn Fn(&Recorded) -> Reply + Send + Sync;

/// The running catalog. Stops accepting when dropped (the listener thread exits on the next
/// connection attempt, which `drop` makes).
pub struct MockCatalog {
    port: u16,
    requests: Arc<Mutex<Vec<Recorded>>>,
    stopped: Arc<std::sync::atomic::AtomicBool>,
}

impl MockCatalog {
    /// Starts serving with `handler`.
    pub fn start(handler: impl Fn(&Recorded) -> Reply + Send + Sync + 'static) -> MockCatalog {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1");
        let port = listener.local_addr().unwrap().port();
        let requests = Arc::new(Mutex::new(Vec::new()));
        let stopped = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let handler: Arc<Handler> = Arc::new(handler);
        {
            let requests = requests.clone();
            let stopped = stopped.clone();
            std::thread::spawn(move || {
                for stream in listener.incoming() {
                    if stopped.load(std::sync::atomic::Ordering::SeqCst) {
                        break;
                    }
                    let Ok(stream) = stream else { continue };
                    let requests = requests.clone();
                    let handler = handler.clone();
                    std::thread::spawn(move || {
                        let _ = serve(stream, &requests, handler.as_ref());
                    });
                }
            });
        }
        MockCatalog {
            port,
            requests,
            stopped,
        }
    }

    /// `http://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// Every request received so far.
    pub fn requests(&self) -> Vec<Recorded> {
        self.requests.lock().unwrap().clone()
    }

    /// How many requests were received.
    pub fn count(&self) -> usize {
        self.requests.lock().unwrap().len()
    }
}

impl Drop for MockCatalog {
    fn drop(&mut self) {
        self.stopped
            .store(true, std::sync::atomic::Ordering::SeqCst);
        let _ = TcpStream::connect(("127.0.0.1", self.port));
    }
}

fn serve(
    stream: TcpStream,
    requests: &Mutex<Vec<Recorded>>,
    handler: &Handler,
) -> std::io::Result<()> {
    stream.set_read_timeout(Some(Duration::from_secs(10)))?;
    let mut reader = BufReader::new(stream.try_clone()?);
    let mut line = String::new();
    if reader.read_line(&mut line)? == 0 {
        return Ok(());
    }
    let mut parts = line.split_whitespace();
    let method = parts.next().unwrap_or("").to_string();
    let target = parts.next().unwrap_or("").to_string();
    let mut headers = Vec::new();
    loop {
        let mut h = String::new();
        if reader.read_line(&mut h)? == 0 || h == "\r\n" || h == "\n" {
            break;
        }
        if let Some((k, v)) = h.split_once(':') {
            headers.push((k.trim().to_ascii_lowercase(), v.trim().to_string()));
        }
    }
    let len: usize = headers
        .iter()
        .find(|(k, _)| k == "content-length")
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(0);
    let mut body = vec![0; len];
    reader.read_exact(&mut body)?;
    let request = Recorded {
        method,
        target,
        headers,
        body,
    };
    requests.lock().unwrap().push(request.clone());
    let reply = handler(&request);
    if !reply.delay.is_zero() {
        std::thread::sleep(reply.delay);
    }
    let mut stream = stream;
    let mut head = format!(
        "HTTP/1.1 {} X\r\ncontent-type: {}\r\ncontent-length: {}\r\nconnection: close\r\n",
        reply.status,
        reply.content_type,
        reply.announced.unwrap_or(reply.body.len())
    );
    for (name, value) in &reply.headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str("\r\n");
    stream.write_all(head.as_bytes())?;
    stream.write_all(reply.body.as_bytes())?;
    stream.flush()
}
