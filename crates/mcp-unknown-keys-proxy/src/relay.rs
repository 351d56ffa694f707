//! The byte relay: copies one direction of the stdio stream exactly, and
//! shows each complete line to a tap on the way.
//!
//! Bytes are forwarded as they are read, whatever they are: the relay never
//! parses, re-encodes or holds back data. It only finds line ends, so that a
//! tap sees whole messages. One read buffer per direction and blocking
//! writes mean a peer that stops reading stops the relay too: nothing is
//! buffered without bound.

use std::io::{ErrorKind, Read, Write};
use std::ops::Range;
use std::panic::{AssertUnwindSafe, catch_unwind};

/// How much one read takes at most.
const CHUNK: usize = 64 * 1024;

/// A buffer that grew past this for one long line is released afterwards.
const KEEP_CAPACITY: usize = 1024 * 1024;

/// What one direction of the relay shows its lines to.
pub(crate) trait LineTap {
    /// The longest line worth showing, asked when a line's first bytes
    /// arrive (not earlier: what the tap expects may change meanwhile). A longer
    /// line is forwarded without being shown, so a line that spans reads is
    /// copied aside only up to this length.
    fn keep_limit(&self) -> usize;

    /// A complete line, without its newline, shown before the newline is
    /// forwarded: whatever the tap learns here is known before the peer can
    /// act on the line. Returns whether [`LineTap::after_forward`] wants the
    /// line too.
    fn before_forward(&self, line: &[u8]) -> bool;

    /// A line, shown once its newline has been forwarded: work that must
    /// not delay the message.
    fn after_forward(&self, line: &[u8]);

    /// A line longer than [`LineTap::keep_limit`] is being forwarded
    /// without being shown: said once per such line, when it is found too
    /// long. Nothing by default.
    fn passed_over(&self) {}

    /// A line passed over as [`LineTap::passed_over`] says, with its first
    /// bytes `head` (as many as came before it was found too long): what
    /// they show of it. [`LineTap::passed_over`] by default.
    fn passed_over_line(&self, head: &[u8]) {
        let _ = head;
        self.passed_over();
    }

    /// Shows a whole message forwarded in one piece, such as an HTTP body or
    /// an SSE event: before and after at once when it fits, else passed over.
    /// (The remote doors' way in: without them, nothing calls it.)
    #[cfg_attr(not(feature = "remote"), allow(dead_code))]
    fn show(&self, message: &[u8]) {
        if self.show_before(message) {
            self.after_forward(message);
        }
    }

    /// [`LineTap::show`] up to the forwarding: what a door that forwards
    /// the message later calls, waking the worker itself once the message
    /// is on its way. Returns whether [`LineTap::after_forward`] wants it.
    #[cfg_attr(not(feature = "remote"), allow(dead_code))]
    fn show_before(&self, message: &[u8]) -> bool {
        if message.len() > self.keep_limit() {
            self.passed_over();
            return false;
        }
        self.before_forward(message)
    }
}

/// Why a relay stopped before the end of its input.
#[derive(Debug)]
pub(crate) enum Stopped {
    /// Reading the input failed.
    Read,
    /// Writing the output failed (the peer went away).
    Write,
}

/// Copies `from` to `to` until `from` ends, showing each line to `tap`.
/// A last line without a newline is forwarded and shown too.
pub(crate) fn relay(mut from: impl Read, mut to: impl Write, tap: &impl LineTap) -> Result<(), Stopped> {
    let mut buf = vec![0u8; CHUNK];
    let mut lines = Lines::new();
    loop {
        let n = match from.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == ErrorKind::Interrupted => continue,
            Err(_) => return Err(Stopped::Read),
        };
        let chunk = &buf[..n];
        lines.before_forward(chunk, tap);
        to.write_all(chunk)
            .and_then(|()| to.flush())
            .map_err(|_| Stopped::Write)?;
        lines.after_forward(chunk, tap);
    }
    lines.finish(tap);
    Ok(())
}

/// Reads `from` to its end and throws the bytes away: keeps a peer whose
/// counterpart went away from blocking on a full pipe.
pub(crate) fn drain(mut from: impl Read) {
    let mut buf = vec![0u8; CHUNK];
    loop {
        match from.read(&mut buf) {
            Ok(0) => return,
            Ok(_) => {}
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(_) => return,
        }
    }
}

