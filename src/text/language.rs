//! The language of a corpus, for the settings that depend on it: which Snowball stemmer
//! `tune`'s stemming trials use, and which stop-word list `train`'s choice and `tune`'s trials
//! try ([`Stemming::stop_words`]). An English stemmer leaves Cyrillic words as they are and
//! cuts German and Spanish ones by English rules, so before this a Russian corpus's stemming
//! trials were its unstemmed trials again; stemmed in its own language, Russian fortune
//! cookies gained 1.1 and 1.6 points with plain `train` (`benches/results/`
//! `stemming-languages-2026-12-07.md`).
//!
//! The language is detected by [`whatlang`] (trigram profiles of 69 languages, MIT) on the
//! text of the sampled documents together, so that short texts count as much as their words.

use whatlang::Lang;

use crate::text::input::Document;
use crate::text::pipeline::stem::StemLanguage;
use crate::text::pipeline::stopwords;

/// At most this much of the sample's text is read: the detector's trigram counts settle long
/// before (whatlang is accurate from a few hundred characters).
const MAX_SAMPLE_BYTES: usize = 64 * 1024;

/// What the sample's language says about stemming.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Stemming {
    /// A Snowball stemmer for the detected language.
    In(StemLanguage),
    /// The detected language has no Snowball stemmer (Chinese, Polish, Slovenian, …).
    NoStemmer,
    /// No language was detected with confidence (too little text, several languages).
    Unknown,
}

/// The stemming the sampled documents' language allows (their bodies, a mail's Subject in it).
/// Every document gives the detector the same share of at most [`MAX_SAMPLE_BYTES`], its
/// beginning: the sample is spread over a file list ordered by label, so reading documents
/// whole until the bytes ran out let the first labels' documents decide (in a corpus of long
/// English and German documents, the language depended on which label sorted first).
pub fn stemming<'a>(sample: impl IntoIterator<Item = &'a Document>) -> Stemming {
    let sample: Vec<&Document> = sample.into_iter().collect();
    let share = MAX_SAMPLE_BYTES / sample.len().max(1);
    let mut text = String::new();
    for document in sample {
        let body = &document.body;
        let end = (0..=share.min(body.len()))
            .rev()
            .find(|&i| body.is_char_boundary(i))
            .unwrap_or(0);
        text.push_str(&body[..end]);
        text.push('\n');
    }
    match whatlang::detect(&text) {
        Some(info) if info.is_reliable() => {
            stemmer_of(info.lang()).map_or(Stemming::NoStemmer, Stemming::In)
        }
        _ => Stemming::Unknown,
    }
}

impl Stemming {
    /// The built-in stop-word list in the language of the stemmer, if there is one: the
    /// Snowball project has lists for 13 of its stemmers' languages (not Arabic, Greek,
    /// Romanian, Tamil, Turkish). `None` also when no language was detected or it has no
    /// stemmer.
    pub fn stop_words(self) -> Option<&'static str> {
        match self {
            Stemming::In(language) if stopwords::is_builtin(language.name()) => {
                Some(language.name())
            }
            _ => None,
        }
    }

    /// The built-in list of elided articles ([`crate::text::pipeline::elisions`]) in the
    /// language of the stemmer, if there is one (French, Italian).
    pub fn elisions(self) -> Option<&'static str> {
        match self {
            Stemming::In(language) => {
                crate::text::pipeline::elisions::builtin_name(language.name())
            }
            _ => None,
        }
    }
}

