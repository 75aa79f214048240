//! The text pipeline: document → tokens → filtered tokens → n-gram hashes → buckets → values.
//!
//! The pipeline is *data*: [`PipelineConfig`] is a serde value saved in every model, and
//! [`Pipeline::new`] builds the stages from it, so `classify` always runs exactly the pipeline the
//! model was trained with. Each stage kind is one small trait in its own file
//! ([`tokenizer::Tokenizer`], [`filter::TokenFilter`]), and [`config`] builds the stages from
//! their stored settings; hashing ([`hash`]) is frozen. ASCII text takes the fast path of
//! [`ascii`], which must give exactly what the general path gives; [`trace`] gives the features
//! with their texts (for `explain` and the kept vocabulary).
//!
//! **May use:** the rest of the text layer below it ([`crate::text::input`]) and the
//! foundation; the subword trainer and the vocabulary are above it.

pub mod ascii;
pub mod chargrams;
pub mod config;
pub mod elisions;
pub mod fields;
pub mod filter;
pub mod hash;
pub mod ngrams;
pub mod stem;
pub mod stopwords;
pub mod subword;
pub mod tokenizer;
pub mod trace;
pub mod weighting;

use std::borrow::Cow;

use crate::error::Result;
use crate::features::FeatureVector;
use crate::text::input::{Document, EmailHeaders};
use ascii::{AsciiChain, AsciiToken};
pub use config::{
    FieldRule, PipelineConfig, DEFAULT_MAX_DOCUMENT_BYTES, DEFAULT_MAX_MIME_DEPTH,
    DEFAULT_MAX_TOKENS, HASH_BITS_RANGE,
};
use config::{FilterConfig, TokenizerConfig};
use fields::FieldUse;
use filter::TokenFilter;
use hash::{
    bucket, first_word_mark, ngram_hash, token_hash, HashMap, NS_BODY, NS_FIELD, NS_FIELD_WORD,
    NS_FROM, NS_SUBJECT, NS_TO,
};
use ngrams::Ngrams;
use tokenizer::Tokenizer;
pub use trace::TracedFeature;

/// `word` after every filter, or `None` when one drops it.
fn filtered<'a>(filters: &mut [Box<dyn TokenFilter>], word: &'a str) -> Option<Cow<'a, str>> {
    let mut token = Cow::Borrowed(word);
    for f in filters.iter_mut() {
        token = f.filter(token)?;
    }
    Some(token)
}

/// The hash of `word` after every filter, or `None` when one drops it.
fn filtered_hash(filters: &mut [Box<dyn TokenFilter>], word: &str, namespace: u8) -> Option<u64> {
    filtered(filters, word).map(|token| token_hash(namespace, &token))
}

/// [`filtered_hash`] through `cache` for body tokens (text repeats its words, so most are one
/// lookup instead of lowercasing, stop-word lookup, stemming and hashing).
fn general_hash(
    cache: &mut HashMap<Box<str>, Option<u64>>,
    filters: &mut [Box<dyn TokenFilter>],
    word: &str,
    namespace: u8,
) -> Option<u64> {
    if namespace != NS_BODY {
        return filtered_hash(filters, word, namespace);
    }
    if let Some(&hash) = cache.get(word) {
        return hash;
    }
    let hash = filtered_hash(filters, word, namespace);
    if cache.len() >= CACHE_LIMIT {
        cache.clear();
    }
    cache.insert(word.into(), hash);
    hash
}

/// The address features of a mail's headers, in feature order: each sender's and recipient's
/// full address, then every parent domain (`bob@mail.example.com` → `mail.example.com`,
/// `example.com`).
fn address_features(headers: &EmailHeaders) -> impl Iterator<Item = (u8, &str)> {
    [(NS_FROM, &headers.from), (NS_TO, &headers.to)]
        .into_iter()
        .flat_map(|(namespace, addresses)| {
            addresses.iter().flat_map(move |address| {
                let domain = address.rsplit_once('@').map_or("", |(_, d)| d);
                let domains = std::iter::successors(Some(domain), |d| {
                    d.split_once('.').map(|(_, rest)| rest)
                })
                .take_while(|d| d.contains('.'));
                std::iter::once(address.as_str())
                    .chain(domains)
                    .map(move |f| (namespace, f))
            })
        })
}

/// How a namespace's features are written for people (`subject:offer`, `from:example.com`).
fn namespace_prefix(namespace: u8) -> &'static str {
    match namespace {
        NS_SUBJECT => "subject:",
        NS_FROM => "from:",
        NS_TO => "to:",
        _ => "",
    }
}

