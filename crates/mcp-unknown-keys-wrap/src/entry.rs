//! One server entry: what it is, and the edits that wrap it or rebuild it.
//!
//! Wrapping touches as few bytes as it can. A stdio entry keeps every
//! member where it is; its `command` becomes the proxy and the proxy's
//! arguments go in front of the first argument, the original command's
//! token moved there as it was written:
//!
//! ```text
//! "command": "npx", "args": ["-y", "pkg"]
//! "command": "/path/mcp-unknown-keys", "args": ["proxy", "--name", "fs", "--", "npx", "-y", "pkg"]
//! ```
//!
//! A URL entry's `url` (or `serverUrl`) member becomes `command` and `args`
//! for the stdio bridge (`proxy --url URL --header 'Name: ${MUK_HEADER_1}'…`),
//! its `headers` member becomes `env`, which holds the values off the
//! command line (see the headers module), and so do the URL's userinfo and
//! query (see the url module); its `type` becomes `stdio`.
//!
//! Rebuilding is the inverse, read from the wrapped entry alone: the
//! proxy's arguments hold the server. It is exact for a stdio entry that
//! had arguments; the exact bytes of any entry come from the backup wrap
//! made (see the document module, which tries that first).

use super::edit::{Edit, json_string, remove_member, separator_after, slice};
use super::headers::{self, Restore};
use super::jsonc::{Member, Unreadable, Value};
use super::launch::COMMAND;
use super::url as urls;

/// How a host spells what differs between hosts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Dialect {
    /// The key of a remote server's address: `url`, or Windsurf's
    /// `serverUrl`.
    pub url_key: &'static str,
}

/// How wrap calls the proxy for one entry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Invocation {
    /// The proxy's program: an absolute path, or a name found on PATH.
    pub program: String,
    /// The program's arguments before `proxy`: a launcher's (`-y
    /// mcp-unknown-keys@1.0.0` for npx), or none.
    pub program_args: Vec<String>,
    /// The entry's `--log` file, if any.
    pub log: Option<String>,
    /// The entry's `--state-dir`, if any: where the Claude Code hook reads
    /// the server's catalogue.
    pub state_dir: Option<String>,
}

/// What an entry is.
#[derive(Debug)]
pub(crate) enum Entry {
    /// A server the host starts: `command` and optional `args` (indices
    /// into the entry's members).
    Stdio { command: usize, args: Option<usize> },
    /// A server reached over streamable HTTP.
    Remote {
        url: usize,
        headers: Option<usize>,
        kind: Option<usize>,
        env: Option<usize>,
    },
    /// Already the proxy in front of a server.
    Wrapped(Wrapped),
    /// A server the proxy cannot stand in for, and why.
    Unsupported(String),
}

/// A wrapped entry, read back.
#[derive(Debug)]
pub(crate) struct Wrapped {
    command: usize,
    args: usize,
    kind: Option<usize>,
    /// The `env` member, which holds header values.
    env: Option<usize>,
    /// The proxy's program, decoded.
    pub program: String,
    /// The program's arguments before `proxy`, decoded.
    pub program_args: Vec<String>,
    /// The `--name` it was given.
    pub name: Option<String>,
    /// The `--log` it was given.
    pub log: Option<String>,
    /// The `--state-dir` it was given.
    pub state_dir: Option<String>,
    /// The index in `args` of the `--` or `--url` that names the server:
    /// where wrap's own flags end.
    tail: Option<usize>,
    target: Target,
}

/// What a wrapped entry's proxy stands in front of.
#[derive(Debug)]
enum Target {
    /// After `--`: the index in `args` of the server's command.
    Stdio(usize),
    /// `--url`: the address as a JSON string token, and the `--header`
    /// values, decoded.
    Remote { url: String, headers: Vec<String> },
    /// Neither: not something wrap wrote.
    Unknown,
}

/// The proxy's flags that take a value, so a value is never read as the
/// `--` that ends them.
const FLAGS_WITH_VALUES: &[&str] = &[
    "--name",
    "--log",
    "--allow",
    "--url",
    "--header",
    "--ca-cert",
    "--otlp",
    "--listen",
    "--upstream",
    "--state-dir",
];

/// `type` values that name a server the host starts.
const STDIO_TYPES: &[&str] = &["stdio"];

