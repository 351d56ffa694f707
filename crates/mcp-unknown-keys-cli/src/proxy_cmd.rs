//! `mcp-unknown-keys proxy [--log FILE] [--allow KEY]... [--quiet] -- COMMAND [ARG]...`,
//! or `proxy --url URL`, or `proxy --listen ADDR --upstream URL`: the
//! command line of the proxy engine's doors (`mcp-unknown-keys-proxy`),
//! which this file only reads and hands over.

use std::ffi::OsString;
use std::path::PathBuf;
use std::process::ExitCode;

use mcp_unknown_keys_proxy::state::STATE_DIR_VAR;
use mcp_unknown_keys_proxy::{ReportOptions, Stdio, run};

/// The command line of `proxy`.
#[derive(clap::Args, Debug)]
pub(crate) struct Args {
    /// Also append each warning to FILE, as one JSON object per line
    /// (`tool`, `unknown_keys`, `declared_keys`, `id`, `hints`,
    /// `missing_keys`, `unknown_paths`: keys only, never values), each
    /// verdict (`{"verdict":"ignored"|"rejected"|"unanswered",…}`), each
    /// schema note (`{"note":…}`), and on exit a last line
    /// `{"summary":{"coverage":…,"findings":[…],"declared_keys":{…}}}`;
    /// every line ends with `ts`, `server` and `session`.
    #[arg(long, value_name = "FILE")]
    log: Option<PathBuf>,
    /// Tolerate KEY on every tool, as `reason` is (repeatable): for keys a
    /// host injects, such as `toolCallId`.
    #[arg(long = "allow", value_name = "KEY")]
    allow: Vec<String>,
    /// Do not write warnings, notices or the summary to stderr (the log
    /// still gets them; a failing log is still said).
    #[arg(long)]
    quiet: bool,
    /// The server's name, as `wrap` gives it from the host's configuration:
    /// the `server` of every log line (else the command's base name, or the
    /// URL's host), and on stderr `mcp-unknown-keys [NAME]: …`.
    #[arg(long, value_name = "NAME")]
    name: Option<String>,
    /// Audit top-level keys only, as the first version did: no nested key
    /// is read or reported.
    #[arg(long)]
    top_level_only: bool,
    /// Do not report the keys a tool's schema lists in `required` that a
    /// call lacks (nor audit a call with no arguments as emptied): the
    /// first version's behaviour.
    #[arg(long)]
    no_missing: bool,
    /// Keep the server's last tools/list in DIR/catalogs/NAME.json, for the
    /// Claude Code hook (`mcp-unknown-keys hook claude-code`) to audit calls
    /// against; also read from $MCP_UNKNOWN_KEYS_STATE_DIR.
    #[arg(long, value_name = "DIR")]
    state_dir: Option<PathBuf>,
    /// Also send each warning and verdict to the OpenTelemetry collector at
    /// URL (OTLP/HTTP, JSON: URL/v1/logs, and URL/v1/traces for calls that
    /// carry a `traceparent`), batched, never waited for; what it does not
    /// take is dropped and counted.
    #[cfg(feature = "remote")]
    #[arg(long, value_name = "URL")]
    otlp: Option<String>,
    /// A remote server instead: `--url`, or `--listen` with `--upstream`.
    #[cfg(feature = "remote")]
    #[command(flatten)]
    remote: remote::Args,
    /// The MCP server to run over stdio, and its arguments.
    #[cfg_attr(feature = "remote", arg(last = true, required_unless_present_any = ["url", "listen"], value_name = "COMMAND"))]
    #[cfg_attr(
        not(feature = "remote"),
        arg(last = true, required = true, value_name = "COMMAND")
    )]
    command: Vec<OsString>,
}

impl Args {
    /// What the reports are asked for.
    fn report_options(&self) -> ReportOptions<'_> {
        ReportOptions {
            log: self.log.as_deref(),
            allow: &self.allow,
            quiet: self.quiet,
            name: self.name.as_deref(),
            top_level_only: self.top_level_only,
            no_missing: self.no_missing,
            #[cfg(feature = "remote")]
            otlp: self.otlp.as_deref(),
            #[cfg(not(feature = "remote"))]
            otlp: None,
            remote_url: None,
            state_dir: self.state_dir.as_deref(),
        }
    }
}

