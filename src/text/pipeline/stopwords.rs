//! Stop words: lists under `resources/stopwords/<name>.txt`, embedded in the binary, or any
//! file a user names. One word a line; `#` starts a comment.

use std::borrow::Cow;
use std::path::Path;

use fxhash::FxHashSet;

use super::filter::{AsciiFilter, AsciiToken, TokenFilter};
use crate::error::{Error, Result};

/// The built-in lists, by name.
const BUILTIN: &[(&str, &str)] = &[(
    "english",
    include_str!("../../../resources/stopwords/english.txt"),
)];

/// Names of the built-in lists.
pub fn builtin_names() -> Vec<&'static str> {
    BUILTIN.iter().map(|(name, _)| *name).collect()
}

/// Parses a list: one word a line, `#` comments, blank lines ignored, words lowercased.
pub fn parse_list(text: &str) -> Vec<String> {
    let mut words: Vec<String> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(str::to_lowercase)
        .collect();
    words.sort();
    words.dedup();
    words
}

/// Loads a built-in list by name, or a list from a file when `name_or_path` names one.
pub fn load(name_or_path: &str) -> Result<Vec<String>> {
    if let Some((_, text)) = BUILTIN.iter().find(|(name, _)| *name == name_or_path) {
        return Ok(parse_list(text));
    }
    let path = Path::new(name_or_path);
    if path.exists() {
        let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
        return Ok(parse_list(&text));
    }
    Err(Error::InvalidSetting(format!(
        "stop words {name_or_path:?} is neither a built-in list ({}) nor a file",
        builtin_names().join(", ")
    )))
}

/// Drops the words of a list (compare after lowercasing: put `Lowercase` first).
#[derive(Clone)]
pub struct StopWords {
    words: FxHashSet<String>,
    /// The words of at most 15 bytes packed into integers ([`AsciiToken::packed`]), for ASCII
    /// tokens: one multiply and an integer comparison or two instead of hashing a string and
    /// `memcmp`.
    packed: PackedSet,
    /// The longest word in bytes: longer tokens cannot be stop words.
    longest: usize,
}

impl StopWords {
    pub fn new(words: &[String]) -> Self {
        StopWords {
            words: words.iter().cloned().collect(),
            packed: PackedSet::new(words.iter().filter_map(|w| AsciiToken::new(w)?.packed())),
            longest: words.iter().map(String::len).max().unwrap_or(0),
        }
    }
}

/// A set of non-zero u128 keys: open addressing with linear probing in a table at most a
/// quarter full, so a lookup is one multiply and usually one comparison. Hand-written because
/// a general hash set hashes the 16 bytes and probes in groups, which made stop words the most
/// expensive stage of the ASCII pipeline.
#[derive(Clone)]
struct PackedSet {
    slots: Vec<u128>,
    shift: u32,
}

impl PackedSet {
    fn new(keys: impl Iterator<Item = u128>) -> Self {
        let keys: Vec<u128> = keys.collect();
        let bits = (keys.len().max(1) * 4)
            .next_power_of_two()
            .trailing_zeros()
            .max(4);
        let mut set = PackedSet {
            slots: vec![0; 1 << bits],
            shift: 64 - bits,
        };
        for key in keys {
            let mut i = set.slot(key);
            while set.slots[i] != 0 && set.slots[i] != key {
                i = (i + 1) & (set.slots.len() - 1);
            }
            set.slots[i] = key;
        }
        set
    }

    #[inline]
    fn slot(&self, key: u128) -> usize {
        let mixed = (key as u64) ^ ((key >> 64) as u64).rotate_left(29);
        (mixed.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> self.shift) as usize
    }

    #[inline]
    fn contains(&self, key: u128) -> bool {
        let mut i = self.slot(key);
        loop {
            match self.slots[i] {
                0 => return false,
                k if k == key => return true,
                _ => i = (i + 1) & (self.slots.len() - 1),
            }
        }
    }
}

impl TokenFilter for StopWords {
    fn filter<'a>(&mut self, token: Cow<'a, str>) -> Option<Cow<'a, str>> {
        (!self.words.contains(token.as_ref())).then_some(token)
    }

    fn ascii_form(&self) -> Option<AsciiFilter> {
        Some(AsciiFilter::StopWords(self.clone()))
    }
}

impl StopWords {
    /// Whether the ASCII `token` is a stop word.
    #[inline(always)]
    pub fn contains_ascii(&self, token: &AsciiToken) -> bool {
        if token.len() > self.longest {
            return false;
        }
        match token.packed() {
            Some(key) => self.packed.contains(key),
            None => self.contains_long(token),
        }
    }

    /// A stop word of 16 bytes or more (a user's list may have one).
    #[cold]
    #[inline(never)]
    fn contains_long(&self, token: &AsciiToken) -> bool {
        self.words.contains(token.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn english_list_loads_and_filters() {
        let words = load("english").unwrap();
        assert_eq!(words.len(), 174);
        let mut f = StopWords::new(&words);
        assert!(f.filter(Cow::Borrowed("the")).is_none());
        assert!(f.filter(Cow::Borrowed("don't")).is_none());
        assert!(f.filter(Cow::Borrowed("space")).is_some());
        for word in &words {
            let token = AsciiToken::new(word).unwrap();
            assert!(f.contains_ascii(&token), "{word}");
        }
        for word in ["space", "thee", "th", "", "abcdefghijklmnopq", "doesn"] {
            let token = AsciiToken::new(word).unwrap();
            assert!(!f.contains_ascii(&token), "{word}");
        }
    }

    #[test]
    fn unknown_list_is_a_clear_error() {
        let err = load("klingon").unwrap_err().to_string();
        assert!(
            err.contains("\"klingon\"") && err.contains("english"),
            "{err}"
        );
    }
}
