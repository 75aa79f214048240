//! Token filters: each one rewrites or drops one token. The simple ones live here; stop words
//! and stemming have files of their own, the byte-level forms of the filters for ASCII tokens
//! are in [`super::ascii`], and [`super::config`] builds a filter from its stored setting.

use std::borrow::Cow;

use super::ascii::AsciiFilter;

/// A filter maps a token to its replacement, or drops it with `None`.
/// `&mut self` lets a filter keep a cache (stemming does).
pub trait TokenFilter: Send {
    fn filter<'a>(&mut self, token: Cow<'a, str>) -> Option<Cow<'a, str>>;

    /// The same filter on ASCII tokens held in [`AsciiToken`](super::ascii::AsciiToken)s, if
    /// it has one. When every filter of a pipeline has, ASCII tokens skip the general path (no
    /// allocation, no cache).
    fn ascii_form(&self) -> Option<AsciiFilter> {
        None
    }
}

/// Unicode lowercasing that borrows when the token is already lowercase.
pub struct Lowercase;

impl TokenFilter for Lowercase {
    fn ascii_form(&self) -> Option<AsciiFilter> {
        Some(AsciiFilter::Lowercase)
    }

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
    fn ascii_form(&self) -> Option<AsciiFilter> {
        Some(AsciiFilter::MaxLength(self.0))
    }

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
