//! The key table: a set of declared keys that a model-written key is looked
//! up in, once per key of every audited call.

/// Keys, sorted by code point, with an open-addressing table over their
/// fingerprints.
#[derive(Clone, Debug, Default)]
pub(crate) struct KeyTable {
    keys: Box<[Box<str>]>,
    /// The fingerprint of each key, in the same order.
    prints: Box<[Fingerprint]>,
    /// Each slot holds a key's index plus one, or 0 when empty. At most half
    /// full, and every fingerprint spreads over the whole table, so a lookup
    /// probes one or two slots whatever the keys.
    slots: Box<[u32]>,
}

/// A key's length with its first and last eight bytes (overlapping, or
/// fewer, for short keys). Two keys of at most 16 bytes are equal exactly
/// when their fingerprints are. A longer key's `head` is a hash of all its
/// bytes instead, and equal fingerprints still need a comparison: keys that
/// share their length and both ends (`sensor_000001_temperature`,
/// `sensor_000002_temperature`, …) differ in their hash, so they neither
/// crowd one chain of slots nor compare equal but for one of them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Fingerprint {
    len: usize,
    head: u64,
    tail: u64,
}

/// The most bytes a fingerprint holds whole.
const WHOLE_BYTES: usize = 16;

impl Fingerprint {
    #[inline(always)]
    fn of(bytes: &[u8]) -> Fingerprint {
        let len = bytes.len();
        let (head, tail) = if len > WHOLE_BYTES {
            return Fingerprint::of_long(bytes);
        } else if len >= 8 {
            (u64::from_le_bytes(first(bytes)), u64::from_le_bytes(last(bytes)))
        } else if len >= 4 {
            (
                u64::from(u32::from_le_bytes(first(bytes))),
                u64::from(u32::from_le_bytes(last(bytes))),
            )
        } else if len > 0 {
            let spread = [bytes[0], bytes[len / 2], bytes[len - 1], 0];
            (u64::from(u32::from_le_bytes(spread)), 0)
        } else {
            (0, 0)
        };
        Fingerprint { len, head, tail }
    }

    /// The fingerprint of a key longer than [`WHOLE_BYTES`]: out of line,
    /// so that the lookup of a short key, every key of most calls, stays
    /// small enough to be inlined into the scan.
    #[cold]
    #[inline(never)]
    fn of_long(bytes: &[u8]) -> Fingerprint {
        Fingerprint {
            len: bytes.len(),
            head: hash(bytes),
            tail: u64::from_le_bytes(last(bytes)),
        }
    }

    /// Where the fingerprint starts probing in a table of `mask + 1` slots.
    #[inline]
    fn slot(&self, mask: usize) -> usize {
        let mixed =
            (self.head ^ self.tail.rotate_left(29) ^ self.len as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        (mixed >> 32) as usize & mask
    }

    /// Whether the fingerprint holds every byte of its key.
    #[inline]
    fn is_whole(&self) -> bool {
        self.len <= WHOLE_BYTES
    }
}

/// A hash of every byte of a key longer than 16 bytes: each eight-byte word
/// folded in by a 128-bit multiply, whose two halves mix every input bit
/// into every output bit. Only long keys pay for it, a few multiplies.
#[inline]
fn hash(bytes: &[u8]) -> u64 {
    const K1: u64 = 0xa076_1d64_78bd_642f;
    const K2: u64 = 0xe703_7ed1_a0b4_28db;
    let fold = |a: u64, b: u64| {
        let product = u128::from(a) * u128::from(b);
        (product as u64) ^ ((product >> 64) as u64)
    };
    let mut state = bytes.len() as u64 ^ K1;
    let mut words = bytes.chunks_exact(8);
    for word in &mut words {
        state = fold(
            state ^ u64::from_le_bytes(word.try_into().expect("eight bytes")),
            K2,
        );
    }
    if !words.remainder().is_empty() {
        // The last eight bytes, overlapping the words before: every key
        // hashed here has more than sixteen.
        state = fold(state ^ u64::from_le_bytes(last(bytes)), K1);
    }
    fold(state, K2)
}

#[inline]
fn first<const N: usize>(bytes: &[u8]) -> [u8; N] {
    bytes[..N].try_into().expect("N bytes")
}

#[inline]
fn last<const N: usize>(bytes: &[u8]) -> [u8; N] {
    bytes[bytes.len() - N..].try_into().expect("N bytes")
}

impl KeyTable {
    /// The table of `keys`, which are sorted and deduplicated here.
    pub(crate) fn new(mut keys: Vec<Box<str>>) -> KeyTable {
        keys.sort_unstable();
        keys.dedup();
        let prints: Box<[Fingerprint]> = keys.iter().map(|key| Fingerprint::of(key.as_bytes())).collect();
        let size = (prints.len() * 2).next_power_of_two().max(4);
        let mut slots = vec![0u32; size];
        for (index, print) in prints.iter().enumerate() {
            let mut at = print.slot(size - 1);
            while slots[at] != 0 {
                at = (at + 1) & (size - 1);
            }
            slots[at] = index as u32 + 1;
        }
        KeyTable {
            keys: keys.into(),
            prints,
            slots: slots.into(),
        }
    }

    /// The index of `key` among the sorted keys, if it is one of them.
    #[inline(always)]
    pub(crate) fn find(&self, key: &str) -> Option<usize> {
        self.probe(key, |_| ())
    }