/// Runs `proxy`: the stdio door exits with the server's status, the remote
/// doors with 0 once done; 2 for a command line that cannot work.
pub(crate) fn run_proxy(mut args: Args) -> ExitCode {
    if args.state_dir.is_none() {
        args.state_dir = std::env::var_os(STATE_DIR_VAR)
            .filter(|dir| !dir.is_empty())
            .map(PathBuf::from);
    }
    #[cfg(feature = "remote")]
    if args.remote.requested() {
        return remote::run_remote(&args);
    }
    let command = std::mem::take(&mut args.command);
    let options = args.report_options();
    match Stdio::new(command) {
        Ok(door) => run(door, &options),
        Err(failure) => failure.report(),
    }
}

/// The remote doors' part of the command line.
#[cfg(feature = "remote")]
mod remote {
    use std::net::SocketAddr;
    use std::path::PathBuf;
    use std::process::ExitCode;

    use mcp_unknown_keys_proxy::{Bridge, Failure, Reverse, run};

    /// The command line of the remote doors, flattened into `proxy`'s.
    #[derive(clap::Args, Debug, Default)]
    #[group(skip)]
    #[command(next_help_heading = "Remote servers (streamable HTTP)")]
    pub(super) struct Args {
        /// Bridge stdio to the MCP server at URL (streamable HTTP, both
        /// protocol eras): put this command in a host that only runs stdio
        /// servers. A user:password@ in URL is sent as Authorization: Basic
        /// unless --header gives Authorization.
        #[arg(long, value_name = "URL", conflicts_with_all = ["command", "listen"])]
        url: Option<String>,
        /// Serve an HTTP reverse proxy at ADDR (such as 127.0.0.1:8808) in
        /// front of --upstream, for hosts that connect by URL.
        #[arg(long, value_name = "ADDR", requires = "upstream", conflicts_with = "command")]
        listen: Option<SocketAddr>,
        /// The MCP endpoint --listen stands in front of (a user:password@
        /// in it is sent as --url's is).
        #[arg(long, value_name = "URL", requires = "listen")]
        upstream: Option<String>,
        /// Let --listen take an address other than loopback: anyone who
        /// reaches it reaches the upstream server, with the credentials the
        /// proxy adds.
        #[arg(long, requires = "listen")]
        allow_non_loopback: bool,
        /// Let web pages of ORIGIN (such as https://app.example.com) use
        /// --listen (repeatable). Requests with another Origin, or whose
        /// Host is neither the listening address nor a loopback name (as
        /// DNS rebinding would send them), and a page's requests from
        /// another site without Origin (Sec-Fetch-Site), are refused (403).
        #[arg(long = "allow-origin", value_name = "ORIGIN", requires = "listen")]
        allow_origins: Vec<String>,
        /// Add a header to every request to the server (repeatable), such as
        /// 'Authorization: Bearer ${TOKEN}': ${VAR} is read from the
        /// environment, and values never appear in logs or errors.
        #[arg(long = "header", value_name = "'NAME: VALUE'")]
        headers: Vec<String>,
        /// Trust the CA certificates of FILE (PEM) for the server's TLS,
        /// beside the system's and the bundled Mozilla roots (repeatable).
        #[arg(long = "ca-cert", value_name = "FILE")]
        ca_certs: Vec<PathBuf>,
    }

    impl Args {
        /// Whether a remote door was asked for, or one of its options given
        /// (which the stdio proxy would otherwise ignore in silence).
        pub(super) fn requested(&self) -> bool {
            self.url.is_some()
                || self.listen.is_some()
                || !self.headers.is_empty()
                || !self.ca_certs.is_empty()
        }
    }

    /// Runs the remote door asked for.
    pub(super) fn run_remote(args: &super::Args) -> ExitCode {
        let options = args.report_options();
        let remote = &args.remote;
        if let Some(url) = &remote.url {
            return match Bridge::new(url, &remote.headers, &remote.ca_certs) {
                Ok(door) => run(door, &options),
                Err(failure) => failure.report(),
            };
        }
        let (Some(listen), Some(upstream)) = (remote.listen, &remote.upstream) else {
            return Failure::new(
                "--header and --ca-cert go with --url URL, or with --listen ADDR --upstream URL".into(),
                2,
            )
            .report();
        };
        let door = Reverse::new(
            listen,
            upstream,
            remote.allow_non_loopback,
            &remote.allow_origins,
            &remote.headers,
            &remote.ca_certs,
        );
        match door {
            Ok(door) => run(door, &options),
            Err(failure) => failure.report(),
        }
    }
}
