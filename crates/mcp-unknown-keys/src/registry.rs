//! `Registry`: one tool namespace over many providers, by prefix.

use std::fmt;
use std::sync::{Arc, RwLock};

use serde_json::Value;

use crate::join::join_all;
use crate::provider::{BoxError, DynProvider, Provider};
use crate::wire::{ToolCall, ToolDeclaration, ToolResult};

/// The separator [`Registry::add`] puts between a prefix and a tool's name.
pub const DEFAULT_SEPARATOR: &str = "_";

/// One tool namespace over many providers: each provider's tools are
/// published under a tag, its prefix plus a separator (`fs` + `_` publishes
/// `read` as `fs_read`), and each call is routed back to the provider whose
/// tag its name starts with.
///
/// - [`tools_for_llm`](Provider::tools_for_llm) lists every provider (side
///   by side) and republishes each declaration as `tag + name`, providers in
///   registration order. A provider that cannot list fails the listing, with
///   its prefix in the error: a silently shorter catalogue hides a
///   capability.
/// - [`execute_tool_calls`](Provider::execute_tool_calls) routes each call to
///   the provider with the *longest* tag its name starts with, renamed to the
///   name without the tag, its arguments untouched (a JSON string stays the
///   very same string). Each provider receives one batch, the providers run
///   side by side, and the results are put back at the caller's positions.
///   It never fails the batch: an unknown prefix, a malformed call, a
///   provider that fails, panics or answers short each becomes an
///   `is_error` result for the calls concerned, and only for them.
///
/// A registry is itself a provider, so registries nest: a registry added
/// under `corp` over one holding a provider under `jira` publishes
/// `corp_jira_search`.
///
/// [`add`](Registry::add) and [`remove`](Registry::remove) take `&self`, so a
/// registry shared behind an `Arc` (or deep in a stack) can still change; a
/// listing or a batch works on the providers registered when it began.
///
/// ```
/// use mcp_unknown_keys::{BoxError, Provider, Registry, ToolCall, ToolDeclaration, ToolResult};
/// use serde_json::json;
///
/// struct Clock;
///
/// impl Provider for Clock {
///     async fn tools_for_llm(&self) -> Result<Vec<ToolDeclaration>, BoxError> {
///         Ok(vec![ToolDeclaration::new("now", None, json!({"type": "object", "properties": {}}))])
///     }
///
///     async fn execute_tool_calls(&self, calls: Vec<ToolCall>) -> Result<Vec<ToolResult>, BoxError> {
///         Ok(calls.iter().map(|call| ToolResult::ok(call.id_text(), "12:00")).collect())
///     }
/// }
///
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let registry = Registry::new();
/// registry.add(Clock, "time")?;
///
/// let tools = registry.tools_for_llm().await?;
/// assert_eq!(tools[0].name(), Some("time_now"));
///
/// let results = registry
///     .execute_tool_calls(vec![
///         ToolCall::new("call_1", "time_now", ""),
///         ToolCall::new("call_2", "weather_today", ""),
///     ])
///     .await?;
/// assert_eq!(results[0].content, "12:00");
/// assert!(results[1].is_error); // no provider under `weather`
/// # Ok::<(), BoxError>(())
/// # }).unwrap();
/// ```
#[derive(Default)]
pub struct Registry {
    // Copy-on-write: a listing or a batch clones the `Arc` (O(1)) and works
    // on that snapshot without holding the lock across any await.
    entries: RwLock<Arc<[Entry]>>,
}

#[derive(Clone)]
struct Entry {
    prefix: String,
    tag: String,
    provider: Arc<dyn DynProvider>,
}

impl Registry {
    /// An empty registry.
    pub fn new() -> Registry {
        Registry::default()
    }

