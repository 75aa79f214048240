//! Tracing: a document's features with the text each came from, for `explain` and the kept
//! vocabulary. It takes the general path on purpose (a string per feature), and must give the
//! buckets the fast path gives (a test in [`super`] compares them).

use super::fields::{field_use, FieldUse};
use super::hash::{
    bucket, first_word_mark, ngram_hash, token_hash, NS_BODY, NS_FIELD, NS_FIELD_WORD, NS_SUBJECT,
};
use super::{address_features, filtered, namespace_prefix, Pipeline};
use crate::text::input::Document;

/// One feature of a document and the text it came from (a filtered token, the words of an
/// n-gram joined by spaces, or a header feature with its prefix).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TracedFeature {
    pub bucket: u32,
    pub text: String,
}

impl Pipeline {
    /// The document's features with the text each came from, in the order of
    /// [`Pipeline::buckets`] (same buckets, a test checks): for explanations and vocabularies,
    /// so it takes the general path and allocates a string per feature.
    pub fn trace(&mut self, doc: &Document) -> Vec<TracedFeature> {
        let bits = self.config.hash_bits;
        let mut out = Vec::new();
        let mut push = |hash: u64, text: String| {
            out.push(TracedFeature {
                bucket: bucket(hash, bits),
                text,
            })
        };
        let body = self.traced_tokens(&doc.body, NS_BODY);
        body.iter().for_each(|(h, t)| push(*h, t.clone()));
        for n in 2..=self.config.max_ngram {
            for w in body.windows(n) {
                let hash = w[1..].iter().fold(w[0].0, |h, t| ngram_hash(h, t.0));
                let words: Vec<&str> = w.iter().map(|(_, t)| t.as_str()).collect();
                push(hash, words.join(" "));
            }
        }
        if let (true, Some((hash, word))) = (self.config.first_word, body.first()) {
            push(
                ngram_hash(first_word_mark(), *hash),
                format!("first:{word}"),
            );
        }
        if let (true, Some(headers)) = (self.config.email_headers, &doc.headers) {
            for (hash, token) in self.traced_tokens(&headers.subject, NS_SUBJECT) {
                push(hash, format!("{}{token}", namespace_prefix(NS_SUBJECT)));
            }
            for (namespace, feature) in address_features(headers) {
                push(
                    token_hash(namespace, feature),
                    format!("{}{feature}", namespace_prefix(namespace)),
                );
            }
            if self.config.header_fields {
                for (name, value) in &headers.fields {
                    let words = match field_use(self.config.field_rule, name, value) {
                        FieldUse::Skip => continue,
                        FieldUse::Presence => None,
                        FieldUse::Words(words) => Some(words),
                    };
                    let field = token_hash(NS_FIELD, name);
                    push(field, format!("header:{name}"));
                    for (hash, token) in
                        words.map_or(Vec::new(), |w| self.traced_tokens(&w, NS_FIELD_WORD))
                    {
                        push(ngram_hash(field, hash), format!("{name}:{token}"));
                    }
                }
            }
        }
        if let Some(chars) = self.config.char_ngrams {
            chars.for_each(&doc.body, &mut self.char_scratch, &mut |hash, gram| {
                push(hash, format!("chars:{gram}"))
            });
        }
        out
    }

    /// The filtered tokens of `text` with their hashes, within the token limit, by the general
    /// path.
    fn traced_tokens(&mut self, text: &str, namespace: u8) -> Vec<(u64, String)> {
        let (limit, filters) = (self.config.max_tokens, &mut self.filters);
        let mut out = Vec::new();
        self.tokenizer.tokenize(text, &mut |word| {
            if out.len() < limit {
                if let Some(token) = filtered(filters, word) {
                    out.push((token_hash(namespace, &token), token.into_owned()));
                }
            }
        });
        out
    }
}
