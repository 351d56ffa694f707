//! The floors the bench runs itself as, in a process of their own: the
//! least a bridge and a proxy can add on this machine.

use std::io::{BufRead, BufReader, Write};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper_util::rt::TokioIo;

/// The name of [`bare_bridge`] in the tables.
pub const BARE: &str = "bare bridge (line → POST → body, blocking)";

/// The name of [`tokio_bare_bridge`] in the tables.
pub const TOKIO_BARE: &str = "bare bridge on tokio (one task)";

/// The name of [`hyper_bare_bridge`] in the tables.
pub const HYPER_BARE: &str = "bare bridge on tokio and hyper's client";

/// Set to the server's address, the bench runs as a bare bridge: the one
/// [`BARE_KIND`] names.
pub const BARE_BRIDGE: &str = "PROXY_BENCH_BARE_BRIDGE";

/// `blocking` ([`bare_bridge`]), `tokio` ([`tokio_bare_bridge`]) or
/// `hyper` ([`hyper_bare_bridge`]).
pub const BARE_KIND: &str = "PROXY_BENCH_BARE_KIND";

/// The name of [`tcp_relay`] in the tables.
pub const RELAY: &str = "TCP relay (bytes copied, none read)";

/// Set to the server's address, the bench runs as [`tcp_relay`].
pub const TCP_RELAY: &str = "PROXY_BENCH_TCP_RELAY";

/// The least a reverse proxy can do, as a floor for the reverse proxy:
/// copies each connection's bytes to the server and back, on one thread as
/// the doors run, reading none of them (no HTTP, no audit). Says its
/// address on stdout.
pub fn tcp_relay(server: &str) {
    on_tokio(async {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        println!("{}", listener.local_addr().unwrap());
        std::io::stdout().flush().unwrap();
        loop {
            let (mut inbound, _) = listener.accept().await.unwrap();
            inbound.set_nodelay(true).unwrap();
            let server = server.to_owned();
            tokio::spawn(async move {
                let mut outbound = tokio::net::TcpStream::connect(server).await.unwrap();
                outbound.set_nodelay(true).unwrap();
                let _ = tokio::io::copy_bidirectional(&mut inbound, &mut outbound).await;
            });
        }
    });
}

/// The least a stdio→HTTP bridge can do, as a floor for the bridge: POSTs
/// each stdin line as it is, on one kept-alive connection, and writes the
/// response's body back as a line. It reads nothing of the messages, one
/// thread and blocking calls, so the only wake-ups are a line's arrival and
/// the answer's.
pub fn bare_bridge(server: &str) {
    let mut upstream = std::net::TcpStream::connect(server).unwrap();
    upstream.set_nodelay(true).unwrap();
    let mut answers = BufReader::new(upstream.try_clone().unwrap());
    let mut stdout = std::io::stdout().lock();
    let mut line = String::new();
    let mut stdin = std::io::stdin().lock();
    while stdin.read_line(&mut line).unwrap() > 0 {
        let body = line.trim_end();
        let request = format!(
            "POST /mcp HTTP/1.1\r\nhost: {server}\r\ncontent-type: application/json\r\naccept: application/json, text/event-stream\r\ncontent-length: {}\r\n\r\n{body}",
            body.len()
        );
        upstream.write_all(request.as_bytes()).unwrap();
        let mut length = 0;
        let mut header = String::new();
        while answers.read_line(&mut header).unwrap() > 2 {
            if let Some(value) = header.to_ascii_lowercase().strip_prefix("content-length:") {
                length = value.trim().parse().unwrap();
            }
            header.clear();
        }
        let mut answer = vec![0; length + 1];
        std::io::Read::read_exact(&mut answers, &mut answer[..length]).unwrap();
        answer[length] = b'\n';
        stdout.write_all(&answer).unwrap();
        stdout.flush().unwrap();
        line.clear();
    }
}

/// [`bare_bridge`] on a current-thread tokio runtime, as the doors run: one
/// task reads stdin and the answer as their readiness comes, so a call
/// costs the runtime's wake-ups and no more.
pub fn tokio_bare_bridge(server: &str) {
    use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt};
    on_tokio(async {
        let mut answers = tokio::io::BufReader::new(connect(server).await);
        each_line(async |body: &[u8]| {
            let head = format!(
                "POST /mcp HTTP/1.1\r\nhost: {server}\r\ncontent-type: application/json\r\naccept: application/json, text/event-stream\r\ncontent-length: {}\r\n\r\n",
                body.len()
            );
            let request = [head.as_bytes(), body].concat();
            answers.get_mut().write_all(&request).await.unwrap();
            let mut length = 0;
            let mut header = String::new();
            while answers.read_line(&mut header).await.unwrap() > 2 {
                if let Some(value) = header.to_ascii_lowercase().strip_prefix("content-length:") {
                    length = value.trim().parse().unwrap();
                }
                header.clear();
            }
            let mut answer = vec![0; length];
            answers.read_exact(&mut answer).await.unwrap();
            answer
        })
        .await;
    });
}

/// [`tokio_bare_bridge`] with hyper's HTTP/1.1 client in place of the
/// hand-written exchange: one kept connection, driven by a task of its own
/// as the doors' are.
pub fn hyper_bare_bridge(server: &str) {
    on_tokio(async {
        let upstream = TokioIo::new(connect(server).await);
        let (mut sender, connection) = hyper::client::conn::http1::handshake(upstream).await.unwrap();
        tokio::spawn(connection);
        each_line(async |body: &[u8]| {
            let request = hyper::Request::post("/mcp")
                .header("host", server)
                .header("content-type", "application/json")
                .header("accept", "application/json, text/event-stream")
                .body(Full::new(Bytes::copy_from_slice(body)))
                .unwrap();
            sender.ready().await.unwrap();
            let response = sender.send_request(request).await.unwrap();
            response.into_body().collect().await.unwrap().to_bytes().to_vec()
        })
        .await;
    });
}

/// Each stdin line, without its newline, through `exchange`, and the
/// answer it gives written back as a line, until stdin ends.
async fn each_line(mut exchange: impl AsyncFnMut(&[u8]) -> Vec<u8>) {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt};
    let (mut stdin, mut stdout) = stdio_pipes();
    let mut line = Vec::new();
    while stdin.read_until(b'\n', &mut line).await.unwrap() > 0 {
        let mut answer = exchange(line.trim_ascii_end()).await;
        answer.push(b'\n');
        stdout.write_all(&answer).await.unwrap();
        line.clear();
    }
}

/// A connection to the server, as the doors open theirs.
async fn connect(server: &str) -> tokio::net::TcpStream {
    let upstream = tokio::net::TcpStream::connect(server).await.unwrap();
    upstream.set_nodelay(true).unwrap();
    upstream
}

/// Runs `work` on a current-thread runtime, as the doors run.
fn on_tokio(work: impl std::future::Future<Output = ()>) {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(work);
}

/// Stdin and stdout (pipes, as the bench starts each door) read and
/// written as their readiness comes.
fn stdio_pipes() -> (
    tokio::io::BufReader<tokio::net::unix::pipe::Receiver>,
    tokio::net::unix::pipe::Sender,
) {
    use std::os::fd::AsFd;
    use tokio::net::unix::pipe;
    let file = |fd: std::os::fd::BorrowedFd<'_>| std::fs::File::from(fd.try_clone_to_owned().unwrap());
    let stdin = pipe::Receiver::from_file(file(std::io::stdin().as_fd())).unwrap();
    let stdout = pipe::Sender::from_file(file(std::io::stdout().as_fd())).unwrap();
    (tokio::io::BufReader::new(stdin), stdout)
}
