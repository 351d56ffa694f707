//! `mcp-unknown-keys demo`: the README's main command.

use std::process::Command;

#[test]
fn the_demo_shows_each_warning_once_runs_every_call_and_exits_zero() {
    let output = Command::new(env!("CARGO_BIN_EXE_mcp-unknown-keys"))
        .arg("demo")
        .output()
        .unwrap();
    let stdout = String::from_utf8(output.stdout).unwrap();
    assert!(
        output.status.success(),
        "demo failed: {}\n{stdout}",
        String::from_utf8_lossy(&output.stderr)
    );

    let warnings: Vec<&str> = stdout
        .lines()
        .filter(|l| l.trim_start().starts_with("mcp-unknown-keys:"))
        .collect();
    assert_eq!(
        warnings,
        [
            "    mcp-unknown-keys: fs_read was called with undeclared argument(s) ffset, the rest; \
             it declares limit, offset, path, reason — ffset → offset? (truncated), the rest (fragment); \
             offset was not sent: the server will use its default, 0",
            "    mcp-unknown-keys: fs_task was called with undeclared argument(s) nvestigate, the rest; \
             it declares prompt, reason — nvestigate (fragment), the rest (fragment)",
        ],
        "{stdout}"
    );
    // The reason reached the host, not the server; the policy asked about the write.
    assert!(
        stdout.contains("reason given: fs_list: to see what the project holds"),
        "{stdout}"
    );
    assert!(stdout.contains("    list {\"path\":\".\"}\n"), "{stdout}");
    assert!(stdout.contains("policy asks: fs_write (call_4)"), "{stdout}");
    // Every call ran: the read really happened.
    for id in ["call_1", "call_2", "call_3", "call_4", "call_5"] {
        assert!(
            stdout.contains(&format!("    {id} ok: ")),
            "{id} did not succeed:\n{stdout}"
        );
    }
    assert!(stdout.contains("call_1 ok: //! A small application"), "{stdout}");
    // Not a terminal: no colour. The example server's own log stays quiet.
    assert!(!stdout.contains('\u{1b}'));
    assert_eq!(String::from_utf8_lossy(&output.stderr), "");
}

#[test]
fn a_reader_gone_away_ends_the_demo_quietly() {
    use std::io::Read;
    use std::process::Stdio;
    let mut demo = Command::new(env!("CARGO_BIN_EXE_mcp-unknown-keys"))
        .arg("demo")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // As `demo | head -1`: the first line read, then the pipe closed.
    let mut first = [0u8; 8];
    demo.stdout.take().unwrap().read_exact(&mut first).unwrap();
    let mut stderr = String::new();
    demo.stderr.take().unwrap().read_to_string(&mut stderr).unwrap();
    let status = demo.wait().unwrap();
    assert!(status.success(), "{status}: {stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
}