/// A built pipeline. Not shared between threads: each thread builds its own (stemming keeps a
/// cache, and the scratch buffers are reused from document to document).
pub struct Pipeline {
    config: PipelineConfig,
    tokenizer: Box<dyn Tokenizer>,
    filters: Vec<Box<dyn TokenFilter>>,
    ngrams: Ngrams,
    tokens: Vec<u64>,
    grams: Vec<u64>,
    buckets: Vec<u32>,
    /// The weighed features before they are copied out at their exact length.
    indices: Vec<u32>,
    values: Vec<f32>,
    /// Body tokens as they came from the tokeniser → their hash after the filters, or `None`
    /// when a filter dropped them. Text repeats its words (Zipf), so most tokens are one
    /// lookup instead of lowercasing, stop-word lookup, stemming and hashing.
    cache: HashMap<Box<str>, Option<u64>>,
    /// The filters compiled for ASCII tokens, when every filter has a byte-level form (the default
    /// pipeline's do; stemming has none).
    ascii_chain: Option<AsciiChain>,
    /// Whether the last document hit the token limit.
    truncated: bool,
    /// Where the character n-grams start in `buckets` (its length when there are none).
    char_start: usize,
    /// Where the body's n-grams of two words and more are in `buckets` (after its unigrams).
    ngram_range: std::ops::Range<usize>,
    char_scratch: chargrams::CharScratch,
    /// Each view's weighed pairs before the words' and the characters' are added.
    two_views: weighting::TwoViews,
}

/// The token cache is emptied when it holds this many words (a few MB), so memory stays bounded
/// on huge corpora.
const CACHE_LIMIT: usize = 1 << 18;

impl Pipeline {
    /// Validates the configuration and builds its stages.
    pub fn new(config: &PipelineConfig) -> Result<Self> {
        config.validate()?;
        let filters: Vec<Box<dyn TokenFilter>> =
            config.filters.iter().map(FilterConfig::build).collect();
        Ok(Pipeline {
            tokenizer: config.tokenizer.build(config.symbols)?,
            ascii_chain: filters
                .iter()
                .map(|f| f.ascii_form())
                .collect::<Option<Vec<_>>>()
                .map(AsciiChain::new),
            filters,
            ngrams: Ngrams {
                max_n: config.max_ngram,
            },
            config: config.clone(),
            tokens: Vec::new(),
            grams: Vec::new(),
            buckets: Vec::new(),
            indices: Vec::new(),
            values: Vec::new(),
            cache: HashMap::default(),
            truncated: false,
            char_start: 0,
            ngram_range: 0..0,
            char_scratch: Default::default(),
            two_views: Default::default(),
        })
    }

    pub fn config(&self) -> &PipelineConfig {
        &self.config
    }

    /// The document's feature vector; `None` when it has no word at all (only the bias).
    pub fn features(&mut self, doc: &Document) -> Option<FeatureVector> {
        if self.buckets(doc).is_empty() {
            return None;
        }
        let values = self.config.values;
        let (indices, out, scratch) = (&mut self.indices, &mut self.values, &mut self.two_views);
        match (&self.config.char_ngrams, self.config.ngram_weight()) {
            (None, None) => values.weigh(&mut self.buckets, indices, out),
            (Some(chars), None) => {
                let (words, grams) = self.buckets.split_at_mut(self.char_start);
                values.weigh_two(words, grams, chars.weight(), indices, out, scratch);
            }
            (chars, Some(weight)) => {
                // The n-grams moved after the other word features (the first-word mark, the
                // headers'), so each list is one slice: [unigrams, others, n-grams, chars].
                let ngrams = self.ngram_range.len();
                self.buckets[self.ngram_range.start..self.char_start].rotate_left(ngrams);
                let (words, chars_view) = self.buckets.split_at_mut(self.char_start);
                let (words, grams) = words.split_at_mut(self.char_start - ngrams);
                match chars {
                    None => values.weigh_ngrams(words, grams, weight, indices, out, scratch),
                    Some(c) => values.weigh_three(
                        words,
                        grams,
                        weight,
                        chars_view,
                        c.weight(),
                        indices,
                        out,
                        scratch,
                    ),
                }
            }
        }
        if self.config.bias {
            self.indices.push(self.config.buckets() as u32);
            self.values.push(1.0);
        }
        // Copied out at their exact length: vectors grown by pushing keep up to twice the
        // room they use, and training holds every example until the memory budget (whose
        // estimate, feature_cache::estimated_bytes, counts what is used) sends them to disk.
        Some(FeatureVector::new(
            self.config.dimension(),
            self.indices.to_vec(),
            self.values.to_vec(),
        ))
    }

