//! Keys read as words: the pure rules the diagnosis applies to one key and
//! one declared key, with no index and no budget.
//!
//! - [`normalized`]: the key without case or separators (`styleId`,
//!   `style_id` and `Style-Id` all read `styleid`);
//! - [`for_each_plural_form`]: the forms a singular or plural of a
//!   normalised key takes (`filter` ↔ `filters`, `query` ↔ `queries`);
//! - [`abbreviates`]: whether the words of one key shorten those of another
//!   (`cnt` → `count`, `target_tz` → `target_timezone`, `tz` → `time_zone`);
//! - [`Pattern::distance`]: how many typing slips apart two keys are.

/// A key with more words than this is a piece of text, not a parameter name.
pub(super) const MAX_KEY_WORDS: usize = 5;

/// Keys longer than this (in characters, once normalised) are never compared
/// by edit distance: one comparison stays small and bounded.
pub(super) const MAX_EDIT_CHARS: usize = 64;

/// The key without case or separators: `tokenBudget`, `token_budget` and
/// `Token-Budget` all read `tokenbudget`.
pub(super) fn normalized(key: &str) -> String {
    let mut form = String::with_capacity(key.len());
    push_normalized(key, &mut form);
    form
}

/// Appends [`normalized`]`(key)` to `out`.
pub(super) fn push_normalized(key: &str, out: &mut String) {
    for c in key.chars() {
        match c {
            '_' | '-' | '.' | ' ' => {}
            // Nearly every key is ASCII: no look at Unicode's tables for it.
            c if c.is_ascii() => out.push(c.to_ascii_lowercase()),
            c => out.extend(c.to_lowercase()),
        }
    }
}

/// Calls `visit` with each letter or digit of an identifier, lowercased,
/// and whether it starts a word: words split at every character that is not
/// a letter or digit and where a lowercase letter or digit meets an
/// uppercase one.
fn for_each_word_char(identifier: &str, mut visit: impl FnMut(char, bool)) {
    let mut in_word = false;
    let mut previous_lower = false;
    for c in identifier.chars() {
        if !c.is_alphanumeric() {
            in_word = false;
            previous_lower = false;
            continue;
        }
        let starts = !in_word || (previous_lower && c.is_uppercase());
        if c.is_ascii() {
            visit(c.to_ascii_lowercase(), starts);
        } else {
            for (at, lower) in c.to_lowercase().enumerate() {
                visit(lower, starts && at == 0);
            }
        }
        in_word = true;
        previous_lower = c.is_lowercase() || c.is_numeric();
    }
}

/// The words of an identifier, lowercased (`styleId` and `style_id` are
/// both `style`, `id`; `URL` is one word).
pub(super) fn words(identifier: &str) -> Vec<String> {
    let mut words: Vec<String> = Vec::new();
    for_each_word_char(identifier, |c, starts| match words.last_mut() {
        Some(word) if !starts => word.push(c),
        _ => words.push(c.into()),
    });
    words
}

/// Calls `visit` with the first letter of each word, lowercased:
/// `target_timezone` → `t`, `t`; `time_zone` → `t`, `z`. What the
/// abbreviation index files a declared key under.
pub(super) fn for_each_initial(identifier: &str, mut visit: impl FnMut(char)) {
    for_each_word_char(identifier, |c, starts| {
        if starts {
            visit(c);
        }
    });
}

/// Calls `visit` with each string of initials a declared key would need
/// for `key_words` to abbreviate it (see [`abbreviates`]): each key word
/// stands either for one declared word (its first letter) or, when it is two
/// to four letters, for as many declared words, one letter each (`tz` for
/// `time_zone`). At most 2^[`MAX_KEY_WORDS`] of them, built in one buffer.
pub(super) fn for_each_initials_wanted(key_words: &[String], mut visit: impl FnMut(&str)) {
    fn extend(key_words: &[String], buffer: &mut String, visit: &mut impl FnMut(&str)) {
        let Some((word, rest)) = key_words.split_first() else {
            visit(buffer);
            return;
        };
        let kept = buffer.len();
        if let Some(first) = word.chars().next() {
            buffer.push(first);
            extend(rest, buffer, visit);
            buffer.truncate(kept);
        }
        if could_be_initials(word) {
            buffer.push_str(word);
            extend(rest, buffer, visit);
            buffer.truncate(kept);
        }
    }
    extend(
        key_words,
        &mut String::with_capacity(4 * key_words.len()),
        &mut visit,
    );
}