/// `type` values that name streamable HTTP, which the bridge speaks.
const STREAMABLE_HTTP_TYPES: &[&str] = &["http", "streamable-http", "streamableHttp"];

/// Reads what the entry of the server `name` is. An entry in a shape no
/// host writes is an error: the document is then left as it is.
///
/// A wrapped entry is told by its program's name (`mcp-unknown-keys`), or,
/// for a proxy run under another name (`--command /opt/muk`, a wrapper
/// script), by the shape wrap gives it: `proxy --name NAME …` for this very
/// server, then a server to stand in front of (`-- COMMAND…` or `--url`).
/// Without that, every `wrap` would nest one more proxy and `unwrap` could
/// not take it out.
pub(crate) fn classify(text: &str, entry: &Value, name: &str) -> Result<Entry, Unreadable> {
    let members = entry.as_object().ok_or_else(|| {
        unreadable(
            entry,
            format!("a server entry should be an object, not {}", entry.describe()),
        )
    })?;
    let kind = find(members, "type")?;
    let kind_text = kind.map(|i| string(&members[i].value, "type")).transpose()?;
    if let Some(command) = find(members, "command")? {
        let program = string(&members[command].value, "command")?;
        let args = find(members, "args")?;
        let values = match args {
            Some(i) => strings(&members[i].value)?,
            None => Vec::new(),
        };
        let head = launch_at(program, &values, "proxy");
        if let Some(head) = head
            && let Some(args) = args
        {
            let elements = members[args].value.as_array().unwrap_or_default();
            let members = Members {
                command,
                args,
                kind,
                env: find(members, "env")?,
            };
            let wrapped = read_wrapped(text, program, members, elements, &values, head);
            let shaped = values.get(head + 1) == Some(&"--name")
                && wrapped.name.as_deref() == Some(name)
                && !matches!(wrapped.target, Target::Unknown);
            if is_proxy(program) || head > 0 || shaped {
                return Ok(Entry::Wrapped(wrapped));
            }
        }
        return Ok(Entry::Stdio { command, args });
    }
    let url = match (find(members, "url")?, find(members, "serverUrl")?) {
        (Some(url), None) | (None, Some(url)) => url,
        (Some(_), Some(both)) => {
            return Err(unreadable(
                &members[both].value,
                "an entry with both url and serverUrl",
            ));
        }
        (None, None) => {
            return match kind_text {
                Some(kind) => Ok(Entry::Unsupported(format!(
                    "a server of type {kind:?}: not one the proxy runs"
                ))),
                None => Err(unreadable(entry, "a server entry needs a command or a url")),
            };
        }
    };
    let address = string(&members[url].value, &members[url].key)?;
    let headers = find(members, "headers")?;
    let env = find(members, "env")?;
    if let Some(headers) = headers {
        header_pairs(&members[headers].value)?;
    }
    // Header values and the URL's secrets are added to `env`, which must
    // then be an object to take them.
    if (headers.is_some() || !urls::secrets(address).is_empty())
        && let Some(env) = env.filter(|&i| members[i].value.as_object().is_none())
    {
        let value = &members[env].value;
        return Err(unreadable(
            value,
            format!("env should be an object, not {}", value.describe()),
        ));
    }
    if let Some(reason) = remote_unsupported(members, kind_text, address)? {
        return Ok(Entry::Unsupported(reason));
    }
    Ok(Entry::Remote {
        url,
        headers,
        kind,
        env,
    })
}

/// Why a remote server cannot be bridged, if it cannot.
fn remote_unsupported(
    members: &[Member],
    kind: Option<&str>,
    address: &str,
) -> Result<Option<String>, Unreadable> {
    if find(members, "oauth")?.is_some() || find(members, "auth")?.is_some() {
        return Ok(Some(
            "signs in with OAuth through the host, which the bridge cannot do: it sends the headers it is given"
                .to_owned(),
        ));
    }
    let path = address.split(['?', '#']).next().unwrap_or(address);
    let legacy = match kind {
        Some(kind) if STREAMABLE_HTTP_TYPES.contains(&kind) => false,
        Some("sse") => true,
        Some(kind) => return Ok(Some(format!("a server of type {kind:?}: not one the proxy runs"))),
        None => path.trim_end_matches('/').ends_with("/sse"),
    };
    Ok(legacy.then(|| "uses the legacy HTTP+SSE transport; the bridge speaks streamable HTTP".to_owned()))
}