/// Cuts the stream into lines across reads.
struct Lines {
    /// The start of the current line, read in earlier chunks.
    partial: Vec<u8>,
    /// The current line is longer than `limit`: it is not shown.
    too_long: bool,
    /// The keep limit of the current line, asked when its first bytes came.
    limit: usize,
    /// Lines of the current chunk the tap wants after forwarding.
    deferred: Vec<Range<usize>>,
    /// A line completed in this chunk from `partial`, wanted after forwarding.
    held: Vec<u8>,
}

impl Lines {
    fn new() -> Lines {
        Lines {
            partial: Vec::new(),
            too_long: false,
            limit: 0,
            deferred: Vec::new(),
            held: Vec::new(),
        }
    }

    /// Shows the lines `chunk` completes; remembers its unfinished tail.
    fn before_forward(&mut self, chunk: &[u8], tap: &impl LineTap) {
        let mut start = 0;
        for end in memchr::memchr_iter(b'\n', chunk) {
            let piece = &chunk[start..end];
            if !self.too_long {
                if self.partial.is_empty() {
                    if piece.len() > tap.keep_limit() {
                        shielded(|| tap.passed_over_line(piece));
                    } else if shielded(|| tap.before_forward(piece)) {
                        self.deferred.push(start..end);
                    }
                } else if self.partial.len() + piece.len() <= self.limit {
                    self.partial.extend_from_slice(piece);
                    if shielded(|| tap.before_forward(&self.partial)) {
                        std::mem::swap(&mut self.partial, &mut self.held);
                    }
                } else {
                    shielded(|| tap.passed_over_line(&self.partial));
                }
            }
            self.start_line();
            start = end + 1;
        }
        self.keep(&chunk[start..], tap);
    }

    /// Shows the lines deferred while `chunk` was forwarded.
    fn after_forward(&mut self, chunk: &[u8], tap: &impl LineTap) {
        if !self.held.is_empty() {
            shielded(|| tap.after_forward(&self.held));
            release(&mut self.held);
        }
        for range in self.deferred.drain(..) {
            shielded(|| tap.after_forward(&chunk[range]));
        }
    }

    /// Shows a last line that no newline ended.
    fn finish(&mut self, tap: &impl LineTap) {
        if !self.too_long && !self.partial.is_empty() && shielded(|| tap.before_forward(&self.partial)) {
            shielded(|| tap.after_forward(&self.partial));
        }
    }

    fn start_line(&mut self) {
        release(&mut self.partial);
        self.too_long = false;
    }

    fn keep(&mut self, tail: &[u8], tap: &impl LineTap) {
        if self.too_long || tail.is_empty() {
            return;
        }
        if self.partial.is_empty() {
            self.limit = tap.keep_limit();
        }
        if self.partial.len() + tail.len() <= self.limit {
            self.partial.extend_from_slice(tail);
        } else {
            self.too_long = true;
            let head = if self.partial.is_empty() {
                tail
            } else {
                &self.partial
            };
            shielded(|| tap.passed_over_line(head));
            release(&mut self.partial);
        }
    }
}

/// Runs a tap. Should a tap ever panic, the line is simply not tapped: the
/// bytes keep flowing (the relay's own state is untouched by a tap).
fn shielded<T: Default>(show: impl FnOnce() -> T) -> T {
    catch_unwind(AssertUnwindSafe(show)).unwrap_or_default()
}