/// Whether a key word could be the initials of several declared words.
fn could_be_initials(word: &str) -> bool {
    (2..=4).contains(&word.chars().count()) && word.chars().all(char::is_alphabetic)
}

/// Whether `key_words` abbreviate `declared_words`: each key word stands for
/// one declared word, equal to it or shortened, or for two or more
/// consecutive declared words as their initials; every word on both sides
/// is used, in order, and at least one is shortened.
///
/// A word is shortened when it keeps the declared word's first letter,
/// drops at least two letters and keeps the others in order: a prefix of
/// three letters or more (`res` for `results`, `desc` for `description`) or
/// a skeleton of two or more (`cnt` for `count`, `tz` for `timezone`).
/// Dropping a single letter is a typo (`ofset`), left to the edit distance;
/// a prefix of one or two letters (`subagent_ty`) is a key cut short.
pub(super) fn abbreviates(key_words: &[String], declared_words: &[String]) -> bool {
    aligns(key_words, declared_words, false)
}

/// [`abbreviates`], `shortened` telling whether an earlier word was.
/// Recurses once per key word, so at most [`MAX_KEY_WORDS`] deep.
fn aligns(key_words: &[String], declared_words: &[String], shortened: bool) -> bool {
    let Some((word, rest)) = key_words.split_first() else {
        return shortened && declared_words.is_empty();
    };
    let Some((first, after)) = declared_words.split_first() else {
        return false;
    };
    (word == first && aligns(rest, after, shortened))
        || (shortens(word, first) && aligns(rest, after, true))
        || initials_spanned(word, declared_words)
            .is_some_and(|spanned| aligns(rest, &declared_words[spanned..], true))
}

/// How many declared words `word` stands for as their initials (`tz` for
/// `time`, `zone`), when it does.
fn initials_spanned(word: &str, declared_words: &[String]) -> Option<usize> {
    let spanned = word.chars().count();
    let stands_for = could_be_initials(word)
        && spanned <= declared_words.len()
        && word
            .chars()
            .zip(declared_words)
            .all(|(letter, declared)| declared.starts_with(letter));
    stands_for.then_some(spanned)
}

/// Whether `short` is `long` shortened (see [`abbreviates`]).
fn shortens(short: &str, long: &str) -> bool {
    let (short_len, long_len) = (short.chars().count(), long.chars().count());
    if short_len < 2 || short_len + 2 > long_len || short.chars().next() != long.chars().next() {
        return false;
    }
    if long.starts_with(short) {
        return short_len >= 3;
    }
    is_subsequence(short, long)
}

/// Calls `visit` with each normalised form a singular or plural of `form`
/// takes: `s` or `es` added or taken away, `y` for `ies` and back. A
/// singular shorter than two letters is not offered. One buffer serves
/// every form.
pub(super) fn for_each_plural_form(form: &str, mut visit: impl FnMut(&str)) {
    let mut buffer = String::with_capacity(form.len() + 2);
    let mut offer = |stem: &str, ending: &str| {
        buffer.clear();
        buffer.push_str(stem);
        buffer.push_str(ending);
        if buffer.chars().nth(1).is_some() {
            visit(&buffer);
        }
    };
    offer(form, "s");
    offer(form, "es");
    if let Some(stem) = form.strip_suffix('y') {
        offer(stem, "ies");
    }
    if let Some(stem) = form.strip_suffix("ies") {
        offer(stem, "y");
    }
    if let Some(singular) = form.strip_suffix("es") {
        offer(singular, "");
    }
    if let Some(singular) = form.strip_suffix('s') {
        offer(singular, "");
    }
}

/// The edits allowed between two normalised keys for them to be a near
/// miss, by the length of the longer: none under three characters, one up
/// to five, two up to nine, three beyond.
pub(super) fn allowed_edits(longest: usize) -> Option<usize> {
    match longest {
        0..=2 => None,
        3..=5 => Some(1),
        6..=9 => Some(2),
        10..=MAX_EDIT_CHARS => Some(3),
        _ => None,
    }
}

