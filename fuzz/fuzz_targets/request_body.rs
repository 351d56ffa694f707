//! The reverse proxy's request body reader (`http/reverse/request.rs` of
//! the proxy engine crate, linked through its `fuzzing` module), on any body cut into any frames, with a length limit and a
//! budget of bytes held at once read from the input. Nothing may panic or
//! hang; what it sends on is the body, byte for byte, whether read whole or
//! streamed; it reads whole exactly the bodies within the limit and the
//! budget, with the length known; and every byte held against the budget
//! is given back once the bytes sent are let go.

#![no_main]

use bytes::Bytes;
use http_body::{Body as _, Frame};
use http_body_util::BodyExt;
use libfuzzer_sys::fuzz_target;

use mcp_unknown_keys_proxy::fuzzing::{Budget, BoxError, Request, read_request};

/// A body of these frames, each ready at once.
struct Frames(std::collections::VecDeque<Bytes>);

impl http_body::Body for Frames {
    type Data = Bytes;
    type Error = BoxError;

    fn poll_frame(
        mut self: std::pin::Pin<&mut Self>,
        _: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<Frame<Bytes>, BoxError>>> {
        std::task::Poll::Ready(self.0.pop_front().map(|piece| Ok(Frame::data(piece))))
    }
}

fuzz_target!(|data: &[u8]| {
    let [limit, budget, cuts @ ..] = data else { return };
    let (limit, budget) = (usize::from(*limit), usize::from(*budget));
    // The body's frames: each byte below 8 ends a frame; the others are
    // the body.
    let mut frames = std::collections::VecDeque::new();
    let mut frame = Vec::new();
    for &byte in cuts {
        if byte < 8 {
            frames.push_back(Bytes::from(std::mem::take(&mut frame)));
        } else {
            frame.push(byte);
        }
    }
    frames.push_back(Bytes::from(frame));
    let body: Vec<u8> = frames.iter().flat_map(|frame| frame.iter().copied()).collect();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap();
    runtime.block_on(async {
        let held = Budget::of(budget);
        let hour = std::time::Duration::from_secs(3600);
        let far = tokio::time::Instant::now() + hour;
        let read = read_request(Frames(frames), limit, &held, far, hour).await;
        let sent = match read {
            Ok(Request::Whole(bytes, whole)) => {
                assert!(body.len() <= limit && body.len() <= budget, "{} bytes read whole", body.len());
                assert_eq!(bytes, body);
                assert_eq!(whole.size_hint().exact(), Some(body.len() as u64));
                whole.collect().await.unwrap().to_bytes()
            }
            Ok(Request::Streamed { head, body: streamed }) => {
                assert!(body.starts_with(&head), "what was read is the body's head");
                drop(head);
                assert!(body.len() > limit || body.len() > budget, "{} bytes streamed", body.len());
                streamed.collect().await.unwrap().to_bytes()
            }
            Err(error) => panic!("a body that is all there was not read: {error}"),
        };
        assert_eq!(sent, body, "the body goes on as it came");
        // What was sent may share the bytes held: they are given back with it.
        drop(sent);
        assert_eq!(held.held(), 0, "every byte held is given back");
    });
});
