//! Elided articles taken off words: French *l'homme*, *d'éditer*, *qu'il* and Italian
//! *dell'anno*, *un'altra* become *homme*, *éditer*, *il*, *anno*, *altra*.
//!
//! UAX #29 keeps an apostrophe between letters inside the word (it is `MidNumLet`), so without
//! this filter *homme* and *l'homme* are two unrelated features, and a stop-word list's *l* or
//! *qu* never matches. The rule is Lucene's `ElisionFilter`: a token whose part before its first
//! apostrophe ([`APOSTROPHES`]: `'`, `’` and three more) is one of the language's articles,
//! compared without case, becomes the part after it. The article lists are those Lucene's `FrenchAnalyzer` and
//! `ItalianAnalyzer` use (Apache-2.0). On Debian's French and Italian package descriptions and
//! French book reviews, taking them off was more accurate on 13 of 15 random test splits, +0.75
//! points on the mean (`benches/results/elisions-2026-12-08.md`).

use std::borrow::Cow;

use super::filter::TokenFilter;
use crate::error::{Error, Result};

/// The built-in article lists, by language (named as the Snowball stemmer of the language).
const BUILTIN: &[(&str, &[&str])] = &[
    (
        "french",
        &[
            "l", "m", "t", "qu", "n", "s", "j", "d", "c", "jusqu", "quoiqu", "lorsqu", "puisqu",
        ],
    ),
    (
        "italian",
        &[
            "c", "l", "all", "dall", "dell", "nell", "sull", "coll", "pell", "gl", "agl", "dagl",
            "degl", "negl", "sugl", "un", "m", "t", "s", "v", "d",
        ],
    ),
];

/// The languages with a built-in article list.
pub fn builtin_names() -> Vec<&'static str> {
    BUILTIN.iter().map(|(name, _)| *name).collect()
}

/// The built-in name `name` stands for, if it is one.
pub fn builtin_name(name: &str) -> Option<&'static str> {
    BUILTIN.iter().map(|(n, _)| *n).find(|n| *n == name)
}

/// The articles of the built-in list `name`, or an error listing the lists there are.
pub fn load(name: &str) -> Result<Vec<String>> {
    BUILTIN
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, articles)| articles.iter().map(|a| a.to_string()).collect())
        .ok_or_else(|| {
            Error::InvalidSetting(format!(
                "no elided articles for {name:?}: the lists are {} (or none)",
                builtin_names().join(", ")
            ))
        })
}

/// What separates an article from its word: the apostrophe, the right single quotation mark
/// (typographic text), and three that UAX #29 also keeps inside a word: the left single
/// quotation mark (used for one by some keyboards and converters), the fullwidth apostrophe
/// and the modifier letter apostrophe.
const APOSTROPHES: [char; 5] = ['\'', '\u{2019}', '\u{2018}', '\u{FF07}', '\u{02BC}'];

/// The filter: the part after the first apostrophe ([`APOSTROPHES`]) when the part before it
/// is an article.
pub struct Elisions {
    articles: Vec<String>,
}

impl Elisions {
    pub fn new(articles: &[String]) -> Self {
        Elisions {
            articles: articles.iter().map(|a| a.to_lowercase()).collect(),
        }
    }

    fn is_article(&self, prefix: &str) -> bool {
        self.articles.iter().any(|a| a.eq_ignore_ascii_case(prefix))
            || (!prefix.is_ascii() && self.articles.contains(&prefix.to_lowercase()))
    }
}

impl TokenFilter for Elisions {
    fn filter<'a>(&mut self, token: Cow<'a, str>) -> Option<Cow<'a, str>> {
        let Some(at) = token.find(APOSTROPHES) else {
            return Some(token);
        };
        let apostrophe = token[at..].chars().next().map_or(1, char::len_utf8);
        let rest = at + apostrophe;
        if at == 0 || rest == token.len() || !self.is_article(&token[..at]) {
            return Some(token);
        }
        Some(match token {
            Cow::Borrowed(s) => Cow::Borrowed(&s[rest..]),
            Cow::Owned(s) => Cow::Owned(s[rest..].to_string()),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn filtered(language: &str, token: &str) -> String {
        let mut f = Elisions::new(&load(language).unwrap());
        f.filter(Cow::Borrowed(token)).unwrap().into_owned()
    }

    #[test]
    fn french_articles_come_off() {
        for (token, word) in [
            ("l'homme", "homme"),
            ("d'éditer", "éditer"),
            ("qu'il", "il"),
            ("jusqu'à", "à"),
            ("lorsqu'on", "on"),
            ("L'Homme", "Homme"),
            ("l\u{2019}école", "école"),
            ("l\u{2018}orage", "orage"),
            ("l\u{FF07}orage", "orage"),
            ("l\u{02BC}orage", "orage"),
            ("L\u{2019}ORAGE", "ORAGE"),
            ("s'est", "est"),
            // Not an article: the word stays whole.
            ("aujourd'hui", "aujourd'hui"),
            ("prud'homme", "prud'homme"),
            ("homme", "homme"),
            // Only the first apostrophe is looked at.
            ("l'aujourd'hui", "aujourd'hui"),
        ] {
            assert_eq!(filtered("french", token), word, "{token}");
        }
    }

    #[test]
    fn italian_articles_come_off() {
        for (token, word) in [
            ("dell'anno", "anno"),
            ("un'altra", "altra"),
            ("l'uomo", "uomo"),
            ("c'è", "è"),
            ("nell\u{2019}ambito", "ambito"),
            ("po'", "po'"),
        ] {
            assert_eq!(filtered("italian", token), word, "{token}");
        }
        // A French article that is not an Italian one.
        assert_eq!(filtered("italian", "qu'il"), "qu'il");
    }

    #[test]
    fn a_borrowed_token_stays_borrowed() {
        let mut f = Elisions::new(&load("french").unwrap());
        assert!(matches!(
            f.filter(Cow::Borrowed("l'homme")),
            Some(Cow::Borrowed("homme"))
        ));
    }

    #[test]
    fn an_unknown_language_is_a_clear_error() {
        let err = load("klingon").unwrap_err().to_string();
        assert!(
            err.contains("\"klingon\"") && err.contains("french, italian"),
            "{err}"
        );
        assert_eq!(builtin_name("italian"), Some("italian"));
        assert_eq!(builtin_name("english"), None);
    }
}
