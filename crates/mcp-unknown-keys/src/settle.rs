//! Turning an inner provider's outcome into one result per call, for the
//! layers that never fail a batch.

use crate::provider::BoxError;
use crate::wire::ToolResult;

/// One result per call id, in order: an inner failure becomes an error
/// result for every call, and a short answer gets an error result for each
/// call it left unanswered. Results beyond the calls are kept, at the end.
/// For a layer that never fails a batch (`Reasons`, `Policy`): what the
/// layer beneath returned, settled into what the host is owed.
pub fn settle(ids: &[String], outcome: Result<Vec<ToolResult>, BoxError>) -> Vec<ToolResult> {
    match outcome {
        Err(error) => ids
            .iter()
            .map(|id| ToolResult::error(id.as_str(), provider_failed(&error)))
            .collect(),
        Ok(mut results) => {
            let answered = results.len().min(ids.len());
            results.extend(
                ids[answered..].iter().map(|id| {
                    ToolResult::error(id.as_str(), "The tool provider gave no result for this call.")
                }),
            );
            results
        }
    }
}

fn provider_failed(error: &BoxError) -> String {
    format!("The tool provider failed before answering this call: {error}")
}