    /// The buckets of the document's n-grams and header features, in text order with repeats
    /// (tokenise + filter + hash, before counting and weighting), then those of its character
    /// n-grams, if the pipeline has them (from `char_start` on).
    pub fn buckets(&mut self, doc: &Document) -> &[u32] {
        self.grams.clear();
        self.tokens.clear();
        self.truncated = false;
        self.push_tokens(&doc.body, NS_BODY);
        self.ngrams.generate(&self.tokens, &mut self.grams);
        self.ngram_range = self.tokens.len()..self.grams.len();
        if let (true, Some(&first)) = (self.config.first_word, self.tokens.first()) {
            self.grams.push(ngram_hash(first_word_mark(), first));
        }
        if self.config.email_headers {
            if let Some(headers) = &doc.headers {
                self.push_header_features(headers);
            }
        }
        self.char_start = self.grams.len();
        if let Some(chars) = &self.config.char_ngrams {
            let grams = &mut self.grams;
            chars.for_each(&doc.body, &mut self.char_scratch, &mut |hash, _| {
                grams.push(hash)
            });
        }
        let bits = self.config.hash_bits;
        self.buckets.clear();
        self.buckets
            .extend(self.grams.iter().map(|&h| bucket(h, bits)));
        &self.buckets
    }

    /// Whether the last document had more tokens than `max_tokens` (the rest were dropped).
    pub fn truncated(&self) -> bool {
        self.truncated
    }

    /// Tokenises and filters `text`, pushing token hashes in `namespace` onto `self.tokens`.
    fn push_tokens(&mut self, text: &str, namespace: u8) {
        let limit = self.config.max_tokens;
        let (tokens, truncated) = (&mut self.tokens, &mut self.truncated);
        let (filters, cache) = (&mut self.filters, &mut self.cache);
        let mut token = AsciiToken::empty();
        match self.ascii_chain.as_ref() {
            // The fast path (the default pipeline on ASCII text): the scanner calls this
            // closure directly (no virtual call per token), each word is loaded into a reused
            // stack buffer (lowercased on the way when the filters allow), filtered there and
            // hashed from its 8-byte words: no allocation, no lookup. It gives the same hashes
            // as the general path (property-tested): on ASCII text its scanner finds exactly
            // the UAX #29 words.
            Some(chain)
                if self.config.tokenizer == TokenizerConfig::UnicodeWords && text.is_ascii() =>
            {
                let (bytes, lowercased) = (text.as_bytes(), chain.lowercase_on_load());
                let spans = if self.config.symbols {
                    ascii::ascii_spans::<true>
                } else {
                    ascii::ascii_spans::<false>
                };
                spans(bytes, &mut |start, end| {
                    if tokens.len() >= limit {
                        *truncated = true;
                        return;
                    }
                    let hash = if token.set_span(bytes, start, end, lowercased) {
                        chain
                            .apply(&mut token, lowercased)
                            .then(|| token.hash(namespace))
                    } else if end - start > chain.max_len() {
                        None // what the length limit would do
                    } else {
                        general_hash(cache, filters, &text[start..end], namespace)
                    };
                    if let Some(hash) = hash {
                        tokens.push(hash);
                    }
                });
            }
            chain => self.tokenizer.tokenize(text, &mut |word| {
                if tokens.len() >= limit {
                    *truncated = true;
                    return;
                }
                let hash = match chain {
                    // ASCII words of other text still take the stack buffer.
                    Some(chain) if token.set(word) => chain
                        .apply(&mut token, false)
                        .then(|| token.hash(namespace)),
                    _ => general_hash(cache, filters, word, namespace),
                };
                if let Some(hash) = hash {
                    tokens.push(hash);
                }
            }),
        }
    }