    /// Publishes `provider`'s tools under `prefix` and the default separator
    /// `_`: its `read` becomes `{prefix}_read`.
    ///
    /// Fails, and changes nothing, when the prefix is empty or has a
    /// character outside `[A-Za-z0-9_-]`, when the prefix is already
    /// registered, or when another provider already publishes under the same
    /// tag (`fs` + `_` and `fs_` + `` both publish `fs_`).
    ///
    /// The registry owns what it is given. To keep a handle on a provider —
    /// to close an `McpServer`, or to go on adding to a nested registry —
    /// add a clone of it, or an `Arc` of it.
    pub fn add<P: Provider + 'static>(&self, provider: P, prefix: &str) -> Result<(), RegistryError> {
        self.add_with_separator(provider, prefix, DEFAULT_SEPARATOR)
    }

    /// Like [`add`](Registry::add), with a separator of your choosing
    /// (characters from `[A-Za-z0-9_-]`; it may be empty).
    pub fn add_with_separator<P: Provider + 'static>(
        &self,
        provider: P,
        prefix: &str,
        separator: &str,
    ) -> Result<(), RegistryError> {
        self.add_shared(Arc::new(provider), prefix, separator)
    }

    /// Like [`add_with_separator`](Registry::add_with_separator), for a
    /// provider that is already shared.
    pub fn add_shared(
        &self,
        provider: Arc<dyn DynProvider>,
        prefix: &str,
        separator: &str,
    ) -> Result<(), RegistryError> {
        check_name(prefix, NamePart::Prefix)?;
        check_name(separator, NamePart::Separator)?;
        let tag = format!("{prefix}{separator}");

        let mut entries = self.entries.write().unwrap_or_else(|e| e.into_inner());
        if entries.iter().any(|entry| entry.prefix == prefix) {
            return Err(RegistryError::DuplicatePrefix(prefix.to_owned()));
        }
        if let Some(entry) = entries.iter().find(|entry| entry.tag == tag) {
            return Err(RegistryError::TagCollision {
                tag,
                prefix: prefix.to_owned(),
                registered: entry.prefix.clone(),
            });
        }
        let mut next = entries.to_vec();
        next.push(Entry {
            prefix: prefix.to_owned(),
            tag,
            provider,
        });
        *entries = next.into();
        Ok(())
    }

    /// Unregisters the provider under `prefix` and hands it back; `None`
    /// when nothing is registered under it. Batches already under way finish
    /// with it.
    pub fn remove(&self, prefix: &str) -> Option<Arc<dyn DynProvider>> {
        let mut entries = self.entries.write().unwrap_or_else(|e| e.into_inner());
        let position = entries.iter().position(|entry| entry.prefix == prefix)?;
        let mut next = entries.to_vec();
        let removed = next.remove(position);
        *entries = next.into();
        Some(removed.provider)
    }

    /// The registered prefixes, in registration order.
    pub fn prefixes(&self) -> Vec<String> {
        self.snapshot().iter().map(|entry| entry.prefix.clone()).collect()
    }

    /// The registered tags (prefix plus separator), in registration order.
    pub fn tags(&self) -> Vec<String> {
        self.snapshot().iter().map(|entry| entry.tag.clone()).collect()
    }

    fn snapshot(&self) -> Arc<[Entry]> {
        self.entries.read().unwrap_or_else(|e| e.into_inner()).clone()
    }
}

impl fmt::Debug for Registry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Registry").field("tags", &self.tags()).finish()
    }
}

impl Provider for Registry {
    async fn tools_for_llm(&self) -> Result<Vec<ToolDeclaration>, BoxError> {
        let entries = self.snapshot();
        let listings = join_all(entries.iter().map(|entry| entry.provider.tools_for_llm_boxed())).await;

        let mut published = Vec::new();
        for (entry, listing) in entries.iter().zip(listings) {
            let declarations = listing
                .unwrap_or_else(|_| Err("it panicked".into()))
                .map_err(|error| ListingFailed {
                    prefix: entry.prefix.clone(),
                    source: error,
                })?;
            published.extend(
                declarations
                    .into_iter()
                    .map(|declaration| publish(declaration, &entry.tag)),
            );
        }
        Ok(published)
    }

    async fn execute_tool_calls(&self, calls: Vec<ToolCall>) -> Result<Vec<ToolResult>, BoxError> {
        let entries = self.snapshot();
        let mut results: Vec<Option<ToolResult>> = vec![None; calls.len()];
        let mut batches: Vec<Batch> = entries.iter().map(|_| Batch::default()).collect();

        for (position, mut call) in calls.into_iter().enumerate() {
            match route(&entries, &call) {
                Ok((provider, inner_name)) => {
                    if let Some(function) = call.function_mut() {
                        function.insert("name".into(), Value::String(inner_name));
                    }
                    let batch = &mut batches[provider];
                    batch.positions.push(position);
                    batch.ids.push(call.id_text());
                    batch.calls.push(call);
                }
                Err(refusal) => results[position] = Some(ToolResult::error(call.id_text(), refusal)),
            }
        }

        let (routed, runs): (Vec<_>, Vec<_>) = entries
            .iter()
            .zip(&mut batches)
            .filter(|(_, batch)| !batch.calls.is_empty())
            .map(|(entry, batch)| {
                let calls = std::mem::take(&mut batch.calls);
                (entry, entry.provider.execute_tool_calls_boxed(calls))
            })
            .unzip();
        let answers = join_all(runs).await;

        let batches = batches.into_iter().filter(|batch| !batch.positions.is_empty());
        for ((entry, answer), batch) in routed.into_iter().zip(answers).zip(batches) {
            let answer = answer.unwrap_or_else(|_| Err("it panicked".into()));
            place(entry, answer, batch, &mut results);
        }

        Ok(results
            .into_iter()
            .map(|result| result.expect("every position is answered by a refusal or a batch"))
            .collect())
    }
}

/// The calls one provider receives, with the caller's positions and ids.
#[derive(Default)]
struct Batch {
    calls: Vec<ToolCall>,
    positions: Vec<usize>,
    ids: Vec<String>,
}

