//! How long a corpus's documents are, in words: `train` gives short texts (questions,
//! sentences, messages, tweets) and small corpora character n-grams beside their words
//! ([`crate::text::pipeline::chargrams`]), keeps every word of short texts (no stop-word list,
//! [`TextLength::keeps_every_word`]), not for mail, and decides from a sample.
//!
//! Not mail: mail is routed by its header fields as much as by its words (List-Id, sender,
//! Subject), and the body's many character n-grams take weight from them. On SpamAssassin's five
//! folders they cost 1.7 points (0.4 on 125 of its messages), and a test of folders that only a
//! List-Id tells apart (`folders_told_apart_by_a_header_field_alone_are_learned`) no longer
//! reached its 95% with them; ham/spam gained 1.2 points on 120 messages, but mail filters are
//! what cwtext is run in delivery with, where a message's features also cost time.

use serde::{Deserialize, Serialize};
use unicode_segmentation::UnicodeSegmentation;

use crate::text::input::Document;
use crate::text::pipeline::tokenizer::{Tokenizer, UnicodeWords};

/// A corpus is of short texts when its median document has at most this many words. On the
/// comparison's 15 corpora the medians are 9 to 22 words for questions, sentences, reviews,
/// messages, tweets and fortunes, where character n-grams gained, and 53 or more for package
/// descriptions, news wire, newsgroup posts, man pages and mail, where they cost time for little
/// or nothing (`benches/results/char-ngrams-2026-11-27.md`).
pub const SHORT_TEXT_WORDS: usize = 40;

/// A corpus is small when it holds at most this many words, estimated as the median document's
/// words times the documents. On small corpora cut from the comparison's (100 to 1,200
/// documents), character n-grams gained on long texts too (20 Newsgroups with 10, 25 and 60
/// posts a label +3.7, +1.9 and +0.4 points, Reuters R8 with 20 +0.3), and there they cost
/// well under a second.
pub const SMALL_CORPUS_WORDS: usize = 250_000;

/// Corpora of at most this many words (estimated, [`TextLength::estimated_words`]) try lighter
/// n-grams ([`TextLength::tries_lighter_ngrams`]): one more featurising and one more training
/// on the four fifths, under a second at this size. Whole movie reviews (about 740,000 words)
/// are below; 20 Newsgroups (about 1.9 million), where plain `train` must stay within twice
/// the time of `train --no-calibrate`, is above (and its held-out fifth keeps the bigrams at
/// full weight anyway).
pub const LIGHTER_NGRAMS_MAX_WORDS: usize = 1_500_000;

/// Documents of a median of at least this many words try lighter n-grams
/// ([`TextLength::tries_lighter_ngrams`]): whole reviews (movie reviews: 607), posts (20
/// Newsgroups: 168); not paragraphs (Brown: 50), news briefs (Reuters: 61 to 72) or
/// descriptions (Debian: 51).
pub const LIGHTER_NGRAMS_MIN_WORDS: usize = 100;

/// How many documents the median is taken over, spread evenly over the corpus's file list.
pub const SAMPLE_DOCUMENTS: usize = 200;

/// The longest n-gram `train` gives text written without spaces between its words
/// ([`TextLength::is_unspaced`]). UAX #29 has no dictionary: it makes each Han character (and
/// each hiragana, and each letter of Thai, Lao, Khmer and Myanmar) a word of its own, and most
/// Chinese words are two characters long, so a bigram of such "words" is about one word and a
/// trigram about what a bigram is to spaced text. On Chinese shop and hotel reviews (17,363,
/// `zh_reviews`) trigrams gained on 5 of 5 random splits, +1.0 to +1.5 points (0.8410 → 0.8538
/// on the mean; words alone 0.7956); a linear SVM of character 1- to 3-grams, what a user who
/// knows the script would run, gave 0.8546 there (`benches/results/unspaced-2026-12-07.md`).
pub const UNSPACED_NGRAMS: usize = 3;

/// The median length of a sample of documents, as `train` stores it in the model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct TextLength {
    /// Documents sampled (fewer than [`SAMPLE_DOCUMENTS`] in a small corpus).
    pub sampled: usize,
    /// Their median number of words (UAX #29 words of the body; a mail's Subject is in it).
    pub median_words: usize,
    /// The documents of the corpus (the sample's population).
    pub documents: usize,
    /// How many of the sampled documents are mail (a message with a header).
    #[serde(default)]
    pub mail: usize,
    /// How many of the sampled documents are written without spaces between their words: most
    /// of their UAX #29 words are a single character ([`TextLength::is_unspaced`]). Not written
    /// when 0, so that a model of spaced text has the bytes it had before the count.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub unspaced: usize,
}

