//! The policy's command decomposer, on any text: read as a shell line, and
//! as an argv whose words are separated by NUL. Nothing may panic or hang,
//! and every command it answers can be shown.

#![no_main]

use libfuzzer_sys::fuzz_target;
use mcp_unknown_keys_policy::command::{decompose_argv, decompose_line};

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    for command in decompose_line(&text) {
        let _ = command.to_string();
    }
    let words: Vec<&str> = text.split('\0').collect();
    for command in decompose_argv(&words) {
        let _ = command.to_string();
    }
});
