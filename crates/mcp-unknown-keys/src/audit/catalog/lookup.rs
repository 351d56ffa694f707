//! The lookup of a called tool by its name, once per audited call.

use std::collections::HashMap;
use std::hash::BuildHasher;
use std::sync::Arc;

use super::Declared;
use super::table::KeyTable;

/// The tools of a catalogue in a [`KeyTable`] of their names: a name of up
/// to 16 bytes is found by its fingerprint alone, in a few integer
/// compares, where a `HashMap` hashes it, probes a group of slots and
/// compares the name with `memcmp`. Built from the catalogue's map once,
/// after its last insertion.
#[derive(Debug)]
pub(super) struct ToolLookup {
    names: KeyTable,
    /// Each tool's declaration, in the order of `names`' sorted keys.
    declared: Box<[Arc<Declared>]>,
}

impl ToolLookup {
    pub(super) fn new<S: BuildHasher>(tools: &HashMap<Arc<str>, Arc<Declared>, S>) -> ToolLookup {
        let mut sorted: Vec<(&Arc<str>, &Arc<Declared>)> = tools.iter().collect();
        sorted.sort_unstable_by(|a, b| a.0.cmp(b.0));
        ToolLookup {
            names: KeyTable::new(sorted.iter().map(|(name, _)| (***name).into()).collect()),
            declared: sorted.into_iter().map(|(_, declared)| declared.clone()).collect(),
        }
    }

    #[inline]
    pub(super) fn get(&self, tool: &str) -> Option<&Declared> {
        let index = self.names.find(tool)?;
        self.declared.get(index).map(|declared| &**declared)
    }
}

#[cfg(test)]
mod tests {
    use super::super::Catalog;
    use serde_json::json;

    #[test]
    fn finds_every_tool_the_map_holds_and_no_other() {
        // Short names, names sharing their length and both ends, long ones.
        let names: Vec<String> = (0..300)
            .map(|i| match i % 3 {
                0 => format!("t{i}"),
                1 => format!("sensor_{i:06}_temperature"),
                _ => format!("tool_{i:05}"),
            })
            .collect();
        let tools: Vec<_> = names
            .iter()
            .map(|name| json!({"name": name, "inputSchema": {"properties": {name.as_str(): {}}}}))
            .collect();
        let indexed = Catalog::from_mcp_tools(&tools);
        let mut unindexed = Catalog::new();
        unindexed.extend_mcp_tools(&tools);
        assert!(indexed.lookup.get().is_some() && unindexed.lookup.get().is_none());
        for name in &names {
            let declared = indexed.get(name).expect("listed");
            assert!(declared.declares(name), "{name}");
            assert_eq!(Some(declared), unindexed.get(name));
        }
        for absent in [
            "",
            "t",
            "t1",
            "sensor_000001_temperaturf",
            "tool_00002 ",
            "TOOL_00002",
        ] {
            assert!(
                indexed.get(absent).is_none() && unindexed.get(absent).is_none(),
                "{absent}"
            );
        }
    }
}
