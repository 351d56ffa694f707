//! Running futures side by side without an async runtime or a dependency.

use std::future::Future;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::task::Poll;

/// Polls every future until all are done and answers their outputs in the
/// order given: `futures::future::join_all`, in a dozen lines, except that a
/// future that panics is dropped and answers its panic (`Err`) while the
/// others go on.
pub(crate) async fn join_all<F: Future>(
    futures: impl IntoIterator<Item = F>,
) -> Vec<std::thread::Result<F::Output>> {
    let mut pending: Vec<_> = futures.into_iter().map(|f| Some(Box::pin(f))).collect();
    let mut outputs: Vec<Option<std::thread::Result<F::Output>>> = pending.iter().map(|_| None).collect();
    std::future::poll_fn(|cx| {
        let mut all_done = true;
        for (slot, output) in pending.iter_mut().zip(outputs.iter_mut()) {
            if let Some(future) = slot {
                // A panicking future is never polled again, so whatever it
                // left half-done is never observed.
                match catch_unwind(AssertUnwindSafe(|| future.as_mut().poll(cx))) {
                    Ok(Poll::Pending) => all_done = false,
                    Ok(Poll::Ready(value)) => {
                        *output = Some(Ok(value));
                        *slot = None;
                    }
                    Err(panic) => {
                        *output = Some(Err(panic));
                        *slot = None;
                    }
                }
            }
        }
        if all_done { Poll::Ready(()) } else { Poll::Pending }
    })
    .await;
    outputs.into_iter().flatten().collect()
}