/// The characters of a key folded into 64 bits. Each edit changes at most
/// two bits of the difference of two keys' masks, so keys whose masks differ
/// in more than twice the allowed edits cannot be that close: a one-cycle
/// test that spares most edit distances.
pub(super) fn char_mask(form: &str) -> u64 {
    form.chars().fold(0, |mask, c| mask | 1 << (c as u32 % 64))
}

/// A normalised key of at most [`MAX_EDIT_CHARS`] characters, read once to
/// be compared with many by edit distance: for each of its characters, the
/// bit mask of the places it holds.
pub(super) struct Pattern {
    ascii: [u64; 128],
    other: Vec<(char, u64)>,
    len: usize,
}

impl Pattern {
    /// The pattern of `form`; `None` when it is longer than
    /// [`MAX_EDIT_CHARS`] characters.
    pub(super) fn new(form: &str) -> Option<Pattern> {
        let mut pattern = Pattern {
            ascii: [0; 128],
            other: Vec::new(),
            len: 0,
        };
        for (at, c) in form.chars().enumerate() {
            if at == MAX_EDIT_CHARS {
                return None;
            }
            let bit = 1u64 << at;
            match pattern.ascii.get_mut(c as usize) {
                Some(mask) => *mask |= bit,
                None => match pattern.other.iter_mut().find(|(other, _)| *other == c) {
                    Some((_, mask)) => *mask |= bit,
                    None => pattern.other.push((c, bit)),
                },
            }
            pattern.len = at + 1;
        }
        Some(pattern)
    }

    fn mask(&self, c: char) -> u64 {
        match self.ascii.get(c as usize) {
            Some(&mask) => mask,
            None => self
                .other
                .iter()
                .find(|(other, _)| *other == c)
                .map_or(0, |&(_, mask)| mask),
        }
    }

    /// The optimal-string-alignment distance (insertions, deletions,
    /// substitutions and swaps of neighbours) from the pattern to `text`, of
    /// `text_len` characters, when it is at most `limit`.
    ///
    /// Hyyrö's bit-parallel algorithm (2003): one column of the distance
    /// table per character of `text`, in a few word operations, so a
    /// comparison costs about as much as reading the text. It stops as soon
    /// as the rest of `text` can no longer bring the distance within
    /// `limit`.
    pub(super) fn distance(&self, text: &str, text_len: usize, limit: usize) -> Option<usize> {
        if self.len.abs_diff(text_len) > limit {
            return None;
        }
        if self.len == 0 {
            return Some(text_len);
        }
        if text.is_ascii() {
            // Every byte a character, and its mask one load away.
            let masks = text.bytes().map(|byte| self.ascii[usize::from(byte & 0x7f)]);
            return self.distance_over(masks, text_len, limit);
        }
        self.distance_over(text.chars().map(|c| self.mask(c)), text_len, limit)
    }

    /// [`Pattern::distance`] over the masks of the text's characters.
    fn distance_over(
        &self,
        masks: impl Iterator<Item = u64>,
        text_len: usize,
        limit: usize,
    ) -> Option<usize> {
        let last = 1u64 << (self.len - 1);
        let (mut vp, mut vn, mut d0, mut previous_mask) = (!0u64, 0u64, 0u64, 0u64);
        let mut distance = self.len;
        for (at, mask) in masks.enumerate() {
            let swapped = ((!d0 & mask) << 1) & previous_mask;
            d0 = (((mask & vp).wrapping_add(vp)) ^ vp) | mask | vn | swapped;
            let hp = vn | !(d0 | vp);
            let hn = d0 & vp;
            if hp & last != 0 {
                distance += 1;
            } else if hn & last != 0 {
                distance -= 1;
            }
            let (hp, hn) = ((hp << 1) | 1, hn << 1);
            vp = hn | !(d0 | hp);
            vn = hp & d0;
            previous_mask = mask;
            // Each character left can lower the distance by one at most.
            if distance > limit + text_len.saturating_sub(at + 1) {
                return None;
            }
        }
        (distance <= limit).then_some(distance)
    }
}

/// Whether the characters of `short` occur in `long` in order: what every
/// abbreviation's normalised form is of its declared key's (each word a
/// subsequence of its word, or initials of several). A test without
/// allocation that spares most abbreviation checks.
pub(super) fn is_subsequence(short: &str, long: &str) -> bool {
    let mut remaining = long.chars();
    short.chars().all(|wanted| remaining.any(|c| c == wanted))
}

