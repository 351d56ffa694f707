//! Everything the server wrote reaches the client, however late the client
//! reads and whatever the server left running.

use crate::support;

use std::io::Read;
use std::process::Stdio;
use std::thread;
use std::time::Duration;

use support::{proxy_command, wait_with_patience};

#[test]
fn a_long_line_written_just_before_the_server_exits_reaches_a_client_that_reads_late() {
    // The line is longer than a pipe holds, so part of it waits in the
    // proxy, whose write blocks until the client reads: that is progress,
    // not silence.
    let mut proxy = proxy_command(
        &[],
        &["sh", "-c", "head -c 100000 /dev/zero | tr '\\0' x; echo; exit 0"],
    )
    .stdin(Stdio::null())
    .spawn()
    .unwrap();
    thread::sleep(Duration::from_secs(1));
    let mut received = Vec::new();
    proxy.stdout.take().unwrap().read_to_end(&mut received).unwrap();
    let status = wait_with_patience(&mut proxy);
    assert_eq!(received.len(), 100_001, "every byte, newline included");
    assert!(received[..100_000].iter().all(|&b| b == b'x'));
    assert!(status.success());
}

#[test]
fn output_a_server_wrote_in_many_pieces_before_exiting_all_arrives() {
    // 4 MiB in lines of 1000 bytes, then exit at once: the proxy learns of
    // the exit long before it has forwarded the output.
    let mut proxy = proxy_command(
        &[],
        &[
            "sh",
            "-c",
            "yes \"$(head -c 999 /dev/zero | tr '\\0' y)\" | head -c 4194304; exit 3",
        ],
    )
    .stdin(Stdio::null())
    .spawn()
    .unwrap();
    thread::sleep(Duration::from_millis(1500));
    let mut received = Vec::new();
    proxy.stdout.take().unwrap().read_to_end(&mut received).unwrap();
    assert_eq!(received.len(), 4 << 20);
    assert_eq!(wait_with_patience(&mut proxy).code(), Some(3));
}