impl TextLength {
    /// The median of the sampled documents' word counts (the lower middle of an even count),
    /// of a corpus of `documents`; `None` without documents.
    pub fn of<'a>(
        sample: impl IntoIterator<Item = &'a Document>,
        documents: usize,
    ) -> Option<Self> {
        let (mut mail, mut unspaced) = (0, 0);
        let mut words: Vec<usize> = sample
            .into_iter()
            .inspect(|d| mail += usize::from(d.headers.is_some()))
            .map(|d| {
                let (words, single) = word_count(d);
                unspaced += usize::from(single * 2 > words);
                words
            })
            .collect();
        if words.is_empty() {
            return None;
        }
        words.sort_unstable();
        Some(TextLength {
            sampled: words.len(),
            median_words: words[(words.len() - 1) / 2],
            documents: documents.max(words.len()),
            mail,
            unspaced,
        })
    }

    /// Whether most of the sample is written without spaces between its words (Chinese,
    /// Japanese, Thai): most of a document's words are a single character, as UAX #29 makes each
    /// Han character a word. Spaced text has few such words (*a*, *I*, digits), and no corpus of
    /// the comparison's but `zh_reviews` has a sampled document of them mostly. `train` then
    /// takes n-grams up to [`UNSPACED_NGRAMS`].
    pub fn is_unspaced(&self) -> bool {
        self.unspaced * 2 > self.sampled
    }

    /// Why n-grams up to [`UNSPACED_NGRAMS`], for people.
    pub fn unspaced_reason(&self) -> String {
        format!(
            "text written without spaces between words ({} of {} sampled documents have mostly words of one character, as UAX #29 makes each Han character a word), so a trigram of characters is about what a bigram is to spaced words",
            self.unspaced, self.sampled
        )
    }

    /// Whether these are short texts ([`SHORT_TEXT_WORDS`]).
    pub fn is_short(&self) -> bool {
        self.median_words <= SHORT_TEXT_WORDS
    }

    /// The corpus's words, estimated: the median times the documents.
    pub fn estimated_words(&self) -> usize {
        self.median_words.saturating_mul(self.documents)
    }

    /// Whether the corpus is small ([`SMALL_CORPUS_WORDS`]).
    pub fn is_small(&self) -> bool {
        self.estimated_words() <= SMALL_CORPUS_WORDS
    }

    /// Whether most of the sample is mail.
    pub fn is_mail(&self) -> bool {
        self.mail * 2 > self.sampled
    }

    /// Whether `train` gives the corpus character n-grams: short texts or a small corpus, and
    /// not mail.
    pub fn wants_char_ngrams(&self) -> bool {
        !self.is_mail() && (self.is_short() || self.is_small())
    }

    /// Whether `train` tries the n-grams at a lighter weight
    /// ([`crate::jobs::train::LIGHTER_NGRAMS`]): long documents (a median of at least
    /// [`LIGHTER_NGRAMS_MIN_WORDS`]), of a corpus of at most [`LIGHTER_NGRAMS_MAX_WORDS`], not
    /// mail. What lighter bigrams serve is a document with hundreds of bigrams, most of them
    /// seen in no other document. Paragraphs and sentences have few: over five random splits
    /// Brown paragraphs (a median of 50 words) gained 1.8 points on paragraphs of texts seen in
    /// training but lost 0.9 on texts not seen, where the held-out fifth (which shares texts
    /// with training) still took them, and Reuters, Debian descriptions and book reviews (51
    /// to 74 words) moved by less than 0.1; over two splits of eight short-text corpora the
    /// choice moved accuracy by −0.5 to +0.35. The bound on words keeps the extra training off
    /// large corpora, where it would cost most; mail chooses its header fields already.
    pub fn tries_lighter_ngrams(&self) -> bool {
        !self.is_mail()
            && self.median_words >= LIGHTER_NGRAMS_MIN_WORDS
            && self.estimated_words() <= LIGHTER_NGRAMS_MAX_WORDS
    }

    /// Whether `train` keeps every word of these documents instead of choosing between a
    /// stop-word list and none on the held-out fifth: short texts, not mail (as for the
    /// character n-grams). In a sentence, question or message the list's words are much of what
    /// there is, and often what decides the label (*what*, *who*, *how*, *not*, *no*); where the
    /// list helped short texts it helped little. Measured over 12 short-text corpora × 5 random
    /// splits (`benches/results/short-texts-2026-11-27.md`): the held-out fifth took
    /// the list on 2 of 5 splits of amazon review sentences and lost 2.1 and 2.7 points there;
    /// keeping every word gained +0.16 points on average, from −0.46 (tweets) to +0.95 (amazon).
    pub fn keeps_every_word(&self) -> bool {
        !self.is_mail() && self.is_short()
    }

    /// For people: "the median of 200 documents has 17 words; about 95,000 words in 5,600
    /// documents".
    pub fn describe(&self) -> String {
        format!(
            "the median of {} sampled document{} has {} word{}; about {} words in {} documents",
            self.sampled,
            if self.sampled == 1 { "" } else { "s" },
            self.median_words,
            if self.median_words == 1 { "" } else { "s" },
            thousands(self.estimated_words()),
            thousands(self.documents)
        )
    }

    /// Why character n-grams are or are not given, for people.
    pub fn reason(&self) -> String {
        if self.is_mail() {
            return "mail, which its header fields route as much as its words".to_string();
        }
        match (self.is_short(), self.is_small()) {
            (true, _) => format!("short texts (a median of at most {SHORT_TEXT_WORDS} words)"),
            (false, true) => format!(
                "a small corpus (at most {} words)",
                thousands(SMALL_CORPUS_WORDS)
            ),
            (false, false) => format!(
                "they serve short texts (a median of at most {SHORT_TEXT_WORDS} words) and small corpora (at most {} words)",
                thousands(SMALL_CORPUS_WORDS)
            ),
        }
    }
}

