//! Token filters: each one rewrites or drops one token. The simple ones live here; stop words
//! and stemming have files of their own.

use std::borrow::Cow;

use serde::{Deserialize, Serialize};

use super::stem::{Stem, StemLanguage};
use super::stopwords::StopWords;
use crate::error::{Error, Result};

/// A filter maps a token to its replacement, or drops it with `None`.
/// `&mut self` lets a filter keep a cache (stemming does).
pub trait TokenFilter: Send {
    fn filter<'a>(&mut self, token: Cow<'a, str>) -> Option<Cow<'a, str>>;
}

/// The configured filters, as stored in the model (applied in order).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum FilterConfig {
    /// Unicode lowercasing.
    Lowercase,
    /// Drops tokens longer than `chars` characters (base64 runs, URLs glued together).
    MaxLength { chars: usize },
    /// Drops the listed words. The words themselves are stored, so a model never depends on
    /// the resource files of the cwtext that loads it.
    StopWords { name: String, words: Vec<String> },
    /// Snowball stemming.
    Stem { language: StemLanguage },
}

impl FilterConfig {
    pub fn validate(&self) -> Result<()> {
        match self {
            FilterConfig::MaxLength { chars: 0 } => Err(Error::InvalidSetting(
                "max token length must be at least 1, but is 0".into(),
            )),
            _ => Ok(()),
        }
    }

    pub fn build(&self) -> Box<dyn TokenFilter> {
        match self {
            FilterConfig::Lowercase => Box::new(Lowercase),
            FilterConfig::MaxLength { chars } => Box::new(MaxLength(*chars)),
            FilterConfig::StopWords { words, .. } => Box::new(StopWords::new(words)),
            FilterConfig::Stem { language } => Box::new(Stem::new(*language)),
        }
    }
}

/// Unicode lowercasing that borrows when the token is already lowercase.
pub struct Lowercase;

impl TokenFilter for Lowercase {
    fn filter<'a>(&mut self, token: Cow<'a, str>) -> Option<Cow<'a, str>> {
        let lower = if token.is_ascii() {
            !token.bytes().any(|b| b.is_ascii_uppercase())
        } else {
            !token.chars().any(char::is_uppercase)
        };
        Some(if lower {
            token
        } else {
            Cow::Owned(token.to_lowercase())
        })
    }
}

/// Drops over-long tokens.
pub struct MaxLength(pub usize);

impl TokenFilter for MaxLength {
    fn filter<'a>(&mut self, token: Cow<'a, str>) -> Option<Cow<'a, str>> {
        // Byte length bounds char count from above: only long tokens pay for counting.
        (token.len() <= self.0 || token.chars().count() <= self.0).then_some(token)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lowercase_borrows_when_it_can() {
        let mut f = Lowercase;
        assert!(matches!(
            f.filter(Cow::Borrowed("space")),
            Some(Cow::Borrowed("space"))
        ));
        assert_eq!(f.filter(Cow::Borrowed("ÉCOLE")).unwrap(), "école");
        assert_eq!(f.filter(Cow::Borrowed("NASA")).unwrap(), "nasa");
    }

    #[test]
    fn max_length_counts_characters() {
        let mut f = MaxLength(5);
        assert!(f.filter(Cow::Borrowed("ééééé")).is_some());
        assert!(f.filter(Cow::Borrowed("abcdef")).is_none());
    }
}