/// Whether `key` reads like a parameter name: letters, digits and the
/// separators `_`, `-`, `.` (a leading `$` or `@` allowed, as in `$schema`),
/// starting with a letter or `_`, of at most [`MAX_KEY_WORDS`] words.
pub(super) fn is_identifier_like(key: &str) -> bool {
    let body = key.strip_prefix(['$', '@']).unwrap_or(key);
    let Some(first) = body.chars().next() else {
        return false;
    };
    (first.is_alphabetic() || first == '_')
        && body
            .chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '_' | '-' | '.'))
        && words(body).len() <= MAX_KEY_WORDS
}

#[cfg(test)]
mod tests {
    use super::*;

    fn split(key: &str) -> Vec<String> {
        words(key)
    }

    fn abbreviation(key: &str, declared: &str) -> bool {
        abbreviates(&split(key), &split(declared))
    }

    #[test]
    fn words_split_at_separators_and_case_changes() {
        assert_eq!(split("tokenBudget"), ["token", "budget"]);
        assert_eq!(split("token_budget"), ["token", "budget"]);
        assert_eq!(split("StyleId"), ["style", "id"]);
        assert_eq!(split("styleID"), ["style", "id"]);
        assert_eq!(split("URL"), ["url"]);
        assert_eq!(split("maxTokens2"), ["max", "tokens2"]);
        let initials = |key: &str| {
            let mut initials = String::new();
            for_each_initial(key, |c| initials.push(c));
            initials
        };
        assert_eq!(initials("target_timezone"), "tt");
        assert_eq!(initials("timeZone"), "tz");
        assert_eq!(initials("URL"), "u");
    }

    #[test]
    fn case_and_separator_variants_normalise_alike() {
        for key in [
            "styleId", "style_id", "StyleId", "style-id", "STYLE_ID", "style.id",
        ] {
            assert_eq!(normalized(key), "styleid", "{key}");
        }
    }

    fn plural_forms(form: &str) -> Vec<String> {
        let mut forms = Vec::new();
        for_each_plural_form(form, |form| forms.push(form.to_owned()));
        forms
    }

    #[test]
    fn plural_forms_go_both_ways() {
        assert!(plural_forms("filter").contains(&"filters".to_owned()));
        assert!(plural_forms("filters").contains(&"filter".to_owned()));
        assert!(plural_forms("query").contains(&"queries".to_owned()));
        assert!(plural_forms("queries").contains(&"query".to_owned()));
        assert!(plural_forms("matches").contains(&"match".to_owned()));
        assert!(!plural_forms("is").contains(&"i".to_owned()));
    }

    #[test]
    fn abbreviations_shorten_words_or_stand_for_their_initials() {
        for (key, declared) in [
            ("cnt", "count"),
            ("tz", "timezone"),
            ("tz", "time_zone"),
            ("target_tz", "target_timezone"),
            ("target_tz", "target_time_zone"),
            ("tgt_tz", "target_timezone"),
            ("src_path", "source_path"),
            ("img_url", "image_url"),
            ("maxTok", "max_tokens"),
            ("msg", "message"),
            ("max_res", "max_results"),
            ("desc", "description"),
        ] {
            assert!(abbreviation(key, declared), "{key} for {declared}");
        }
        for (key, declared) in [
            ("ofset", "offset"),
            ("count", "count"),
            ("cwd", "working_dir"),
            ("tz", "target_timezone"),
            ("target", "target_timezone"),
            ("path", "pattern"),
            ("c", "count"),
            ("xcnt", "count"),
            ("subagent_ty", "subagent_type"),
            ("working_d", "working_dir"),
            ("timeout", "timeout_ms"),
        ] {
            assert!(!abbreviation(key, declared), "{key} for {declared}");
        }
    }

    #[test]
    fn the_initials_wanted_cover_every_reading_of_the_key() {
        let initials_wanted = |key: &str| {
            let mut wanted = Vec::new();
            for_each_initials_wanted(&split(key), |initials| wanted.push(initials.to_owned()));
            wanted
        };
        assert_eq!(initials_wanted("target_tz"), ["tt", "ttz"]);
        assert_eq!(initials_wanted("tz"), ["t", "tz"]);
        assert_eq!(initials_wanted("count"), ["c"]);
        assert_eq!(initials_wanted("ab_cd_ef_gh_ij").len(), 32);
    }

