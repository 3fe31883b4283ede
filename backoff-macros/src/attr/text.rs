//! The bridge to the schedule language's crate (`backoff-schedule`, which
//! `Policy::parse` reads text with): an argument's tokens written out as
//! text, each token's byte range kept with its span, so that the crate's
//! values and messages serve the attribute, and an error's byte range
//! becomes the span of the tokens it covers.

use proc_macro2::{Delimiter, Span, TokenStream, TokenTree};
use quote::ToTokens;

use super::syntax::span_range;

/// Tokens as text, and the span of each token's bytes; and the top-level
/// token trees, each with its first byte, to hand back the tokens of a
/// stretch of the text.
#[derive(Default)]
pub(super) struct Text {
    pub(super) text: String,
    spans: Vec<(usize, usize, Span)>,
    top: Vec<(usize, TokenTree)>,
}

impl Text {
    /// `tokens` written out, one space between tokens.
    pub(super) fn of(tokens: &impl ToTokens) -> Text {
        let mut text = Text::default();
        for tt in tokens.to_token_stream() {
            let first = text.spans.len();
            text.write(TokenStream::from(tt.clone()));
            let start = text.spans.get(first).map_or(text.text.len(), |s| s.0);
            text.top.push((start, tt));
        }
        text
    }

    /// The top-level trees from the first at or after byte `at`: their
    /// index and tokens.
    pub(super) fn trees_from(&self, at: usize) -> (usize, TokenStream) {
        let first = self.top.partition_point(|(start, _)| *start < at);
        let trees = self.top[first..].iter().map(|(_, tt)| tt.clone());
        (first, trees.collect())
    }

    /// The first byte of the top-level tree `index`, or the text's end.
    pub(super) fn offset(&self, index: usize) -> usize {
        self.top
            .get(index)
            .map_or(self.text.len(), |(start, _)| *start)
    }

    /// The top-level trees that start within `span`.
    pub(super) fn tokens(&self, span: backoff_schedule::Span) -> TokenStream {
        let within = |start: &usize| (span.start..span.end.max(span.start + 1)).contains(start);
        let trees = self.top.iter().filter(|(start, _)| within(start));
        trees.map(|(_, tt)| tt.clone()).collect()
    }

    fn push(&mut self, s: &str, span: Span) {
        if !self.text.is_empty() {
            self.text.push(' ');
        }
        let start = self.text.len();
        self.text.push_str(s);
        self.spans.push((start, self.text.len(), span));
    }

    fn write(&mut self, tokens: TokenStream) {
        for tt in tokens {
            match tt {
                TokenTree::Group(g) => {
                    let (open, close) = match g.delimiter() {
                        Delimiter::Parenthesis => ("(", ")"),
                        Delimiter::Bracket => ("[", "]"),
                        Delimiter::Brace => ("{", "}"),
                        // (A `macro_rules!` fragment: its tokens.)
                        Delimiter::None => {
                            self.write(g.stream());
                            continue;
                        }
                    };
                    self.push(open, g.span_open());
                    self.write(g.stream());
                    self.push(close, g.span_close());
                }
                TokenTree::Ident(i) => self.push(&i.to_string(), i.span()),
                TokenTree::Punct(p) => self.push(&p.as_char().to_string(), p.span()),
                TokenTree::Literal(l) => self.push(&l.to_string(), l.span()),
            }
        }
    }

    /// The error of the schedule crate, on the tokens its bytes cover.
    pub(super) fn error(&self, e: &backoff_schedule::Error) -> syn::Error {
        let (start, end) = (e.span().start, e.span().end.max(e.span().start + 1));
        let covered: Vec<Span> = self
            .spans
            .iter()
            .filter(|(s, e, _)| *s < end && *e > start)
            .map(|(_, _, span)| *span)
            .collect();
        match covered.as_slice() {
            [] => syn::Error::new(Span::call_site(), e.message()),
            [one] => syn::Error::new(*one, e.message()),
            [first, .., last] => span_range(*first, *last, e.message()),
        }
    }

    /// A value of the schedule language's crate, on its tokens.
    pub(super) fn arg<T>(&self, s: backoff_schedule::Spanned<T>) -> super::Arg<T> {
        super::Arg {
            key: self.span(s.key),
            span: self.span(s.span),
            value: s.value,
        }
    }

    /// The span of the tokens of a byte range.
    pub(super) fn span(&self, span: backoff_schedule::Span) -> Span {
        self.spans
            .iter()
            .find(|(s, e, _)| *s < span.end.max(span.start + 1) && *e > span.start)
            .map_or_else(Span::call_site, |(_, _, span)| *span)
    }
}