/// Empties a buffer, giving back the memory of an unusually long line.
fn release(buf: &mut Vec<u8>) {
    if buf.capacity() > KEEP_CAPACITY {
        *buf = Vec::new();
    } else {
        buf.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::RefCell;
    use std::io;

    /// Records what it is shown; keeps lines up to `limit`.
    struct Recorder {
        limit: usize,
        before: RefCell<Vec<Vec<u8>>>,
        after: RefCell<Vec<Vec<u8>>>,
        passed_over: RefCell<usize>,
        /// The first bytes of each line passed over, as far as the test
        /// looks (its first five).
        heads: RefCell<Vec<Vec<u8>>>,
    }

    impl Recorder {
        fn new(limit: usize) -> Recorder {
            Recorder {
                limit,
                before: RefCell::default(),
                after: RefCell::default(),
                passed_over: RefCell::default(),
                heads: RefCell::default(),
            }
        }
    }

    impl LineTap for Recorder {
        fn keep_limit(&self) -> usize {
            self.limit
        }
        fn before_forward(&self, line: &[u8]) -> bool {
            self.before.borrow_mut().push(line.to_vec());
            line.starts_with(b"call")
        }
        fn after_forward(&self, line: &[u8]) {
            self.after.borrow_mut().push(line.to_vec());
        }
        fn passed_over(&self) {
            *self.passed_over.borrow_mut() += 1;
        }
        fn passed_over_line(&self, head: &[u8]) {
            self.heads.borrow_mut().push(head[..head.len().min(5)].to_vec());
            self.passed_over();
        }
    }

    /// A reader that returns at most `step` bytes per read.
    struct Trickle<'a> {
        data: &'a [u8],
        step: usize,
    }

    impl Read for Trickle<'_> {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            let n = self.step.min(buf.len()).min(self.data.len());
            buf[..n].copy_from_slice(&self.data[..n]);
            self.data = &self.data[n..];
            Ok(n)
        }
    }

    fn run(input: &[u8], step: usize, limit: usize) -> (Vec<u8>, Recorder) {
        let tap = Recorder::new(limit);
        let mut out = Vec::new();
        relay(Trickle { data: input, step }, &mut out, &tap).unwrap();
        (out, tap)
    }

    #[test]
    fn bytes_pass_unchanged_and_lines_are_shown_whole_at_any_read_size() {
        let input = b"list\ncall one\n\xff\xfe not utf-8\r\n\ncall two\npartial";
        for step in [1, 2, 3, 7, 64, 100_000] {
            let (out, tap) = run(input, step, 1000);
            assert_eq!(out, input);
            let expected: [&[u8]; 6] = [
                b"list",
                b"call one",
                b"\xff\xfe not utf-8\r",
                b"",
                b"call two",
                b"partial",
            ];
            assert_eq!(*tap.before.borrow(), expected, "step {step}");
            assert_eq!(*tap.after.borrow(), [b"call one".to_vec(), b"call two".to_vec()]);
        }
    }

    proptest::proptest! {
        #[test]
        fn any_stream_at_any_read_size_passes_unchanged_and_shows_each_line_that_fits(
            input in proptest::collection::vec(proptest::sample::select(vec![b'\n', b'a', b'{', 0xff]), 0..400),
            step in 1usize..70,
            limit in 0usize..40,
        ) {
            let (out, tap) = run(&input, step, limit);
            proptest::prop_assert_eq!(&out, &input);
            let mut segments: Vec<&[u8]> = input.split(|b| *b == b'\n').collect();
            if segments.last().is_some_and(|last| last.is_empty()) {
                segments.pop(); // nothing after the last newline
            }
            let expected: Vec<Vec<u8>> = segments.iter().filter(|s| s.len() <= limit).map(|s| s.to_vec()).collect();
            proptest::prop_assert_eq!(&*tap.before.borrow(), &expected);
            let too_long = segments.iter().filter(|s| s.len() > limit).count();
            proptest::prop_assert_eq!(*tap.passed_over.borrow(), too_long);
        }
    }

    #[test]
    fn a_tap_that_panics_loses_its_line_not_the_stream() {
        struct Panics;
        impl LineTap for Panics {
            fn keep_limit(&self) -> usize {
                usize::MAX
            }
            fn before_forward(&self, line: &[u8]) -> bool {
                assert!(line != b"boom", "a tap bug");
                true
            }
            fn after_forward(&self, _: &[u8]) {
                panic!("another tap bug");
            }
        }
        let input = b"one\nboom\ntwo\nthree";
        let mut out = Vec::new();
        relay(Trickle { data: input, step: 3 }, &mut out, &Panics).unwrap();
        assert_eq!(out, input);
    }

    #[test]
    fn lines_longer_than_the_limit_are_forwarded_but_not_shown() {
        let long = format!("call {}\ncall short\n", "x".repeat(500));
        for step in [1, 13, 100_000] {
            let (out, tap) = run(long.as_bytes(), step, 100);
            assert_eq!(out, long.as_bytes());
            assert_eq!(*tap.before.borrow(), [b"call short".to_vec()]);
            assert_eq!(*tap.passed_over.borrow(), 1);
            // What came of the line before it was found too long is shown,
            // so the tap can tell what it may be.
            assert_eq!(*tap.heads.borrow(), [b"call ".to_vec()], "{step}");
        }
    }
}