/// The Snowball stemmer of a language, if rust-stemmers has one.
fn stemmer_of(lang: Lang) -> Option<StemLanguage> {
    use StemLanguage::*;
    Some(match lang {
        Lang::Ara => Arabic,
        Lang::Dan => Danish,
        Lang::Nld => Dutch,
        Lang::Eng => English,
        Lang::Fin => Finnish,
        Lang::Fra => French,
        Lang::Deu => German,
        Lang::Ell => Greek,
        Lang::Hun => Hungarian,
        Lang::Ita => Italian,
        Lang::Nob => Norwegian,
        Lang::Por => Portuguese,
        Lang::Ron => Romanian,
        Lang::Rus => Russian,
        Lang::Spa => Spanish,
        Lang::Swe => Swedish,
        Lang::Tam => Tamil,
        Lang::Tur => Turkish,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn documents(texts: &[&str]) -> Vec<Document> {
        texts
            .iter()
            .map(|t| Document {
                kind: crate::text::input::DocumentKind::Text { encoding: "UTF-8" },
                body: t.to_string(),
                headers: None,
                skipped_deep_parts: 0,
            })
            .collect()
    }

    #[test]
    fn the_sample_names_its_stemmer() {
        let cases: [(&[&str], Stemming); 6] = [
            (
                &[
                    "The committee will meet again next week to discuss the proposal.",
                    "Nobody expected the results to be published so soon.",
                ],
                Stemming::In(StemLanguage::English),
            ),
            (
                &[
                    "Лучше поздно, чем никогда, говорили старики в деревне, когда молодые люди \
                     возвращались домой после долгой работы в городе.",
                    "Без труда не вытащишь и рыбку из пруда, а кто рано встаёт, тому бог подаёт.",
                    "Вчера вечером мы долго разговаривали о том, что происходит в нашей стране.",
                ],
                Stemming::In(StemLanguage::Russian),
            ),
            (
                &[
                    "Wer nicht wagt, der nicht gewinnt, sagte meine Großmutter immer.",
                    "Morgenstund hat Gold im Mund, aber Blei im Hintern.",
                ],
                Stemming::In(StemLanguage::German),
            ),
            (
                &[
                    "这家酒店的服务非常好，房间也很干净，下次还会再来。",
                    "书的质量很差，送货也太慢了，不推荐购买。",
                ],
                Stemming::NoStemmer,
            ),
            // Too little text to tell Russian from Ukrainian or Bulgarian: no language.
            (
                &["Без труда не вытащишь и рыбку из пруда."],
                Stemming::Unknown,
            ),
            (&["", "42"], Stemming::Unknown),
        ];
        for (texts, want) in cases {
            assert_eq!(stemming(&documents(texts)), want, "{texts:?}");
        }
    }

    #[test]
    fn a_language_with_a_snowball_list_names_it() {
        use StemLanguage::*;
        for (language, list) in [
            (English, Some("english")),
            (German, Some("german")),
            (Russian, Some("russian")),
            (Portuguese, Some("portuguese")),
            (Greek, None),
            (Turkish, None),
        ] {
            assert_eq!(Stemming::In(language).stop_words(), list, "{language:?}");
            if let Some(name) = list {
                assert!(!stopwords::load(name).unwrap().is_empty());
            }
        }
        assert_eq!(Stemming::NoStemmer.stop_words(), None);
        assert_eq!(Stemming::Unknown.stop_words(), None);
    }

    #[test]
    fn french_and_italian_name_their_elided_articles() {
        use StemLanguage::*;
        for (language, list) in [
            (French, Some("french")),
            (Italian, Some("italian")),
            (English, None),
            (Spanish, None),
        ] {
            assert_eq!(Stemming::In(language).elisions(), list, "{language:?}");
        }
        assert_eq!(Stemming::NoStemmer.elisions(), None);
        assert_eq!(Stemming::Unknown.elisions(), None);
    }

    /// Long documents in two languages, one label each: the same documents in either order
    /// give the same answer (before, the first 64 KiB, the first label's documents, decided).
    #[test]
    fn every_document_has_its_share_whatever_its_place() {
        let english = "The committee will meet again next week to discuss the proposal, and \
                       nobody expected the results to be published so soon after the vote. "
            .repeat(20);
        let german = "Der Ausschuss wird sich nächste Woche wieder treffen, um den Vorschlag zu \
                      besprechen, und niemand hat erwartet, dass die Ergebnisse so bald \
                      veröffentlicht werden. "
            .repeat(20);
        let mut texts: Vec<&str> = vec![english.as_str(); 100];
        texts.extend(vec![german.as_str(); 100]);
        let first = stemming(&documents(&texts));
        texts.reverse();
        assert_eq!(stemming(&documents(&texts)), first);
        // Three quarters German: German, wherever the English documents are.
        let mut texts: Vec<&str> = vec![english.as_str(); 50];
        texts.extend(vec![german.as_str(); 150]);
        assert_eq!(
            stemming(&documents(&texts)),
            Stemming::In(StemLanguage::German)
        );
    }

    #[test]
    fn a_long_sample_is_cut_at_a_character_boundary() {
        // 40,000 two-byte characters: each of three documents' share of 64 KiB, an odd 21,845
        // bytes, is cut inside none of them.
        let long = "ё".repeat(40_000) + " и всё такое, как говорится в народе";
        let docs = documents(&[&long, &long, &long]);
        assert_ne!(stemming(&docs), Stemming::In(StemLanguage::English));
    }
}