/// The edits that put the proxy in front of an unwrapped entry.
pub(crate) fn wrap(text: &str, entry: &Value, form: &Entry, name: &str, proxy: &Invocation) -> Vec<Edit> {
    let members = entry.as_object().unwrap_or_default();
    let mut args = proxy_head(name, proxy);
    match *form {
        Entry::Stdio { command, args: list } => {
            let command = &members[command];
            args.push(json_string("--"));
            args.push(slice(text, command.value.span).to_owned());
            let head = args.join(", ");
            let inserted = match list.map(|i| &members[i].value) {
                Some(list) => match list.as_array().and_then(<[Value]>::first) {
                    Some(first) => Edit::insert(first.span.start, format!("{head}, ")),
                    None => Edit::insert(list.span.end - 1, head),
                },
                None => Edit::insert(
                    command.value.span.end,
                    format!("{}\"args\": [{head}]", separator_after(text, command)),
                ),
            };
            vec![
                Edit::replace(command.value.span, json_string(&proxy.program)),
                inserted,
            ]
        }
        Entry::Remote {
            url,
            headers,
            kind,
            env,
        } => {
            let url = &members[url];
            let address = url.value.as_str().unwrap_or_default();
            let parts = urls::secrets(address);
            let taken: Vec<&str> = env
                .and_then(|i| members[i].value.as_object())
                .unwrap_or_default()
                .iter()
                .map(|member| member.key.as_str())
                .collect();
            let names = headers::variable_names(urls::VARIABLE_PREFIX, parts.len(), &taken);
            let variables: Vec<String> = names
                .iter()
                .zip(&parts)
                .map(|(name, part)| format!("{}: {}", json_string(name), json_string(&address[part.clone()])))
                .collect();
            args.push(json_string("--url"));
            args.push(match parts.is_empty() {
                true => slice(text, url.value.span).to_owned(),
                false => json_string(&urls::with_references(address, &parts, &names)),
            });
            let (moved, references) = match (headers, env) {
                (Some(i), _) => headers::wrap(text, members, i, env, &variables),
                (None, Some(env)) if !variables.is_empty() => (
                    vec![headers::append(text, &members[env], &variables.join(", "))],
                    Vec::new(),
                ),
                (None, _) => (Vec::new(), Vec::new()),
            };
            for reference in references {
                args.push(json_string("--header"));
                args.push(json_string(&reference));
            }
            let separator = separator_after(text, url);
            // No `headers` and no `env` to hold the URL's variables: an
            // `env` of their own, after `args`.
            let created = match (headers, env, variables.is_empty()) {
                (None, None, false) => format!("{separator}\"env\": {{{}}}", variables.join(", ")),
                _ => String::new(),
            };
            let replacement = format!(
                "\"command\": {}{separator}\"args\": [{}]{created}",
                json_string(&proxy.program),
                args.join(", ")
            );
            let mut edits = vec![Edit::replace(url.span(), replacement)];
            edits.extend(moved);
            edits.extend(kind.map(|i| Edit::replace(members[i].value.span, json_string("stdio"))));
            edits
        }
        Entry::Wrapped(_) | Entry::Unsupported(_) => Vec::new(),
    }
}