    /// [`KeyTable::find`], calling `on_probe` for each slot it reads.
    #[inline(always)]
    fn probe(&self, key: &str, mut on_probe: impl FnMut(usize)) -> Option<usize> {
        // The hot path of every audit. A fingerprint settles a key in a few
        // integer compares, and the slot table finds the one fingerprint to
        // compare: no string comparison at all for keys of up to 16 bytes.
        let print = Fingerprint::of(key.as_bytes());
        let mask = self.slots.len().wrapping_sub(1);
        let mut at = print.slot(mask);
        loop {
            on_probe(at);
            let index = self.slots.get(at).and_then(|&slot| slot.checked_sub(1))? as usize;
            if self.prints[index] == print && (print.is_whole() || self.is_key(index, key)) {
                return Some(index);
            }
            at = (at + 1) & mask;
        }
    }

    /// Whether the key at `index` is `key`: for long keys only, whose
    /// fingerprint does not hold them whole. Out of line, as
    /// [`Fingerprint::of_long`] is.
    #[cold]
    #[inline(never)]
    fn is_key(&self, index: usize, key: &str) -> bool {
        *self.keys[index] == *key
    }

    /// The keys, sorted by code point.
    pub(crate) fn keys(&self) -> &[Box<str>] {
        &self.keys
    }

    /// How many slots a lookup of `key` reads: the work the table does.
    #[cfg(test)]
    pub(crate) fn probes(&self, key: &str) -> usize {
        let mut probes = 0;
        self.probe(key, |_| probes += 1);
        probes
    }
}

impl PartialEq for KeyTable {
    fn eq(&self, other: &KeyTable) -> bool {
        self.keys == other.keys
    }
}

impl Eq for KeyTable {}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(keys: &[String]) -> KeyTable {
        KeyTable::new(keys.iter().map(|key| key.as_str().into()).collect())
    }

    fn declares(table: &KeyTable, key: &str) -> bool {
        table.find(key).is_some()
    }

    #[test]
    fn finds_exactly_the_keys_at_every_length() {
        let keys: Vec<String> = [
            "",
            "a",
            "ab",
            "abc",
            "abcd",
            "abcde",
            "abcdefg",
            "abcdefgh",
            "abcdefghi",
            "abcdefghijklmnop",
            "abcdefghijklmnopq",
            "abcdefgh_middle_differs_ijklmnop",
            "ünïcødé",
        ]
        .map(String::from)
        .into();
        let set = table(&keys);
        for key in &keys {
            assert!(declares(&set, key), "{key:?}");
            assert_eq!(set.keys()[set.find(key).unwrap()].as_ref(), key);
        }
        let near = [
            "b",
            "ac",
            "abd",
            "abce",
            "abcdf",
            "abcdefh",
            "abcdefgi",
            "abcdefghj",
            "abcdefghijklmnoq",
            "abcdefghijklmnopr",
            "abcdefgh_middle_DIFFERS_ijklmnop",
            "ünïcødè",
            "abcdefghijklmnop ",
        ];
        for key in near {
            assert!(!declares(&set, key), "{key:?}");
        }
    }

    #[test]
    fn a_large_table_is_searched_too() {
        let keys: Vec<String> = (0..100).map(|i| format!("property_{i}")).collect();
        let set = table(&keys);
        assert!(keys.iter().all(|k| declares(&set, k)));
        assert!(!declares(&set, "property_100"));
    }

    /// The most slots any lookup reads, and the mean over all lookups, of
    /// every declared key and as many undeclared keys of the same shape.
    fn probes(declared: usize) -> (usize, f64) {
        let shaped = |i: usize| format!("sensor_{i:06}_temperature");
        let keys: Vec<String> = (0..declared).map(shaped).collect();
        let set = table(&keys);
        let lookups: Vec<usize> = (0..2 * declared)
            .map(|i| {
                let key = shaped(i);
                assert_eq!(declares(&set, &key), i < declared, "{key}");
                set.probes(&key)
            })
            .collect();
        let mean = lookups.iter().sum::<usize>() as f64 / lookups.len() as f64;
        (lookups.into_iter().max().unwrap_or(0), mean)
    }

    #[test]
    fn keys_sharing_their_length_and_both_ends_do_not_crowd_one_chain() {
        // With fingerprints of length and ends alone, all of these fell into
        // one chain: a lookup read thousands of slots, eight times more for
        // eight times the keys. Hashed whole, the work per lookup stays that
        // of a half-full table however many keys there are.
        let (small_max, small_mean) = probes(2_000);
        let (large_max, large_mean) = probes(16_000);
        assert!(small_mean < 3.0 && large_mean < 3.0, "{small_mean} {large_mean}");
        assert!(small_max < 40 && large_max < 40, "{small_max} {large_max}");
    }

    #[test]
    fn long_keys_differing_in_one_byte_anywhere_are_told_apart() {
        let base = "abcdefghijklmnopqrstuvwxyz0123456789".to_string();
        let set = table(std::slice::from_ref(&base));
        for at in 0..base.len() {
            let mut other = base.clone().into_bytes();
            other[at] = b'_';
            let other = String::from_utf8(other).unwrap();
            assert!(!declares(&set, &other), "{other}");
        }
        assert!(declares(&set, &base));
    }
}