    fn edit_distance(a: &str, b: &str, limit: usize) -> Option<usize> {
        Pattern::new(a)?.distance(b, b.chars().count(), limit)
    }

    /// The whole optimal-string-alignment table, as a reference.
    fn full_table(a: &[char], b: &[char]) -> usize {
        // Row 0 and column 0 hold their distances from the empty string;
        // the other cells are overwritten below.
        let mut d: Vec<Vec<usize>> = (0..=a.len()).map(|i| (i..=i + b.len()).collect()).collect();
        for i in 1..=a.len() {
            for j in 1..=b.len() {
                let mut best = (d[i - 1][j - 1] + usize::from(a[i - 1] != b[j - 1]))
                    .min(d[i - 1][j] + 1)
                    .min(d[i][j - 1] + 1);
                if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                    best = best.min(d[i - 2][j - 2] + 1);
                }
                d[i][j] = best;
            }
        }
        d[a.len()][b.len()]
    }

    fn agrees_with_the_full_table(a: &str, b: &str) {
        let expected = full_table(&a.chars().collect::<Vec<_>>(), &b.chars().collect::<Vec<_>>());
        for limit in 0..5 {
            let expected = Some(expected).filter(|&d| d <= limit);
            assert_eq!(edit_distance(a, b, limit), expected, "{a:?} {b:?} {limit}");
        }
    }

    #[test]
    fn edit_distance_counts_swaps_as_one_and_stops_at_its_limit() {
        assert_eq!(edit_distance("offset", "ofsfet", 2), Some(1));
        assert_eq!(edit_distance("kitten", "sitting", 3), Some(3));
        assert_eq!(edit_distance("kitten", "sitting", 2), None);
        assert_eq!(edit_distance("", "abc", 3), Some(3));
        assert_eq!(edit_distance("abc", "", 3), Some(3));
        assert_eq!(edit_distance("abcdef", "abcdef", 0), Some(0));
        assert_eq!(edit_distance("écrire", "ecrire", 1), Some(1));
        let long = "x".repeat(MAX_EDIT_CHARS + 1);
        assert_eq!(edit_distance(&long, &long, 3), None);
    }

    #[test]
    fn the_bit_parallel_distance_agrees_with_the_full_table() {
        let words = [
            "offset",
            "ofset",
            "ofsfet",
            "limit",
            "lmit",
            "path",
            "pattern",
            "patern",
            "",
            "a",
            "ab",
            "ba",
            "abc",
            "ca",
            "sensor000042temperature",
            "sensor000042temperatuer",
            "sensor000017temperature",
            "snesor000042temperature",
            "abxab",
            "baxba",
            "écrire",
            "ecrier",
        ];
        for a in words {
            for b in words {
                agrees_with_the_full_table(a, b);
            }
        }
        // And pairs drawn over a small alphabet, where swaps and repeats
        // abound.
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut draw = |len: usize| -> String {
            (0..len)
                .map(|_| {
                    state ^= state << 13;
                    state ^= state >> 7;
                    state ^= state << 17;
                    ['a', 'b', 'c', 'é'][(state % 4) as usize]
                })
                .collect()
        };
        for round in 0..2000 {
            let (a, b) = (draw(round % 9), draw((round / 9) % 9));
            agrees_with_the_full_table(&a, &b);
        }
        let long = "x".repeat(MAX_EDIT_CHARS);
        agrees_with_the_full_table(&long, &format!("{long}y")[1..]);
    }

    #[test]
    fn masks_never_rule_out_a_close_pair() {
        for (a, b) in [("offset", "ofsfet"), ("patern", "pattern"), ("limit", "limt")] {
            let distance = edit_distance(a, b, 3).unwrap();
            assert!((char_mask(a) ^ char_mask(b)).count_ones() as usize <= 2 * distance);
        }
    }

    #[test]
    fn identifier_like_keys_are_names_not_text() {
        for key in ["path", "$schema", "@type", "_id", "file-path", "a.b"] {
            assert!(is_identifier_like(key), "{key}");
        }
        for key in [
            "",
            "12",
            "the rest",
            "a, b",
            "{\"x\"",
            "one_two_three_four_five_six",
        ] {
            assert!(!is_identifier_like(key), "{key}");
        }
    }
}
