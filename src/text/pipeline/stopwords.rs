//! Stop words: lists under `resources/stopwords/<name>.txt`, embedded in the binary, or any
//! file a user names. One word a line; `#` starts a comment.

use std::borrow::Cow;
use std::path::Path;

use super::hash::HashSet;

use super::ascii::{AsciiFilter, AsciiStopWords};
use super::filter::TokenFilter;
use crate::error::{Error, Result};

/// The built-in lists, by name: the Snowball project's list of every language it has one for
/// (BSD licence), named as the Snowball stemmer of the same language.
const BUILTIN: &[(&str, &str)] = &[
    (
        "danish",
        include_str!("../../../resources/stopwords/danish.txt"),
    ),
    (
        "dutch",
        include_str!("../../../resources/stopwords/dutch.txt"),
    ),
    (
        "english",
        include_str!("../../../resources/stopwords/english.txt"),
    ),
    (
        "finnish",
        include_str!("../../../resources/stopwords/finnish.txt"),
    ),
    (
        "french",
        include_str!("../../../resources/stopwords/french.txt"),
    ),
    (
        "german",
        include_str!("../../../resources/stopwords/german.txt"),
    ),
    (
        "hungarian",
        include_str!("../../../resources/stopwords/hungarian.txt"),
    ),
    (
        "italian",
        include_str!("../../../resources/stopwords/italian.txt"),
    ),
    (
        "norwegian",
        include_str!("../../../resources/stopwords/norwegian.txt"),
    ),
    (
        "portuguese",
        include_str!("../../../resources/stopwords/portuguese.txt"),
    ),
    (
        "russian",
        include_str!("../../../resources/stopwords/russian.txt"),
    ),
    (
        "spanish",
        include_str!("../../../resources/stopwords/spanish.txt"),
    ),
    (
        "swedish",
        include_str!("../../../resources/stopwords/swedish.txt"),
    ),
];

/// Names of the built-in lists.
pub fn builtin_names() -> Vec<&'static str> {
    BUILTIN.iter().map(|(name, _)| *name).collect()
}

/// Whether `name` is a built-in list.
pub fn is_builtin(name: &str) -> bool {
    builtin_name(name).is_some()
}

/// The built-in list called `name`, by its static name.
pub fn builtin_name(name: &str) -> Option<&'static str> {
    BUILTIN.iter().map(|(n, _)| *n).find(|n| *n == name)
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
    words: HashSet<String>,
    /// The same list for ASCII tokens (the fast path).
    ascii: AsciiStopWords,
}

impl StopWords {
    pub fn new(words: &[String]) -> Self {
        StopWords {
            words: words.iter().cloned().collect(),
            ascii: AsciiStopWords::new(words),
        }
    }
}

impl TokenFilter for StopWords {
    fn filter<'a>(&mut self, token: Cow<'a, str>) -> Option<Cow<'a, str>> {
        (!self.words.contains(token.as_ref())).then_some(token)
    }

    fn ascii_form(&self) -> Option<AsciiFilter> {
        Some(AsciiFilter::StopWords(self.ascii.clone()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::text::pipeline::ascii::AsciiToken;

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
            assert!(f.ascii.contains(&token), "{word}");
        }
        for word in ["space", "thee", "th", "", "abcdefghijklmnopq", "doesn"] {
            let token = AsciiToken::new(word).unwrap();
            assert!(!f.ascii.contains(&token), "{word}");
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
