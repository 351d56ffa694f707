//! `audit --format html` in a real browser: headless Chromium loads the page
//! with no console message (the page has no script, and its policy refuses
//! any, so a name that slipped out of its escaping would be reported there),
//! its names stay text in the DOM, and its screenshot is no blank page.
//!
//! Needs Chromium: `scripts/test-deps` installs Debian's `chromium` when
//! `/usr/bin/chromium` is missing; `MCP_UK_CHROMIUM` names another.

use crate::audit_support;

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use audit_support::*;
use serde_json::json;

/// The browser, or a failure saying how to get it.
fn chromium() -> PathBuf {
    let path = std::env::var_os("MCP_UK_CHROMIUM")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/usr/bin/chromium"));
    assert!(
        path.is_file(),
        "{} is missing: this test drives a real headless browser. Run `eval \"$(scripts/test-deps)\"` \
         (it installs Debian's chromium: apt-get update && apt-get install -y chromium), \
         or set MCP_UK_CHROMIUM to a Chromium binary",
        path.display()
    );
    path
}

/// What one run of the browser printed.
struct Browsed {
    stdout: String,
    stderr: String,
}

/// Runs headless Chromium on `page` with `args`, in a fresh profile, with
/// no network service of its own and its console on stderr; killed if it
/// has not ended within two minutes.
fn browse(page: &Path, args: &[&str]) -> Browsed {
    let profile = tempfile::tempdir().expect("a profile dir");
    let mut child = Command::new(chromium())
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--enable-logging=stderr",
            "--v=0",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .args(args)
        .arg(format!("file://{}", page.display()))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start chromium");
    let mut stdout = child.stdout.take().expect("stdout");
    let mut stderr = child.stderr.take().expect("stderr");
    let out = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = stdout.read_to_string(&mut text);
        text
    });
    let err = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = stderr.read_to_string(&mut text);
        text
    });
    let started = Instant::now();
    while child.try_wait().expect("wait for chromium").is_none() {
        if started.elapsed() > Duration::from_secs(120) {
            let _ = child.kill();
            panic!("chromium did not end within two minutes");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    Browsed {
        stdout: out.join().expect("stdout reader"),
        stderr: err.join().expect("stderr reader"),
    }
}

/// The console messages and uncaught errors Chromium logged.
fn console(browsed: &Browsed) -> Vec<&str> {
    browsed
        .stderr
        .lines()
        .filter(|line| line.contains(":CONSOLE") || line.contains("Uncaught"))
        .collect()
}

/// A report over calls whose names are markup, written as a page in `dir`.
fn page_in(dir: &Path) -> PathBuf {
    let input = lines(&[
        json!({"tools": [{"name": "search", "inputSchema": {"properties": {"q": {}, "per_page": {}}}}]}),
        json!({"model": "gpt-4o", "choices": [{"message": {"tool_calls": [
            openai_call("1", "search", json!(r#"{"q":"a","perPage":2}"#)),
            openai_call("2", "<img src=x onerror=alert(1)>", json!(r#"{"q":"a"}"#)),
            openai_call("3", "search", json!(r#"{"q":"a","<script>alert(2)</script>":1}"#)),
        ]}}]}),
        json!({"model": "claude-sonnet-4", "choices": [{"message": {"tool_calls": [
            openai_call("4", "search", json!(r#"{"q":"b"}"#)),
            openai_call("5", "search", json!(r#"{"q":"b","limit":3}"#)),
        ]}}]}),
    ]);
    let run = audit(&["--format", "html"], &input);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let page = dir.join("report.html");
    std::fs::write(&page, run.stdout).expect("write the page");
    page
}

#[test]
fn the_page_loads_with_no_console_message_and_its_names_stay_text() {
    let dir = tempfile::tempdir().expect("temp dir");
    // The console is read from Chromium's log: a page that throws must be
    // seen to throw there, or a silent log would pass any page.
    let control = dir.path().join("control.html");
    std::fs::write(
        &control,
        "<!DOCTYPE html><p>x</p><script>undefined_function()</script>",
    )
    .unwrap();
    let thrown = browse(&control, &["--dump-dom"]);
    assert!(
        console(&thrown)
            .iter()
            .any(|line| line.contains("Uncaught ReferenceError")),
        "Chromium's log shows no console error of a page that throws: it cannot vouch for the report\n{}",
        thrown.stderr
    );

    let page = page_in(dir.path());
    let browsed = browse(&page, &["--dump-dom"]);
    assert_eq!(console(&browsed), Vec::<&str>::new(), "{}", browsed.stderr);
    let dom = &browsed.stdout;
    assert!(dom.contains("<h2>Rates by model</h2>"), "no page loaded: {dom}");
    // The names are text in the DOM, never elements.
    assert!(dom.contains("&lt;img src=x onerror=alert(1)&gt;"), "{dom}");
    assert!(dom.contains("&lt;script&gt;alert(2)&lt;/script&gt;"), "{dom}");
    assert!(!dom.contains("<img") && !dom.contains("<script"), "{dom}");
}

#[test]
fn the_screenshot_shows_the_report_and_its_bars() {
    let dir = tempfile::tempdir().expect("temp dir");
    let page = page_in(dir.path());
    let shot = dir.path().join("report.png");
    let browsed = browse(
        &page,
        &[
            &format!("--screenshot={}", shot.display()),
            "--window-size=1200,1600",
        ],
    );
    let image = png::decode(
        &std::fs::read(&shot)
            .unwrap_or_else(|e| panic!("no screenshot at {}: {e}\n{}", shot.display(), browsed.stderr)),
    );
    assert_eq!((image.width, image.height), (1200, 1600));
    let background = image.pixel(0, 0);
    let drawn = image.pixels().filter(|pixel| *pixel != background).count();
    let share = drawn as f64 / (image.width * image.height) as f64;
    // Text, tables and bars cover a few percent of a page; a blank one none.
    assert!(
        share > 0.01,
        "the screenshot is (nearly) blank: {share:.4} of its pixels drawn"
    );
    // The bars' colour (#d9480f) is there: the charts were drawn.
    let bars = image
        .pixels()
        .filter(|[r, g, b]| r.abs_diff(0xd9) < 8 && g.abs_diff(0x48) < 8 && b.abs_diff(0x0f) < 8)
        .count();
    assert!(bars > 500, "no bar drawn: {bars} pixels of the bars' colour");
}

/// Just enough PNG to read a browser's screenshot: 8-bit RGB or RGBA,
/// not interlaced, inflated with the flate2 the other tests use.
mod png {
    use std::io::Read;

    pub struct Image {
        pub width: usize,
        pub height: usize,
        /// RGB, row by row.
        rgb: Vec<[u8; 3]>,
    }

    impl Image {
        pub fn pixel(&self, x: usize, y: usize) -> [u8; 3] {
            self.rgb[y * self.width + x]
        }

        pub fn pixels(&self) -> impl Iterator<Item = [u8; 3]> + '_ {
            self.rgb.iter().copied()
        }
    }

    pub fn decode(bytes: &[u8]) -> Image {
        assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n", "not a PNG");
        let mut at = 8;
        let (mut width, mut height, mut channels) = (0, 0, 0);
        let mut data = Vec::new();
        while at + 8 <= bytes.len() {
            let length = u32::from_be_bytes(bytes[at..at + 4].try_into().unwrap()) as usize;
            let kind = &bytes[at + 4..at + 8];
            let body = &bytes[at + 8..at + 8 + length];
            match kind {
                b"IHDR" => {
                    width = u32::from_be_bytes(body[0..4].try_into().unwrap()) as usize;
                    height = u32::from_be_bytes(body[4..8].try_into().unwrap()) as usize;
                    assert_eq!(body[8], 8, "8-bit samples");
                    channels = match body[9] {
                        2 => 3,
                        6 => 4,
                        other => panic!("colour type {other} is not read here"),
                    };
                    assert_eq!(body[12], 0, "not interlaced");
                }
                b"IDAT" => data.extend_from_slice(body),
                b"IEND" => break,
                _ => {}
            }
            at += 12 + length;
        }
        let mut raw = Vec::new();
        flate2::read::ZlibDecoder::new(&data[..])
            .read_to_end(&mut raw)
            .expect("inflate the image");
        let stride = width * channels;
        assert_eq!(raw.len(), height * (stride + 1), "the image's size");
        let mut rows: Vec<u8> = Vec::with_capacity(height * stride);
        for y in 0..height {
            let filter = raw[y * (stride + 1)];
            let line = &raw[y * (stride + 1) + 1..(y + 1) * (stride + 1)];
            let start = rows.len();
            for x in 0..stride {
                let a = if x >= channels {
                    rows[start + x - channels]
                } else {
                    0
                };
                let b = if y > 0 { rows[start + x - stride] } else { 0 };
                let c = if y > 0 && x >= channels {
                    rows[start + x - stride - channels]
                } else {
                    0
                };
                let predicted = match filter {
                    0 => 0,
                    1 => a,
                    2 => b,
                    3 => ((u16::from(a) + u16::from(b)) / 2) as u8,
                    4 => paeth(a, b, c),
                    other => panic!("filter {other}"),
                };
                rows.push(line[x].wrapping_add(predicted));
            }
        }
        let rgb = rows
            .chunks_exact(channels)
            .map(|pixel| [pixel[0], pixel[1], pixel[2]])
            .collect();
        Image { width, height, rgb }
    }

    fn paeth(a: u8, b: u8, c: u8) -> u8 {
        let p = i16::from(a) + i16::from(b) - i16::from(c);
        let (pa, pb, pc) = (
            (p - i16::from(a)).abs(),
            (p - i16::from(b)).abs(),
            (p - i16::from(c)).abs(),
        );
        if pa <= pb && pa <= pc {
            a
        } else if pb <= pc {
            b
        } else {
            c
        }
    }
}
