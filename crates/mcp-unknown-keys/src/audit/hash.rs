//! The one word-at-a-time hash of the core's tables (tool names in the
//! catalogue, keys and forms in the diagnosis's index): eight bytes folded
//! in per step by a rotate, an xor and a multiply, as rustc's FxHash does.
//!
//! Not flood-resistant: the tables it serves hold names a server listed,
//! and a lookup of a model-written name costs one probe whatever the name.

/// The multiplier of each step (FxHash's).
const SEED: u64 = 0x51_7c_c1_b7_27_22_0a_95;

/// Folds `bytes` into `state`, eight bytes at a time.
#[inline]
pub(crate) fn fold_words(mut state: u64, bytes: &[u8]) -> u64 {
    let mut chunks = bytes.chunks_exact(8);
    for chunk in &mut chunks {
        let word = u64::from_le_bytes(chunk.try_into().expect("eight bytes"));
        state = (state.rotate_left(5) ^ word).wrapping_mul(SEED);
    }
    for &byte in chunks.remainder() {
        state = (state.rotate_left(5) ^ u64::from(byte)).wrapping_mul(SEED);
    }
    state
}
