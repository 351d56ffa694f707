//! Where each undeclared pair was first found: the input and line of the
//! warning that said it, for the formats that point at a place.

use std::collections::HashMap;

use crate::report::{Report, Site};

/// The site of each pair said, by `(tool, nested, key or path)`.
pub(super) fn first_sites(report: &Report) -> HashMap<(&str, bool, &str), &Site> {
    let mut sites = HashMap::new();
    for (warning, site) in report.warnings.iter().zip(&report.warning_sites) {
        let keys = warning.unknown_keys.iter().map(|key| (false, key));
        let paths = warning.unknown_paths.iter().map(|path| (true, path));
        for (nested, key) in keys.chain(paths) {
            sites
                .entry((warning.tool.as_str(), nested, key.as_str()))
                .or_insert(site);
        }
    }
    sites
}
