//! The remote doors' SSE parser (`http/sse.rs` of the proxy engine crate,
//! linked through its `fuzzing` module), on any bytes, with small bounds read from the input's first two bytes so
//! that they are reached. Nothing may panic or hang; the stream read in
//! one piece and read in the pieces the third byte chooses gives the same
//! events, the same last event id, and the same refusal (a line past the
//! bound, with or without its end); no event's data is longer than the
//! bound, and once a line is refused every later piece is refused too.

#![no_main]

use libfuzzer_sys::fuzz_target;

use mcp_unknown_keys_proxy::fuzzing::{Event, LineTooLong, Parser};

fn read(stream: &[u8], step: usize, limit: usize, line: usize) -> (Vec<Event>, Option<LineTooLong>, Option<String>) {
    let mut parser = Parser::new(limit).with_line_limit(line);
    let mut events = Vec::new();
    let mut refused = None;
    for piece in stream.chunks(step.max(1)) {
        match parser.feed(piece, |event| events.push(event)) {
            Ok(()) => assert!(refused.is_none(), "a piece read after a refusal"),
            Err(error) => {
                refused.get_or_insert(error);
            }
        }
    }
    (events, refused, parser.last_event_id().map(str::to_owned))
}

fuzz_target!(|data: &[u8]| {
    let [limit, line, step, stream @ ..] = data else { return };
    let (limit, line, step) = (usize::from(*limit % 64), usize::from(*line % 128), usize::from(*step));
    let whole = read(stream, usize::MAX, limit, line);
    for event in &whole.0 {
        if let Some(data) = &event.data {
            assert!(data.len() <= limit, "data of {} bytes kept past {limit}", data.len());
        }
    }
    let split = read(stream, step, limit, line);
    assert_eq!(whole, split, "read whole and in pieces of {step}");
});
