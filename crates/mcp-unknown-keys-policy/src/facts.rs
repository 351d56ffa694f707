//! What a call names, read once before any rule is asked: its paths, the
//! hosts of its URLs, and the commands it runs.

use serde::Serialize;
use serde_json::{Map, Value};

use super::command;
use super::command::argv::Reader;
use super::command::lex::Word;
use super::command::{Command, Unreadable};
use super::config::{CommandArguments, Compiled};
use super::host::{UrlProblem, url_host};
use super::paths::{CallPaths, Lexical};
use mcp_unknown_keys::ToolCall;

/// The arguments that hold a URL (or an array of URLs).
const URL_ARGUMENTS: &[&str] = &["url"];

/// One URL argument of a call, as the policy read it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct UrlArgument {
    /// The argument's name.
    pub argument: String,
    /// The URL as the model wrote it (its JSON text when not a string).
    pub url: String,
    /// Its host, or `None` when it could not be read (see
    /// [`url_host`](super::url_host)).
    pub host: Option<String>,
}

/// One URL argument, with why its host could not be read.
pub(super) struct NamedUrl {
    pub(super) argument: String,
    pub(super) given: String,
    pub(super) host: Result<String, UrlProblem>,
}

/// Everything the rules ask about one call.
pub(super) struct Facts<'a> {
    pub(super) tool: &'a str,
    pub(super) root: Option<&'a Lexical>,
    pub(super) paths: CallPaths<'a>,
    pub(super) urls: Vec<NamedUrl>,
    /// The simple commands it runs; none when it names no command.
    pub(super) commands: Vec<Command>,
}

impl<'a> Facts<'a> {
    pub(super) fn read(call: &'a ToolCall, tool: &'a str, config: &'a Compiled) -> Facts<'a> {
        let root = config.root(tool);
        let paths = CallPaths::read(call, config.path_arguments(tool), root);
        let (urls, commands) = match paths.arguments.as_object() {
            Some(object) if paths.readable => {
                (urls(object), commands(object, config.command_arguments(tool)))
            }
            // Arguments that are not an object may hold anything.
            _ => (
                Vec::new(),
                vec![Command::unknown(Unreadable::UnreadableArguments)],
            ),
        };
        Facts {
            tool,
            root,
            paths,
            urls,
            commands,
        }
    }

    /// The one host every URL of the call names, when they all could be
    /// read.
    pub(super) fn single_host(&self) -> Option<&str> {
        let mut hosts = self.urls.iter().map(|url| url.host.as_deref().ok());
        let first = hosts.next()??;
        hosts.all(|host| host == Some(first)).then_some(first)
    }

    /// The one program every command of the call runs, when they all could
    /// be read in full.
    pub(super) fn single_program(&self) -> Option<&str> {
        let mut names = self
            .commands
            .iter()
            .map(|command| command.is_complete().then(|| command.name()).flatten());
        let first = names.next()??;
        names.all(|name| name == Some(first)).then_some(first)
    }

    /// The first URL whose host could not be read, and why.
    pub(super) fn first_unreadable_url(&self) -> Option<(&str, UrlProblem)> {
        self.urls.iter().find_map(|url| {
            url.host
                .as_ref()
                .err()
                .map(|problem| (url.argument.as_str(), *problem))
        })
    }

    /// The first command that could not be read in full.
    pub(super) fn first_unreadable_command(&self) -> Option<&Command> {
        self.commands.iter().find(|command| !command.is_complete())
    }

    pub(super) fn url_arguments(&self) -> Vec<UrlArgument> {
        self.urls
            .iter()
            .map(|url| UrlArgument {
                argument: url.argument.clone(),
                url: url.given.clone(),
                host: url.host.clone().ok(),
            })
            .collect()
    }
}

/// The call's URL arguments; `null` is an absent one.
fn urls(object: &Map<String, Value>) -> Vec<NamedUrl> {
    let mut urls = Vec::new();
    for &argument in URL_ARGUMENTS {
        let values = match object.get(argument) {
            None | Some(Value::Null) => continue,
            Some(Value::Array(items)) => items.iter().collect(),
            Some(value) => vec![value],
        };
        urls.extend(values.into_iter().map(|value| NamedUrl {
            argument: argument.to_owned(),
            given: value.as_str().map_or_else(|| value.to_string(), str::to_owned),
            host: value.as_str().ok_or(UrlProblem::NotText).and_then(url_host),
        }));
    }
    urls
}

/// The commands a call runs, from its command arguments: a string is a
/// shell line, an array an argv; a string with separate arguments is a
/// program and its arguments.
fn commands(object: &Map<String, Value>, names: &CommandArguments) -> Vec<Command> {
    let args = names
        .args
        .as_ref()
        .and_then(|args| object.get(args))
        .filter(|args| !args.is_null());
    match (object.get(&names.command), args) {
        (None | Some(Value::Null), _) => Vec::new(),
        (Some(Value::String(line)), None) => command::decompose_line(line),
        (Some(Value::String(program)), Some(args)) => match program_word(program) {
            Some(program) => argv(std::iter::once(Word::literal(&program)).chain(words(args))),
            None => vec![Command::unknown(Unreadable::Ambiguous)],
        },
        (Some(argv_value @ Value::Array(_)), args) => {
            argv(words(argv_value).chain(args.into_iter().flat_map(words)))
        }
        (Some(_), _) => vec![Command::unknown(Unreadable::NotText)],
    }
}

/// A command string that is a program's name alone, read as the shell
/// would (`git`, `'/opt/my tools/run'`).
fn program_word(program: &str) -> Option<String> {
    match command::decompose_line(program).as_slice() {
        [only] if only.is_complete() && only.args.is_empty() && only.writes.is_empty() => {
            only.program.clone()
        }
        _ => None,
    }
}

fn argv(words: impl Iterator<Item = Word>) -> Vec<Command> {
    Reader::default().argv(words.collect(), 0)
}

/// The words of an argv value: each string is one; anything else cannot be
/// read.
fn words(value: &Value) -> Box<dyn Iterator<Item = Word> + '_> {
    match value {
        Value::Array(items) => Box::new(items.iter().map(|item| match item {
            Value::String(text) => Word::literal(text),
            other => Word::not_text(other.to_string()),
        })),
        other => Box::new(std::iter::once(Word::not_text(other.to_string()))),
    }
}