/// The edits that take the proxy out of a wrapped entry, rebuilt from its
/// arguments; `None` when they do not say which server it wraps.
pub(crate) fn rebuild(text: &str, entry: &Value, wrapped: &Wrapped, dialect: Dialect) -> Option<Vec<Edit>> {
    let members = entry.as_object().unwrap_or_default();
    let command = &members[wrapped.command];
    let elements = members[wrapped.args].value.as_array().unwrap_or_default();
    match &wrapped.target {
        Target::Stdio(at) => {
            let mut edits = vec![Edit::replace(command.value.span, slice(text, elements[*at].span))];
            match elements.get(at + 1) {
                Some(rest) => edits.push(Edit::delete(span(elements[0].span.start, rest.span.start))),
                None => edits.extend(remove_member(text, members, wrapped.args)),
            }
            Some(edits)
        }
        Target::Remote { url, headers } => {
            let variables = wrapped
                .env
                .and_then(|i| members[i].value.as_object())
                .unwrap_or_default();
            let (url, used) = urls::restore(url, variables);
            let mut edits = vec![Edit::replace(
                command.span(),
                format!("{}: {url}", json_string(dialect.url_key)),
            )];
            match headers::restore(text, members, headers, wrapped.env, &used) {
                Restore::Rename(renamed) => {
                    edits.extend(remove_member(text, members, wrapped.args));
                    edits.extend(renamed);
                }
                Restore::Write { pairs, env } => {
                    match pairs.is_empty() {
                        true => edits.extend(remove_member(text, members, wrapped.args)),
                        false => edits.push(Edit::replace(
                            members[wrapped.args].span(),
                            format!("\"headers\": {{{}}}", pairs.join(", ")),
                        )),
                    }
                    edits.extend(env);
                }
            }
            let stdio = wrapped.kind.filter(|&i| {
                members[i]
                    .value
                    .as_str()
                    .is_some_and(|k| STDIO_TYPES.contains(&k))
            });
            edits.extend(stdio.map(|i| Edit::replace(members[i].value.span, json_string("http"))));
            Some(edits)
        }
        Target::Unknown => None,
    }
}

/// `[PROGRAM_ARGS…] proxy --name NAME [--log FILE] [--state-dir DIR]`, as
/// JSON string tokens.
fn proxy_head(name: &str, proxy: &Invocation) -> Vec<String> {
    let mut head: Vec<String> = proxy.program_args.iter().map(|arg| json_string(arg)).collect();
    head.extend([json_string("proxy"), json_string("--name"), json_string(name)]);
    if let Some(log) = &proxy.log {
        head.push(json_string("--log"));
        head.push(json_string(log));
    }
    if let Some(dir) = &proxy.state_dir {
        head.push(json_string("--state-dir"));
        head.push(json_string(dir));
    }
    head
}

/// The edit that gives a wrapped entry without one `--state-dir DIR`, where
/// wrap itself writes it (just before the `--` or `--url` naming the
/// server), so that `unwrap` still finds its original in a backup; `None`
/// when the entry already has one or names no server.
pub(crate) fn add_state_dir(entry: &Value, wrapped: &Wrapped, dir: &str) -> Option<Edit> {
    if wrapped.state_dir.is_some() || matches!(wrapped.target, Target::Unknown) {
        return None;
    }
    let members = entry.as_object()?;
    let elements = members[wrapped.args].value.as_array()?;
    let at = elements.get(wrapped.tail?)?.span.start;
    Some(Edit::insert(
        at,
        format!("{}, {}, ", json_string("--state-dir"), json_string(dir)),
    ))
}

/// Whether `program` is this tool: its file name, with or without `.exe`.
fn is_proxy(program: &str) -> bool {
    stem(program) == COMMAND
}

/// The index in `values` (a command's arguments) of this tool's
/// `subcommand` (`proxy`, `hook`): 0 for the binary itself, after the
/// package for a launcher that runs this tool (`npx -y
/// mcp-unknown-keys@1.0.0 proxy …`, `uvx mcp-unknown-keys@1.0.0 proxy …`);
/// `None` when the command is not that.
pub(crate) fn launch_at(program: &str, values: &[&str], subcommand: &str) -> Option<usize> {
    if values.first() == Some(&subcommand) {
        return Some(0);
    }
    if !["npx", "uvx"].contains(&stem(program)) {
        return None;
    }
    let at = values.iter().position(|value| *value == subcommand)?;
    let (flags, package) = values[..at].split_at(at.checked_sub(1)?);
    let package = package[0];
    let ours = package == COMMAND
        || package
            .strip_prefix(COMMAND)
            .is_some_and(|version| version.starts_with('@'));
    (ours && flags.iter().all(|flag| flag.starts_with('-'))).then_some(at)
}

/// A program's file name without its folder and a Windows extension.
fn stem(program: &str) -> &str {
    let file = program.rsplit(['/', '\\']).next().unwrap_or(program);
    [".exe", ".cmd"]
        .iter()
        .find_map(|ext| {
            file.len()
                .checked_sub(ext.len())
                .filter(|&cut| file.is_char_boundary(cut) && file[cut..].eq_ignore_ascii_case(ext))
                .map(|cut| &file[..cut])
        })
        .unwrap_or(file)
}