/// The indices of at most `n` of `len` items, spread evenly (all of them when `len` ≤ `n`).
pub fn spread(len: usize, n: usize) -> impl Iterator<Item = usize> {
    let take = len.min(n);
    (0..take).map(move |i| i * len / take)
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// 1234567 → "1,234,567".
pub fn thousands(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A document's words, and how many of them are a single character outside ASCII (so that *a*,
/// *I*, digits and a list of letters, "a b c", do not count).
fn word_count(doc: &Document) -> (usize, usize) {
    let (mut n, mut single) = (0, 0);
    UnicodeWords { symbols: false }.tokenize(&doc.body, &mut |w| {
        n += 1;
        // One grapheme: a Thai consonant with its vowel sign is one letter of two chars.
        let mut letters = w.graphemes(true);
        single +=
            usize::from(!w.is_ascii() && letters.next().is_some() && letters.next().is_none());
    });
    (n, single)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::text::input::DocumentKind;

    fn doc(body: &str) -> Document {
        Document {
            kind: DocumentKind::Text { encoding: "UTF-8" },
            body: body.into(),
            headers: None,
            skipped_deep_parts: 0,
        }
    }

    #[test]
    fn the_median_is_the_lower_middle_and_counts_words_not_symbols() {
        let docs = [
            doc("What is the capital of France?"), // 6
            doc("Free entry!!! Text WIN now"),     // 5: "!!!" is no word
            doc("a b c d e f g h i j"),            // 10
            doc("東京"),                           // 2: each ideograph is a word
        ];
        let t = TextLength::of(&docs, 5_000).unwrap();
        assert_eq!(
            t,
            TextLength {
                sampled: 4,
                median_words: 5,
                documents: 5_000,
                mail: 0,
                unspaced: 1, // 東京: two words of one character
            }
        );
        assert!(t.is_short() && t.wants_char_ngrams() && t.keeps_every_word());
        assert_eq!(
            t.describe(),
            "the median of 4 sampled documents has 5 words; about 25,000 words in 5,000 documents"
        );
        assert_eq!(TextLength::of(&docs[..0], 10), None);
        let long = doc(&"word ".repeat(SHORT_TEXT_WORDS + 1));
        assert!(!TextLength::of([&long], 1).unwrap().is_short());
        let edge = doc(&"word ".repeat(SHORT_TEXT_WORDS));
        assert!(TextLength::of([&edge], 1).unwrap().is_short());
    }

    #[test]
    fn long_texts_get_character_n_grams_only_in_a_small_corpus() {
        let long = doc(&"word ".repeat(100));
        // 100 words × 2,500 documents = 250,000: small, at the bound.
        let small = TextLength::of([&long], 2_500).unwrap();
        assert!(!small.is_short() && small.is_small() && small.wants_char_ngrams());
        assert!(
            small.reason().starts_with("a small corpus"),
            "{}",
            small.reason()
        );
        // Long texts choose their stop words, small corpus or not.
        assert!(!small.keeps_every_word());
        let large = TextLength::of([&long], 2_501).unwrap();
        assert!(!large.wants_char_ngrams() && !large.keeps_every_word());
        assert!(large.reason().starts_with("they serve short texts"));
        // The documents are at least the sample.
        assert_eq!(TextLength::of([&long, &long], 0).unwrap().documents, 2);
        assert_eq!(thousands(1_234_567), "1,234,567");
        assert_eq!(thousands(999), "999");
    }

    #[test]
    fn mail_gets_no_character_n_grams_and_chooses_its_stop_words_however_short() {
        let limits = crate::text::pipeline::PipelineConfig::default().input_limits();
        let mail = crate::text::input::parse_bytes(
            b"From: ann@example.org\nList-Id: <alpha.lists.example.org>\nSubject: lunch\n\nNoon?\n",
            limits,
        )
        .unwrap();
        let text = doc("Noon?");
        let mostly_mail = TextLength::of([&mail, &mail, &text], 3).unwrap();
        assert_eq!(mostly_mail.mail, 2);
        assert!(mostly_mail.is_short() && mostly_mail.is_mail());
        assert!(!mostly_mail.wants_char_ngrams());
        // Nor does short mail skip the choice of stop words.
        assert!(!mostly_mail.keeps_every_word());
        assert!(
            mostly_mail.reason().starts_with("mail"),
            "{}",
            mostly_mail.reason()
        );
        // Half mail is not mostly mail.
        assert!(TextLength::of([&mail, &text], 2)
            .unwrap()
            .wants_char_ngrams());
    }

    #[test]
    fn text_without_spaces_is_told_from_spaced_text_by_its_one_character_words() {
        // UAX #29 makes each Han character, each hiragana and each Thai letter a word.
        let zh = doc("质量还不错，内容只适合边上厕所便消遣了");
        let ja = doc("東京に行きましたが、コンピュータを買いませんでした");
        let th = doc("สวัสดีครับ ยินดีต้อนรับ");
        assert_eq!(word_count(&zh), (18, 18));
        // コンピュータ, in katakana, is one word of six characters.
        assert_eq!(word_count(&ja), (19, 18));
        // 22 characters, 15 letters: a vowel sign or tone mark joins its consonant.
        assert_eq!(word_count(&th), (15, 15));
        // Spaced text: one-letter words in ASCII (a, I, 3) do not count, nor a list of letters;
        // nor is Korean, which is written with spaces, nor Greek with its article ό.
        let en = doc("I gave it 3 stars: a fine film, if a long one");
        let letters = doc("a b c d e f g h i j");
        let ko = doc("서울에 갔지만 컴퓨터를 사지 않았습니다");
        let el = doc("ο καιρός είναι ωραίος σήμερα");
        assert_eq!(word_count(&en), (12, 0));
        assert_eq!(word_count(&letters), (10, 0));
        assert_eq!(word_count(&el), (5, 1));
        assert_eq!(word_count(&ko), (5, 0));
        let t = TextLength::of([&zh, &ja, &en], 3).unwrap();
        assert_eq!(t.unspaced, 2);
        assert!(t.is_unspaced());
        assert!(t
            .unspaced_reason()
            .starts_with("text written without spaces between words (2 of 3 sampled documents"));
        // Half is not most.
        assert!(!TextLength::of([&zh, &en], 2).unwrap().is_unspaced());
        assert!(!TextLength::of([&en, &ko, &el, &letters, &th], 5)
            .unwrap()
            .is_unspaced());
        // A model saved before the count reads as spaced.
        let old: TextLength =
            serde_json::from_str(r#"{"sampled":200,"median_words":43,"documents":13888,"mail":0}"#)
                .unwrap();
        assert!(!old.is_unspaced());
    }

    #[test]
    fn the_sample_is_spread_over_the_list() {
        assert_eq!(spread(3, 200).collect::<Vec<_>>(), [0, 1, 2]);
        assert_eq!(spread(10, 4).collect::<Vec<_>>(), [0, 2, 5, 7]);
        assert_eq!(spread(0, 4).count(), 0);
        let big: Vec<usize> = spread(1_000_000, SAMPLE_DOCUMENTS).collect();
        assert_eq!(big.len(), SAMPLE_DOCUMENTS);
        assert_eq!((big[0], big[1], big[199]), (0, 5_000, 995_000));
    }
}
