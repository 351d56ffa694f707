//! Server-sent events, read as the WHATWG specification reads them: fed
//! chunk by chunk as they arrive, each complete event handed on at once.
//!
//! Only what MCP needs is kept: an event's `data` (its lines joined by
//! `\n`), its type, the last event id (for `Last-Event-ID`) and the
//! `retry` delay. Comments (`:` lines, keep-alives) are passed over.
//!
//! A line is held until its end arrives, so it is bounded too
//! ([`Parser::line_limit`]): a server that sends a line without end would
//! otherwise grow the parser's memory for as long as it sends.

// `pub` for the fuzz targets (the crate's `fuzzing` module), which link
// this reader; outside them nothing reaches it.
#![cfg_attr(not(feature = "fuzzing"), allow(unreachable_pub))]

/// One dispatched event.
#[derive(Debug, PartialEq, Eq)]
pub struct Event {
    /// The event's data, its `data:` lines joined by `\n`; `None` when it
    /// was longer than the parser's limit (not kept).
    pub data: Option<Vec<u8>>,
    /// The `event:` type, `None` for the default (`message`).
    pub kind: Option<String>,
}

impl Event {
    /// Whether this is a `message` event, the only type MCP sends.
    pub fn is_message(&self) -> bool {
        self.kind.as_deref().is_none_or(|kind| kind == "message")
    }
}

/// How much longer than the longest `data` kept a line may be: its field
/// name, colon and space (`data: `), with room to spare.
const LINE_SLACK: usize = 64;

/// A line longer than the parser's bound: the stream cannot be read on
/// (its next line is not known to start anywhere the parser could find
/// without holding this one).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LineTooLong {
    /// The bound the line went past, in bytes.
    pub limit: usize,
}

/// An incremental parser of one event stream.
#[derive(Debug)]
pub struct Parser {
    /// The longest `data` kept; a longer event is dispatched without it.
    limit: usize,
    /// The longest line read; a longer one ends the stream's reading.
    line_limit: usize,
    /// A line went past `line_limit`: nothing more is read.
    overflowed: bool,
    /// The current line, from earlier chunks.
    line: Vec<u8>,
    /// The last chunk ended with CR: a LF starting the next one ends nothing.
    after_cr: bool,
    /// Whether the stream's first bytes were looked at for a BOM.
    started: bool,
    /// How many bytes of a BOM the stream began with so far: a BOM may
    /// come split across chunks.
    bom: usize,
    data: Vec<u8>,
    has_data: bool,
    too_long: bool,
    kind: Option<String>,
    last_event_id: Option<String>,
    retry: Option<u64>,
}

impl Parser {
    /// A parser that keeps events' data up to `limit` bytes, and reads
    /// lines up to `limit` and a field name's length (see
    /// [`Parser::with_line_limit`] to bound them otherwise).
    pub fn new(limit: usize) -> Parser {
        Parser {
            limit,
            line_limit: limit.saturating_add(LINE_SLACK),
            overflowed: false,
            line: Vec::new(),
            after_cr: false,
            started: false,
            bom: 0,
            data: Vec::new(),
            has_data: false,
            too_long: false,
            kind: None,
            last_event_id: None,
            retry: None,
        }
    }

    /// Bounds each line to `max_data` bytes of a field's value (and the
    /// field's name), whatever `data` is kept: a parser that keeps no data
    /// still reads the stream's events up to this.
    pub fn with_line_limit(mut self, max_data: usize) -> Parser {
        self.line_limit = max_data.saturating_add(LINE_SLACK);
        self
    }

    /// A new stream follows (a reconnection): what was read of the last
    /// one's line and event is let go, its last event id and `retry` kept.
    pub fn new_stream(&mut self) {
        *self = Parser {
            last_event_id: self.last_event_id.take(),
            retry: self.retry,
            ..Parser::new(self.limit).with_line_limit(self.line_limit.saturating_sub(LINE_SLACK))
        };
    }

    /// Changes the longest `data` kept, from the next line on.
    pub fn set_limit(&mut self, limit: usize) {
        self.limit = limit;
    }

    /// The id of the last event that set one: what `Last-Event-ID` resumes
    /// from.
    pub fn last_event_id(&self) -> Option<&str> {
        self.last_event_id.as_deref()
    }

    /// The reconnection delay the server last asked for, in milliseconds.
    pub fn retry(&self) -> Option<u64> {
        self.retry
    }