/// Where a wrapped entry's members are.
struct Members {
    command: usize,
    args: usize,
    kind: Option<usize>,
    env: Option<usize>,
}

fn read_wrapped(
    text: &str,
    program: &str,
    members: Members,
    elements: &[Value],
    values: &[&str],
    head: usize,
) -> Wrapped {
    let Members {
        command,
        args,
        kind,
        env,
    } = members;
    let mut wrapped = Wrapped {
        command,
        args,
        kind,
        env,
        program: program.to_owned(),
        program_args: values[..head].iter().map(|arg| (*arg).to_owned()).collect(),
        name: None,
        log: None,
        state_dir: None,
        tail: None,
        target: Target::Unknown,
    };
    let mut url = None;
    let mut headers = Vec::new();
    let mut i = head + 1;
    while i < values.len() {
        if values[i] == "--" {
            wrapped.tail.get_or_insert(i);
            if i + 1 < values.len() {
                wrapped.target = Target::Stdio(i + 1);
            }
            return wrapped;
        }
        let (flag, value, token) = match values[i].split_once('=') {
            Some((flag, value)) if flag.starts_with("--") => (flag, Some(value), json_string(value)),
            _ if FLAGS_WITH_VALUES.contains(&values[i]) && i + 1 < values.len() => {
                i += 1;
                (
                    values[i - 1],
                    Some(values[i]),
                    slice(text, elements[i].span).to_owned(),
                )
            }
            _ => (values[i], None, String::new()),
        };
        match (flag, value) {
            ("--name", Some(value)) => wrapped.name = Some(value.to_owned()),
            ("--log", Some(value)) => wrapped.log = Some(value.to_owned()),
            ("--state-dir", Some(value)) => wrapped.state_dir = Some(value.to_owned()),
            ("--url", Some(_)) => {
                // `--url=…` is one element, `--url …` two: the flag's own.
                wrapped
                    .tail
                    .get_or_insert(i - usize::from(!values[i].starts_with("--url=")));
                url = Some(token);
            }
            ("--header", Some(value)) => headers.push(value.to_owned()),
            _ => {}
        }
        i += 1;
    }
    if let Some(url) = url {
        wrapped.target = Target::Remote { url, headers };
    }
    wrapped
}

/// The index of the member named `key`; more than one is an error (hosts
/// would silently take the last).
pub(crate) fn find(members: &[Member], key: &str) -> Result<Option<usize>, Unreadable> {
    let mut found = members
        .iter()
        .enumerate()
        .filter(|(_, m)| m.key == key)
        .map(|(i, _)| i);
    let first = found.next();
    match found.next() {
        Some(again) => Err(Unreadable {
            offset: members[again].key_span.start,
            message: format!("{key:?} appears twice in one object"),
        }),
        None => Ok(first),
    }
}

fn string<'v>(value: &'v Value, what: &str) -> Result<&'v str, Unreadable> {
    value.as_str().ok_or_else(|| {
        unreadable(
            value,
            format!("{what} should be a string, not {}", value.describe()),
        )
    })
}

fn strings(value: &Value) -> Result<Vec<&str>, Unreadable> {
    let elements = value.as_array().ok_or_else(|| {
        unreadable(
            value,
            format!("args should be an array, not {}", value.describe()),
        )
    })?;
    elements
        .iter()
        .map(|element| string(element, "each of args"))
        .collect()
}

/// A `headers` object's names and values, decoded.
fn header_pairs(value: &Value) -> Result<Vec<(&str, &str)>, Unreadable> {
    let members = value.as_object().ok_or_else(|| {
        unreadable(
            value,
            format!("headers should be an object, not {}", value.describe()),
        )
    })?;
    members
        .iter()
        .map(|member| Ok((member.key.as_str(), string(&member.value, "a header's value")?)))
        .collect()
}

fn unreadable(value: &Value, message: impl Into<String>) -> Unreadable {
    Unreadable {
        offset: value.span.start,
        message: message.into(),
    }
}

fn span(start: usize, end: usize) -> super::jsonc::Span {
    super::jsonc::Span { start, end }
}
