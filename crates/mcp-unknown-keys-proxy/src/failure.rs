//! Why a door could not serve: the one error a door returns, which the
//! reports also give when they cannot open.

use std::process::ExitCode;

/// Why a door could not serve: said on stderr, with the exit code.
#[derive(Debug)]
pub struct Failure {
    /// What went wrong, as one line.
    pub message: String,
    /// The exit code: 2 for a command line that cannot work, 1 otherwise.
    pub code: u8,
}

impl Failure {
    /// A failure to say, exiting with `code`.
    pub fn new(message: String, code: u8) -> Failure {
        Failure { message, code }
    }

    /// Says the failure on stderr; the code to exit with.
    pub fn report(self) -> ExitCode {
        eprintln!("mcp-unknown-keys: {}", self.message);
        ExitCode::from(self.code)
    }
}