    /// Reads `chunk`, calling `dispatch` for each event it completes. A
    /// line longer than the bound ([`Parser::with_line_limit`]) is an error, whether its end
    /// has come or not: the line is let go, and every later chunk is
    /// refused alike.
    pub fn feed(&mut self, mut chunk: &[u8], mut dispatch: impl FnMut(Event)) -> Result<(), LineTooLong> {
        let too_long = LineTooLong {
            limit: self.line_limit,
        };
        if self.overflowed {
            return Err(too_long);
        }
        if !self.started {
            const BOM: &[u8] = b"\xEF\xBB\xBF";
            while self.bom < BOM.len() {
                match chunk.first() {
                    None => return Ok(()),
                    Some(&byte) if byte == BOM[self.bom] => {
                        self.bom += 1;
                        chunk = &chunk[1..];
                    }
                    Some(_) => {
                        // Not a BOM after all: what was taken for one
                        // starts the first line.
                        self.line.extend_from_slice(&BOM[..self.bom]);
                        break;
                    }
                }
            }
            self.started = true;
        }
        if self.after_cr {
            self.after_cr = false;
            chunk = chunk.strip_prefix(b"\n").unwrap_or(chunk);
        }
        while let Some(end) = memchr::memchr2(b'\n', b'\r', chunk) {
            if self.line.len() + end > self.line_limit {
                return Err(self.overflow());
            }
            let line_end_is_cr = chunk[end] == b'\r';
            if self.line.is_empty() {
                self.process(&chunk[..end], &mut dispatch);
            } else {
                let mut line = std::mem::take(&mut self.line);
                line.extend_from_slice(&chunk[..end]);
                self.process(&line, &mut dispatch);
                line.clear();
                self.line = line;
            }
            chunk = &chunk[end + 1..];
            if line_end_is_cr {
                match chunk.first() {
                    Some(b'\n') => chunk = &chunk[1..],
                    Some(_) => {}
                    None => self.after_cr = true,
                }
            }
        }
        if self.line.len() + chunk.len() > self.line_limit {
            return Err(self.overflow());
        }
        self.line.extend_from_slice(chunk);
        Ok(())
    }

    /// A line went past the bound: what was held of it, and of its event,
    /// is let go.
    fn overflow(&mut self) -> LineTooLong {
        self.overflowed = true;
        self.line = Vec::new();
        self.data = Vec::new();
        LineTooLong {
            limit: self.line_limit,
        }
    }

    /// One line, without its end.
    fn process(&mut self, line: &[u8], dispatch: &mut impl FnMut(Event)) {
        if line.is_empty() {
            self.dispatch(dispatch);
            return;
        }
        if line[0] == b':' {
            return;
        }
        let (field, value) = match memchr::memchr(b':', line) {
            Some(colon) => {
                let value = &line[colon + 1..];
                (&line[..colon], value.strip_prefix(b" ").unwrap_or(value))
            }
            None => (line, &b""[..]),
        };
        match field {
            b"data" => self.push_data(value),
            b"event" => self.kind = Some(String::from_utf8_lossy(value).into_owned()),
            b"id" if !value.contains(&0) => {
                self.last_event_id = Some(String::from_utf8_lossy(value).into_owned());
            }
            b"retry" if !value.is_empty() && value.iter().all(u8::is_ascii_digit) => {
                self.retry = std::str::from_utf8(value).ok().and_then(|v| v.parse().ok());
            }
            _ => {}
        }
    }

    fn push_data(&mut self, value: &[u8]) {
        let newline = usize::from(self.has_data);
        self.has_data = true;
        if self.too_long {
            return;
        }
        if self.data.len() + newline + value.len() > self.limit {
            self.too_long = true;
            self.data = Vec::new();
            return;
        }
        if newline == 1 {
            self.data.push(b'\n');
        }
        self.data.extend_from_slice(value);
    }