/// Republishes a declaration under `tag`; one without a name is kept as it is.
fn publish(mut declaration: ToolDeclaration, tag: &str) -> ToolDeclaration {
    if let Some(function) = declaration.function_mut()
        && let Some(Value::String(name)) = function.get_mut("name")
    {
        name.insert_str(0, tag);
    }
    declaration
}

/// Finds the provider with the longest tag the call's name starts with and
/// the name without that tag; or why the call cannot be routed.
fn route(entries: &[Entry], call: &ToolCall) -> Result<(usize, String), String> {
    let Some(name) = call.name() else {
        return Err("malformed tool call: it has no `function.name` string".to_owned());
    };
    let (index, entry) = entries
        .iter()
        .enumerate()
        .filter(|(_, entry)| name.len() > entry.tag.len() && name.starts_with(&entry.tag))
        .max_by_key(|(_, entry)| entry.tag.len())
        .ok_or_else(|| unknown_tool_message(name, entries))?;
    Ok((index, name[entry.tag.len()..].to_owned()))
}

fn unknown_tool_message(name: &str, entries: &[Entry]) -> String {
    let tags: Vec<&str> = entries.iter().map(|entry| entry.tag.as_str()).collect();
    if tags.is_empty() {
        format!("unknown tool `{name}`: no provider is registered")
    } else {
        format!(
            "unknown tool `{name}`: its name starts with no registered prefix (tools are named {}…)",
            tags.join("…, ")
        )
    }
}

/// Puts a provider's answer back at the caller's positions.
fn place(
    entry: &Entry,
    answer: Result<Vec<ToolResult>, BoxError>,
    batch: Batch,
    results: &mut [Option<ToolResult>],
) {
    let expected = batch.positions.len();
    let mut answered = match answer {
        Ok(answered) => answered.into_iter(),
        Err(error) => {
            let message = format!("the tools under `{}` failed: {error}", entry.tag);
            for (position, id) in batch.positions.into_iter().zip(batch.ids) {
                results[position] = Some(ToolResult::error(id, message.clone()));
            }
            return;
        }
    };
    let got = answered.len();
    for (position, id) in batch.positions.into_iter().zip(batch.ids) {
        results[position] = Some(answered.next().unwrap_or_else(|| {
            ToolResult::error(
                id,
                format!(
                    "the tools under `{}` answered {got} result(s) for {expected} call(s); this call got none",
                    entry.tag
                ),
            )
        }));
    }
}

#[derive(Clone, Copy)]
enum NamePart {
    Prefix,
    Separator,
}

fn check_name(text: &str, part: NamePart) -> Result<(), RegistryError> {
    if matches!(part, NamePart::Prefix) && text.is_empty() {
        return Err(RegistryError::EmptyPrefix);
    }
    let allowed = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '-';
    if text.chars().all(allowed) {
        return Ok(());
    }
    Err(match part {
        NamePart::Prefix => RegistryError::InvalidPrefix(text.to_owned()),
        NamePart::Separator => RegistryError::InvalidSeparator(text.to_owned()),
    })
}

/// Why [`Registry::add`] refused a provider.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum RegistryError {
    /// The prefix was empty: every provider needs a namespace of its own.
    EmptyPrefix,
    /// The prefix has a character outside `[A-Za-z0-9_-]`.
    InvalidPrefix(String),
    /// The separator has a character outside `[A-Za-z0-9_-]`.
    InvalidSeparator(String),
    /// Another provider is registered under this prefix.
    DuplicatePrefix(String),
    /// Another provider already publishes under the same tag.
    TagCollision {
        /// The tag both would publish under.
        tag: String,
        /// The prefix being added.
        prefix: String,
        /// The prefix already registered under that tag.
        registered: String,
    },
}

impl fmt::Display for RegistryError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RegistryError::EmptyPrefix => {
                write!(f, "a registry prefix cannot be empty")
            }
            RegistryError::InvalidPrefix(prefix) => write!(
                f,
                "registry prefix {prefix:?} has a character outside [A-Za-z0-9_-]"
            ),
            RegistryError::InvalidSeparator(separator) => write!(
                f,
                "registry separator {separator:?} has a character outside [A-Za-z0-9_-]"
            ),
            RegistryError::DuplicatePrefix(prefix) => write!(
                f,
                "registry prefix `{prefix}` is already registered; remove it first or pick another"
            ),
            RegistryError::TagCollision {
                tag,
                prefix,
                registered,
            } => write!(
                f,
                "registry prefix `{prefix}` would publish its tools as `{tag}…`, \
                 which the tools under prefix `{registered}` already do; pick another prefix or separator"
            ),
        }
    }
}

impl std::error::Error for RegistryError {}

/// A registered provider failed to list its tools.
#[derive(Debug)]
struct ListingFailed {
    prefix: String,
    source: BoxError,
}

impl fmt::Display for ListingFailed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "the provider under prefix `{}` could not list its tools: {}",
            self.prefix, self.source
        )
    }
}

impl std::error::Error for ListingFailed {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&*self.source)
    }
}
