//! For the tests of `McpServer` and the example server: scratch
//! directories, a runtime, processes and their stderr.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

/// A fresh directory under the system's temporary directory, removed on
/// drop.
pub struct ScratchDir(PathBuf);

impl ScratchDir {
    /// An empty scratch directory.
    pub fn new() -> ScratchDir {
        static COUNT: AtomicUsize = AtomicUsize::new(0);
        let path = std::env::temp_dir().join(format!(
            "mcp-unknown-keys-test-{}-{}",
            std::process::id(),
            COUNT.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&path);
        std::fs::create_dir_all(&path).unwrap();
        ScratchDir(path.canonicalize().unwrap())
    }

    /// A scratch directory with `notes.txt`, `README.md` and `src/app.rs`.
    pub fn seeded() -> ScratchDir {
        let dir = ScratchDir::new();
        std::fs::create_dir_all(dir.0.join("src")).unwrap();
        std::fs::write(
            dir.0.join("notes.txt"),
            "Notes\n- fs_read takes path, offset and limit.\n",
        )
        .unwrap();
        std::fs::write(dir.0.join("README.md"), "# Scratch\n").unwrap();
        std::fs::write(
            dir.0.join("src/app.rs"),
            "//! A small application to read.\n\nfn main() {}\n",
        )
        .unwrap();
        dir
    }

    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for ScratchDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Runs a future to completion on a fresh runtime.
pub fn block_on<F: std::future::Future>(future: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(future)
}

/// The server's stderr so far, once it has written at least one line (a
/// reader task collects it, so allow it a moment).
pub async fn stderr_of(server: &mcp_unknown_keys::McpServer) -> Vec<String> {
    for _ in 0..250 {
        let tail = server.stderr_tail();
        if !tail.is_empty() {
            return tail;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    panic!("the server wrote nothing to stderr within 5 s")
}