    /// Subject words (unigrams), and the full address plus every parent domain of each sender
    /// and recipient, each in its own namespace.
    fn push_header_features(&mut self, headers: &EmailHeaders) {
        self.tokens.clear();
        self.push_tokens(&headers.subject, NS_SUBJECT);
        self.grams.extend_from_slice(&self.tokens);
        self.grams.extend(
            address_features(headers).map(|(namespace, feature)| token_hash(namespace, feature)),
        );
        if self.config.header_fields {
            for (name, value) in &headers.fields {
                let words = match fields::field_use(self.config.field_rule, name, value) {
                    FieldUse::Skip => continue,
                    FieldUse::Presence => None,
                    FieldUse::Words(words) => Some(words),
                };
                let field = token_hash(NS_FIELD, name);
                self.grams.push(field);
                if let Some(words) = words {
                    self.tokens.clear();
                    self.push_tokens(&words, NS_FIELD_WORD);
                    self.grams
                        .extend(self.tokens.iter().map(|&word| ngram_hash(field, word)));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::text::input::parse_bytes;
    use weighting::{ValueConfig, ValueKind};

    fn features(config: &PipelineConfig, text: &[u8]) -> Option<FeatureVector> {
        Pipeline::new(config)
            .unwrap()
            .features(&parse_bytes(text, PipelineConfig::default().input_limits()).unwrap())
    }

    /// A document's features hold no spare room: training keeps every example in memory up
    /// to the memory budget, which counts 8 bytes per feature; vectors grown by pushing held
    /// up to twice that (129 words and the bias: room for 256 of each).
    #[test]
    fn feature_vectors_hold_only_their_features() {
        let config = PipelineConfig {
            max_ngram: 1,
            ..PipelineConfig::default()
        };
        let mut pipeline = Pipeline::new(&config).unwrap();
        for words in [1usize, 7, 129, 300] {
            let text: Vec<String> = (0..words).map(|i| format!("word{i}")).collect();
            let doc = parse_bytes(
                text.join(" ").as_bytes(),
                PipelineConfig::default().input_limits(),
            )
            .unwrap();
            let x = pipeline.features(&doc).unwrap();
            let nnz = x.nnz();
            assert!(nnz > words * 9 / 10, "{nnz} features for {words} words");
            let (indices, values) = x.into_raw_storage();
            assert_eq!((indices.capacity(), values.capacity()), (nnz, nnz));
        }
    }

    /// The buckets by the general path alone: UAX #29 words, each filter's `filter`, the hash.
    fn general_buckets(config: &PipelineConfig, text: &str) -> Vec<u32> {
        use unicode_segmentation::UnicodeSegmentation;
        let mut filters: Vec<Box<dyn TokenFilter>> =
            config.filters.iter().map(FilterConfig::build).collect();
        let segments: Vec<&str> = if config.symbols {
            text.split_word_bounds()
                .filter(|s| tokenizer::is_token(s))
                .collect()
        } else {
            text.unicode_words().collect()
        };
        let tokens: Vec<u64> = segments
            .into_iter()
            .filter_map(|w| filtered_hash(&mut filters, w, NS_BODY))
            .collect();
        let mut grams = Vec::new();
        Ngrams {
            max_n: config.max_ngram,
        }
        .generate(&tokens, &mut grams);
        if let (true, Some(&first)) = (config.first_word, tokens.first()) {
            grams.push(ngram_hash(first_word_mark(), first));
        }
        grams.iter().map(|&h| bucket(h, config.hash_bits)).collect()
    }

    /// Words for the fast-path property tests: upper and lower case, stop words, word-internal
    /// punctuation, and lengths around the token buffer's 16-byte load (15, 16, 17), the
    /// default limit (40, 41) and its capacity (64, 65).
    use proptest::strategy::Strategy;

    const WORDS: &[&str] = &[
        "The",
        "the",
        "THE",
        "don't",
        "Space",
        "shuttle",
        "3.14",
        "1,000",
        "e.g.",
        "a:b",
        "__",
        "x_y",
        "It's",
        "about",
        "ORBIT",
        "-",
        "...",
        "\n",
        "$5",
        "!?",
        ":-)",
        "\"quoted\"",
        "\x01",
        "fifteen_bytes_x",
        "Sixteen_bytes_xy",
        "seventeen_bytes_x",
        "forty_bytes_forty_bytes_forty_bytes_xyz",
        "Forty_one_bytes_forty_one_bytes_forty_xy",
        "sixty_four_bytes_sixty_four_bytes_sixty_four_bytes_sixty_four_b",
        "sixty_five_bytes_sixty_five_bytes_sixty_five_bytes_sixty_five_by",
    ];

    fn text_document(text: &str) -> Document {
        Document {
            kind: crate::text::input::DocumentKind::Text { encoding: "UTF-8" },
            body: text.to_string(),
            headers: None,
            skipped_deep_parts: 0,
        }
    }

    proptest::proptest! {
        /// The ASCII fast path (tokeniser and filters) gives the same buckets as the general
        /// path, for ASCII text and for text with a non-ASCII word in it.
        #[test]
        fn ascii_fast_path_equals_the_general_path(
            words in proptest::collection::vec(proptest::sample::select(WORDS), 0..40),
            non_ascii in proptest::option::of(proptest::sample::select(vec!["naïve", "ÉCOLE", "«»"])),
            symbols in proptest::bool::ANY,
        ) {
            let text = words.iter().copied().chain(non_ascii).collect::<Vec<_>>().join(" ");
            for first_word in [false, true] {
                let config = PipelineConfig { symbols, first_word, ..PipelineConfig::default() };
                let mut pipeline = Pipeline::new(&config).unwrap();
                let doc = text_document(&text);
                proptest::prop_assert_eq!(pipeline.buckets(&doc).to_vec(), general_buckets(&config, &text));
                let traced: Vec<u32> = pipeline.trace(&doc).iter().map(|f| f.bucket).collect();
                proptest::prop_assert_eq!(traced, general_buckets(&config, &text));
            }
        }

        /// The same for any choice and order of the filters that have an ASCII form: the
        /// compiled chain (limit, stop words as they came, lowercase, stop words lowercased)
        /// does what the filters do one after the other.
        #[test]
        fn ascii_chain_equals_the_filters_in_any_order(
            filters in proptest::sample::subsequence(vec![
                FilterConfig::Lowercase,
                FilterConfig::MaxLength { chars: 5 },
                FilterConfig::MaxLength { chars: 40 },
                FilterConfig::StopWords {
                    name: "english".into(),
                    words: stopwords::load("english").unwrap(),
                },
                FilterConfig::StopWords {
                    name: "mixed case".into(),
                    words: vec!["THE".into(), "Space".into(), "orbit".into()],
                },
                FilterConfig::Lowercase,
            ], 0..=6).prop_shuffle(),
            words in proptest::collection::vec(proptest::sample::select(WORDS), 0..40),
        ) {
            let text = words.join(" ");
            let config = PipelineConfig { filters, ..PipelineConfig::default() };
            let mut pipeline = Pipeline::new(&config).unwrap();
            proptest::prop_assert_eq!(
                pipeline.buckets(&text_document(&text)).to_vec(),
                general_buckets(&config, &text)
            );
        }
    }

    #[test]
    fn trace_gives_the_same_buckets_with_their_text() {
        let mail = b"From: Bob <bob@mail.example.com>\nTo: x@y.org\nSubject: Cheap Offer\n\
            List-Id: Alpha Users <alpha.lists.example.org>\n\n\
            The Shuttle's orbit, naive and na\xc3\xafve; the orbit again.\n";
        let doc = parse_bytes(mail, PipelineConfig::default().input_limits()).unwrap();
        let mut stemmed = PipelineConfig {
            max_ngram: 3,
            ..PipelineConfig::default()
        };
        stemmed.filters.push(FilterConfig::Stem {
            language: stem::StemLanguage::English,
        });
        let chars = PipelineConfig {
            char_ngrams: Some(chargrams::CharNgrams::default()),
            ..PipelineConfig::default()
        };
        for config in [PipelineConfig::default(), stemmed, chars.clone()] {
            let mut pipeline = Pipeline::new(&config).unwrap();
            let buckets = pipeline.buckets(&doc).to_vec();
            let traced = pipeline.trace(&doc);
            let traced_buckets: Vec<u32> = traced.iter().map(|f| f.bucket).collect();
            assert_eq!(traced_buckets, buckets);
            let texts: Vec<&str> = traced.iter().map(|f| f.text.as_str()).collect();
            for want in [
                "subject:cheap",
                "from:bob@mail.example.com",
                "from:example.com",
                "to:y.org",
                "header:list-id",
                "list-id:alpha.lists.example.org",
            ] {
                assert!(texts.contains(&want), "{want} not in {texts:?}");
            }
            let orbit = bucket(token_hash(NS_BODY, "orbit"), config.hash_bits);
            assert!(traced.contains(&TracedFeature {
                bucket: orbit,
                text: "orbit".into()
            }));
        }
        let mut pipeline = Pipeline::new(&PipelineConfig::default()).unwrap();
        let texts: Vec<String> = pipeline.trace(&doc).into_iter().map(|f| f.text).collect();
        assert!(texts.contains(&"shuttle's orbit".to_string()), "{texts:?}");
        assert!(!texts.iter().any(|t| t.starts_with("first:")), "{texts:?}");
        // The first word: one feature more, after the n-grams, of the text's first token (a
        // mail's text begins with its Subject), the bigram of a mark no token hashes to and it.
        let first = PipelineConfig {
            first_word: true,
            ..PipelineConfig::default()
        };
        let mut pipeline = Pipeline::new(&first).unwrap();
        let buckets = pipeline.buckets(&doc).to_vec();
        let traced = pipeline.trace(&doc);
        assert_eq!(traced.iter().map(|f| f.bucket).collect::<Vec<_>>(), buckets);
        let marked: Vec<&TracedFeature> = traced
            .iter()
            .filter(|f| f.text.starts_with("first:"))
            .collect();
        let cheap = token_hash(NS_BODY, "cheap");
        assert_eq!(
            marked,
            [&TracedFeature {
                bucket: bucket(ngram_hash(first_word_mark(), cheap), first.hash_bits),
                text: "first:cheap".into()
            }]
        );
        let mut plain = Pipeline::new(&PipelineConfig::default()).unwrap();
        assert_eq!(buckets.len(), plain.buckets(&doc).len() + 1);
        // A document without words has no first word.
        assert!(pipeline.buckets(&text_document("")).is_empty());
        // Character n-grams come last, of every body word (stop words too), after the header's.
        let mut pipeline = Pipeline::new(&chars).unwrap();
        pipeline.buckets(&doc);
        let traced = pipeline.trace(&doc);
        let first = traced.iter().position(|f| f.text.starts_with("chars:"));
        assert_eq!(first, Some(pipeline.char_start));
        let texts: Vec<&str> = traced.iter().map(|f| f.text.as_str()).collect();
        for want in [
            "chars:<th",
            "chars:the>",
            "chars:ttle'",
            "chars:<naï",
            "chars:aïve>",
        ] {
            assert!(texts.contains(&want), "{want} not in {texts:?}");
        }
        assert!(
            !texts.contains(&"chars:<the>"),
            "the word itself is the word's feature"
        );
    }

    /// The words' view and the characters' are each scaled to unit length, the characters'
    /// weighed by 0.5, added and scaled to unit length again: "space" alone, by hand.
    #[test]
    fn character_n_grams_are_a_second_view_at_their_weight() {
        let config = PipelineConfig {
            char_ngrams: Some(chargrams::CharNgrams::default()),
            max_ngram: 1,
            bias: false,
            ..PipelineConfig::default()
        };
        let x = features(&config, b"space").unwrap();
        // <space>: 5 trigrams, 4 four-grams, 3 five-grams = 12 n-grams, each 1/sqrt(12) in its
        // view, then x 0.5; the word 1. Squared sum: 1 + 12 x 0.25 / 12 = 1.25.
        assert_eq!(x.nnz(), 13, "no two of the 13 features share a bucket here");
        let word = bucket(token_hash(NS_BODY, "space"), config.hash_bits);
        let (indices, values) = x.into_raw_storage();
        let norm = 1.25f32.sqrt();
        for (i, v) in indices.iter().zip(&values) {
            let want = if *i == word {
                1.0 / norm
            } else {
                0.5 / 12f32.sqrt() / norm
            };
            assert!((v - want).abs() < 1e-6, "bucket {i}: {v} against {want}");
        }
        let squares: f32 = values.iter().map(|v| v * v).sum();
        assert!((squares - 1.0).abs() < 1e-6);
    }

    /// "Space space SHUTTLE" (log-tf), by hand: space 1 + ln 2, shuttle 1; the bigrams
    /// "space space" and "space shuttle" 1 each, times 0.5; one scaling to unit length.
    /// Without a weight the bigrams count as words: 1 each. The first-word mark is a word,
    /// not an n-gram.
    #[test]
    fn n_grams_at_their_weight_beside_the_words() {
        let config = |weight| PipelineConfig {
            ngram_weight_per_mille: weight,
            bias: false,
            first_word: true,
            ..PipelineConfig::default()
        };
        let body = |t: &str| bucket(token_hash(NS_BODY, t), 18);
        let bigram = |a: &str, b: &str| {
            bucket(
                ngram_hash(token_hash(NS_BODY, a), token_hash(NS_BODY, b)),
                18,
            )
        };
        let first = bucket(
            ngram_hash(first_word_mark(), token_hash(NS_BODY, "space")),
            18,
        );
        let space = 1.0 + 2f32.ln();
        for (weight, w) in [(Some(500), 0.5f32), (None, 1.0)] {
            let x = features(&config(weight), b"Space space SHUTTLE").unwrap();
            let raw = [
                (body("space"), space),
                (body("shuttle"), 1.0),
                (first, 1.0),
                (bigram("space", "space"), w),
                (bigram("space", "shuttle"), w),
            ];
            let norm = raw.iter().map(|(_, v)| v * v).sum::<f32>().sqrt();
            assert_eq!(x.nnz(), 5, "no two features share a bucket here");
            for (b, v) in raw {
                let got = x.get(b as usize).copied();
                assert!(
                    got.is_some_and(|g| (g - v / norm).abs() < 1e-6),
                    "weight {w}, bucket {b}: {got:?} against {}",
                    v / norm
                );
            }
        }
        // With character n-grams too: the words' view (n-grams weighed in) is scaled to unit
        // length, then the characters' view at its weight is added, as without the n-gram
        // weight: "space" alone has no bigram, so the two pipelines agree.
        let chars = |weight| PipelineConfig {
            char_ngrams: Some(chargrams::CharNgrams::default()),
            ..config(weight)
        };
        assert_eq!(
            features(&chars(Some(500)), b"space"),
            features(&chars(None), b"space")
        );
        let two = features(&chars(Some(500)), b"space shuttle").unwrap();
        let value = |b: u32| two.get(b as usize).copied().unwrap_or(0.0);
        let word = value(body("space"));
        assert!(word > 0.0);
        for b in [body("shuttle"), first] {
            assert!(
                (value(b) - word).abs() < 1e-6,
                "{} against {word}",
                value(b)
            );
        }
        // The bigram at half a word's value, within the words' view and after the characters'.
        assert!((value(bigram("space", "shuttle")) - word / 2.0).abs() < 1e-6);
        let squares: f32 = two.data().iter().map(|v| v * v).sum();
        assert!((squares - 1.0).abs() < 1e-5);
    }

    #[test]
    fn serde_round_trip() {
        let mut config = PipelineConfig::default();
        config.filters.push(FilterConfig::Stem {
            language: stem::StemLanguage::English,
        });
        let json = serde_json::to_string(&config).unwrap();
        let back: PipelineConfig = serde_json::from_str(&json).unwrap();
        assert_eq!(back, config);
        // Models written before header fields were features read as having none.
        let old = json.replace(",\"header_fields\":true", "");
        assert_ne!(old, json);
        let back: PipelineConfig = serde_json::from_str(&old).unwrap();
        assert!(!back.header_fields);
        // Models written while every field was read whole name no rule, and go on so.
        let whole = json.replace(",\"field_rule\":\"stable\"", "");
        assert_ne!(whole, json);
        let back: PipelineConfig = serde_json::from_str(&whole).unwrap();
        assert!(back.header_fields);
        assert_eq!(back.field_rule, FieldRule::EveryFieldWhole);
        // Models written before HTML was read as text go on reading it as it is.
        let raw = json.replace(",\"html_text\":true", "");
        assert_ne!(raw, json);
        let back: PipelineConfig = serde_json::from_str(&raw).unwrap();
        assert!(!back.html_text && !back.input_limits().html_text);
        assert!(json.contains("\"type\":\"stop_words\""), "{json}");
        // Models written before subword tokenisers existed hold exactly this.
        assert!(
            json.starts_with("{\"tokenizer\":{\"type\":\"unicode_words\"},"),
            "{json}"
        );
    }

    #[test]
    fn unigrams_bigrams_and_bias() {
        let mut config = PipelineConfig {
            values: ValueConfig {
                kind: ValueKind::Tf,
                l2_normalize: false,
            },
            ..PipelineConfig::default()
        };
        config.filters.truncate(1);
        let x = features(&config, b"Space space SHUTTLE").unwrap();
        // space(2), shuttle(1), "space space"(1), "space shuttle"(1), bias(1).
        assert_eq!(x.nnz(), 5);
        assert_eq!(x.data().iter().sum::<f32>(), 6.0);
        assert_eq!(*x.indices().last().unwrap(), 1 << 18);
        let space = bucket(token_hash(NS_BODY, "space"), 18);
        assert_eq!(x.get(space as usize), Some(&2.0));
    }

    #[test]
    fn l2_normalised_document_has_unit_norm_before_bias() {
        let x = features(&PipelineConfig::default(), b"one two three two").unwrap();
        let norm: f32 = x.data()[..x.nnz() - 1].iter().map(|v| v * v).sum();
        assert!((norm - 1.0).abs() < 1e-5);
    }

    #[test]
    fn empty_and_punctuation_only_documents_have_no_features() {
        assert!(features(&PipelineConfig::default(), b"").is_none());
        assert!(features(&PipelineConfig::default(), b"  \n\t ... !!! ").is_none());
    }

    #[test]
    fn email_headers_get_their_own_namespaces() {
        let mut config = PipelineConfig {
            max_ngram: 1,
            ..PipelineConfig::default()
        };
        let mail = b"From: Bob <bob@mail.example.com>\nTo: x@y.org\nSubject: Offer\n\nhello\n";
        let x = features(&config, mail).unwrap();
        for (ns, token) in [
            (NS_SUBJECT, "offer"),
            (NS_BODY, "offer"),
            (NS_BODY, "hello"),
            (NS_FROM, "bob@mail.example.com"),
            (NS_FROM, "mail.example.com"),
            (NS_FROM, "example.com"),
            (NS_TO, "y.org"),
        ] {
            let b = bucket(token_hash(ns, token), config.hash_bits) as usize;
            assert!(x.get(b).is_some(), "missing {ns}:{token}");
        }
        config.email_headers = false;
        let plain = features(&config, mail).unwrap();
        assert!(plain.nnz() < x.nnz());
    }

    /// Every other field gives its presence and its words under its own name: the same word in
    /// List-Id and in Received are two features, and neither is the body's word.
    /// Mail of another day, delivered to another of the owner's addresses, through the same
    /// hosts: the same features. What names a message's moment (Date, the relays' queue ids,
    /// addresses and times, Message-ID's local part) or the owner's delivery and mail store
    /// (Delivered-To, Status, X-Keywords) never recurs in later mail, and many such features
    /// together outweighed the body across periods (see [`fields`]).
    #[test]
    fn a_message_s_moment_and_delivery_give_no_features() {
        let config = PipelineConfig::default();
        let mail = |date: &str, id: &str, ip: &str, to: &str, status: &str| {
            format!(
                "Received: from relay.alpha.example.org (relay.alpha.example.org [{ip}]) \
                 by mx.example.com with ESMTP id {id}; {date}\n\
                 Message-ID: <{id}.{date}@relay.alpha.example.org>\nDate: {date}\n\
                 Delivered-To: {to}\nStatus: {status}\nX-Keywords: {status}\n\
                 DKIM-Signature: v=1; b={id}\nX-Mailer: Alpha Mailer 2.1\n\
                 From: a@alpha.example.org\nSubject: weekly report\n\nthe figures\n"
            )
            .into_bytes()
        };
        let monday = mail(
            "Mon, 12 Aug 2002",
            "8A1B2C",
            "192.0.2.7",
            "me@owner.org",
            "RO",
        );
        let later = mail(
            "Tue, 3 Nov 2026",
            "Q77Z9",
            "198.51.100.9",
            "old@owner.org",
            "N",
        );
        let (x, y) = (
            features(&config, &monday).unwrap(),
            features(&config, &later).unwrap(),
        );
        assert_eq!(x, y);
        // The hosts, the ids' domain, the mailer's words and the signature's presence stay.
        let field = |name: &str| token_hash(NS_FIELD, name);
        let word = |name: &str, w: &str| ngram_hash(field(name), token_hash(NS_FIELD_WORD, w));
        for hash in [
            word("received", "relay.alpha.example.org"),
            word("message-id", "relay.alpha.example.org"),
            word("x-mailer", "alpha"),
            field("dkim-signature"),
        ] {
            assert!(x.get(bucket(hash, config.hash_bits) as usize).is_some());
        }
        for hash in [
            field("date"),
            field("delivered-to"),
            word("received", "8a1b2c"),
        ] {
            assert!(x.get(bucket(hash, config.hash_bits) as usize).is_none());
        }
        // A model written while every field was read whole reads them so still.
        let whole = PipelineConfig {
            field_rule: FieldRule::EveryFieldWhole,
            ..config
        };
        let (x, y) = (
            features(&whole, &monday).unwrap(),
            features(&whole, &later).unwrap(),
        );
        assert_ne!(x, y);
        for hash in [
            field("date"),
            field("delivered-to"),
            word("received", "8a1b2c"),
        ] {
            assert!(x.get(bucket(hash, whole.hash_bits) as usize).is_some());
        }
    }

    #[test]
    fn other_header_fields_give_their_presence_and_words() {
        let mut config = PipelineConfig {
            max_ngram: 1,
            ..PipelineConfig::default()
        };
        let mail = b"Received: from relay.alpha.example.org by mx.example.com\n\
            List-Id: <alpha.example.org>\nFrom: a@b.c\nSubject: s\n\nhello\n";
        let x = features(&config, mail).unwrap();
        let field = |name: &str| token_hash(NS_FIELD, name);
        let word = |name: &str, w: &str| ngram_hash(field(name), token_hash(NS_FIELD_WORD, w));
        let want = [
            field("received"),
            field("list-id"),
            word("received", "relay.alpha.example.org"),
            word("received", "mx.example.com"),
            word("list-id", "alpha.example.org"),
        ];
        for hash in want {
            assert!(x.get(bucket(hash, config.hash_bits) as usize).is_some());
        }
        // "from" and "by" are stop words in Received as in the body.
        assert!(x
            .get(bucket(word("received", "by"), config.hash_bits) as usize)
            .is_none());
        // 5 + the body's hello and s (the body starts with the Subject), subject:s, from:a@b.c,
        // from:b.c, the bias.
        assert_eq!(x.nnz(), 11);
        config.header_fields = false;
        let without = features(&config, mail).unwrap();
        assert_eq!(without.nnz(), 6);
        for hash in want {
            assert!(without
                .get(bucket(hash, config.hash_bits) as usize)
                .is_none());
        }
    }

    #[test]
    fn settings_are_validated_with_the_bad_value() {
        let config = PipelineConfig {
            hash_bits: 30,
            ..PipelineConfig::default()
        };
        let err = Pipeline::new(&config).err().unwrap().to_string();
        assert!(err.contains("[16, 26], but is 30"), "{err}");
        for (w, shown) in [(0, "but is 0"), (10_001, "but is 10.001")] {
            let config = PipelineConfig {
                ngram_weight_per_mille: Some(w),
                ..PipelineConfig::default()
            };
            let err = Pipeline::new(&config).err().unwrap().to_string();
            assert!(
                err.contains("n-grams must be in (0, 10], ") && err.contains(shown),
                "{err}"
            );
        }
    }
}