    fn dispatch(&mut self, dispatch: &mut impl FnMut(Event)) {
        let kind = self.kind.take();
        if !self.has_data {
            self.too_long = false;
            return;
        }
        self.has_data = false;
        let data = if std::mem::take(&mut self.too_long) {
            None
        } else {
            Some(std::mem::take(&mut self.data))
        };
        dispatch(Event { data, kind });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn events(stream: &[u8], step: usize, limit: usize) -> (Vec<Event>, Parser) {
        let mut parser = Parser::new(limit).with_line_limit(usize::MAX);
        let mut out = Vec::new();
        for chunk in stream.chunks(step.max(1)) {
            parser.feed(chunk, |event| out.push(event)).unwrap();
        }
        (out, parser)
    }

    fn data(text: &str) -> Event {
        Event {
            data: Some(text.as_bytes().to_vec()),
            kind: None,
        }
    }

    #[test]
    fn events_are_read_alike_at_any_chunk_size_and_line_end() {
        let stream = b"\xEF\xBB\xBFid: 1\r\ndata: {\"a\":1}\r\n\r\n: keep-alive\n\nid:2\rdata:x\rdata: y\r\revent: ping\ndata\n\nretry: 1500\nid: 7\n\n";
        for step in [1, 2, 3, 5, 100] {
            let (out, parser) = events(stream, step, 1000);
            assert_eq!(
                out,
                [
                    data("{\"a\":1}"),
                    data("x\ny"),
                    Event {
                        data: Some(Vec::new()),
                        kind: Some("ping".into())
                    }
                ],
                "step {step}"
            );
            assert!(out[0].is_message() && !out[2].is_message());
            assert_eq!(parser.last_event_id(), Some("7"));
            assert_eq!(parser.retry(), Some(1500));
        }
    }

    #[test]
    fn a_bom_is_dropped_however_the_stream_is_cut() {
        // Found by the fuzz target `sse_parser`: a BOM cut across chunks
        // was kept, and the first field misread.
        for step in [1, 2, 3, 100] {
            let (_, parser) = events(b"\xEF\xBB\xBFid: a\n\n", step, 10);
            assert_eq!(parser.last_event_id(), Some("a"), "step {step}");
            let (_, parser) = events(b"\xEF\xBBid: a\n\nid: b\n\n", step, 10);
            assert_eq!(parser.last_event_id(), Some("b"), "not a BOM, step {step}");
        }
    }

    #[test]
    fn a_priming_event_without_data_sets_the_id_and_dispatches_nothing() {
        let (out, parser) = events(b"id: abc\ndata:\n\nid: def\n\n", 4, 100);
        assert_eq!(out, [data("")]);
        assert_eq!(parser.last_event_id(), Some("def"));
    }

    #[test]
    fn an_unfinished_event_is_not_dispatched() {
        let (out, _) = events(b"data: partial\n", 3, 100);
        assert!(out.is_empty());
    }

    #[test]
    fn data_over_the_limit_is_dispatched_without_it() {
        let (out, _) = events(b"data: 0123456789\ndata: x\n\ndata: ok\n\n", 3, 5);
        assert_eq!(
            out,
            [
                Event {
                    data: None,
                    kind: None
                },
                data("ok")
            ]
        );
    }

    #[test]
    fn a_line_past_the_bound_is_let_go_with_or_without_its_end() {
        let long = [b"data: ".as_slice(), &[b'x'; 80]].concat();
        for end in [&b""[..], b"\n\n"] {
            for step in [1, 4, 100] {
                let mut parser = Parser::new(4).with_line_limit(5);
                assert_eq!(parser.line_limit, 5 + LINE_SLACK);
                let long = [b"data: ok\n\n".as_slice(), &long, end, b"data: later\n\n"].concat();
                let mut out = Vec::new();
                let mut refused = None;
                for chunk in long.chunks(step) {
                    if let Err(error) = parser.feed(chunk, |event| out.push(event)) {
                        refused.get_or_insert(error);
                    }
                    assert!(parser.line.len() <= parser.line_limit);
                }
                assert_eq!(
                    refused,
                    Some(LineTooLong {
                        limit: 5 + LINE_SLACK
                    }),
                    "step {step}"
                );
                assert_eq!(out, [data("ok")], "nothing after the long line, step {step}");
            }
        }
    }

    proptest::proptest! {
        #[test]
        fn any_split_of_a_stream_gives_the_same_events(
            parts in proptest::collection::vec(proptest::sample::select(vec![
                "data: a", "data:b", "data", "id: 1", "event: x", ": c", "retry: 5", "\n", "\r", "\r\n", "\u{0}",
            ]), 0..60),
            step in 1usize..9,
        ) {
            let stream = parts.concat();
            let (whole, whole_parser) = events(stream.as_bytes(), usize::MAX, 64);
            let (split, split_parser) = events(stream.as_bytes(), step, 64);
            proptest::prop_assert_eq!(whole, split);
            proptest::prop_assert_eq!(whole_parser.last_event_id(), split_parser.last_event_id());
        }
    }
}
