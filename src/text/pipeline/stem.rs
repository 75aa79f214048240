//! Snowball stemming (`rust-stemmers`) with a cache: stemming costs about four times the rest of
//! the pipeline, and text repeats its words, so each distinct word is stemmed once per thread.

use std::borrow::Cow;

use super::hash::HashMap;
use rust_stemmers::{Algorithm, Stemmer};
use serde::{Deserialize, Serialize};

use super::filter::TokenFilter;

/// The cache is cleared when it holds this many words, so memory stays bounded on huge corpora.
const CACHE_LIMIT: usize = 200_000;

/// Languages with a Snowball stemmer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
#[serde(rename_all = "snake_case")]
pub enum StemLanguage {
    Arabic,
    Danish,
    Dutch,
    English,
    Finnish,
    French,
    German,
    Greek,
    Hungarian,
    Italian,
    Norwegian,
    Portuguese,
    Romanian,
    Russian,
    Spanish,
    Swedish,
    Tamil,
    Turkish,
}

impl StemLanguage {
    /// The name as typed on the command line (`--stem`) and printed by `tune`.
    pub fn name(self) -> &'static str {
        use StemLanguage::*;
        match self {
            Arabic => "arabic",
            Danish => "danish",
            Dutch => "dutch",
            English => "english",
            Finnish => "finnish",
            French => "french",
            German => "german",
            Greek => "greek",
            Hungarian => "hungarian",
            Italian => "italian",
            Norwegian => "norwegian",
            Portuguese => "portuguese",
            Romanian => "romanian",
            Russian => "russian",
            Spanish => "spanish",
            Swedish => "swedish",
            Tamil => "tamil",
            Turkish => "turkish",
        }
    }

    fn algorithm(self) -> Algorithm {
        use StemLanguage::*;
        match self {
            Arabic => Algorithm::Arabic,
            Danish => Algorithm::Danish,
            Dutch => Algorithm::Dutch,
            English => Algorithm::English,
            Finnish => Algorithm::Finnish,
            French => Algorithm::French,
            German => Algorithm::German,
            Greek => Algorithm::Greek,
            Hungarian => Algorithm::Hungarian,
            Italian => Algorithm::Italian,
            Norwegian => Algorithm::Norwegian,
            Portuguese => Algorithm::Portuguese,
            Romanian => Algorithm::Romanian,
            Russian => Algorithm::Russian,
            Spanish => Algorithm::Spanish,
            Swedish => Algorithm::Swedish,
            Tamil => Algorithm::Tamil,
            Turkish => Algorithm::Turkish,
        }
    }
}

/// A cached Snowball stemmer.
pub struct Stem {
    stemmer: Stemmer,
    cache: HashMap<String, String>,
}

impl Stem {
    pub fn new(language: StemLanguage) -> Self {
        Stem {
            stemmer: Stemmer::create(language.algorithm()),
            cache: HashMap::default(),
        }
    }
}

impl TokenFilter for Stem {
    fn filter<'a>(&mut self, token: Cow<'a, str>) -> Option<Cow<'a, str>> {
        if let Some(stem) = self.cache.get(token.as_ref()) {
            return Some(Cow::Owned(stem.clone()));
        }
        let stem = self.stemmer.stem(&token).into_owned();
        if self.cache.len() >= CACHE_LIMIT {
            self.cache.clear();
        }
        self.cache.insert(token.into_owned(), stem.clone());
        Some(Cow::Owned(stem))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `name` is what `--stem` takes and what the model's JSON holds.
    #[test]
    fn a_languages_name_is_its_flag_value_and_its_stored_name() {
        for language in [
            StemLanguage::English,
            StemLanguage::Russian,
            StemLanguage::Tamil,
        ] {
            let stored = serde_json::to_string(&language).unwrap();
            assert_eq!(stored, format!("\"{}\"", language.name()));
            #[cfg(feature = "cli")]
            assert_eq!(
                clap::ValueEnum::to_possible_value(&language)
                    .unwrap()
                    .get_name(),
                language.name()
            );
        }
    }

    #[test]
    fn stems_and_caches() {
        let mut s = Stem::new(StemLanguage::English);
        assert_eq!(s.filter(Cow::Borrowed("running")).unwrap(), "run");
        assert_eq!(s.filter(Cow::Borrowed("running")).unwrap(), "run");
        assert_eq!(s.cache.len(), 1);
        let mut fr = Stem::new(StemLanguage::French);
        assert_eq!(
            fr.filter(Cow::Borrowed("continuellement")).unwrap(),
            "continuel"
        );
    }
}
