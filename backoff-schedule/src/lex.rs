//! Text to token trees, as rustc splits an attribute's arguments: names,
//! string and number literals, punctuation, and groups in parentheses,
//! brackets or braces, each with its byte range.

use crate::{Error, Span};

/// The deepest nesting of groups a text may have: deeper is an error, so
/// hostile text cannot exhaust the stack of the recursive parser.
pub const MAX_DEPTH: usize = 64;

/// One token tree.
#[derive(Clone, Debug)]
pub(crate) struct Tt {
    pub(crate) tok: Tok,
    /// For a group, from its opening to its closing delimiter.
    pub(crate) span: Span,
}

#[derive(Clone, Debug)]
pub(crate) enum Tok {
    /// A name (`r#` removed).
    Ident(String),
    /// A string literal's value.
    Str(String),
    /// An integer literal's digits in base 10 (no suffix, no `_`).
    Int(String),
    /// A float literal's digits (no suffix, no `_`).
    Float(String),
    Punct(char),
    /// A character literal (`'a'`, `'\''`), read for its extent only.
    Char,
    /// The opening delimiter and the trees inside.
    Group(char, Vec<Tt>),
}

impl Tt {
    pub(crate) fn ident(&self) -> Option<&str> {
        match &self.tok {
            Tok::Ident(name) => Some(name),
            _ => None,
        }
    }

    pub(crate) fn is_punct(&self, c: char) -> bool {
        matches!(self.tok, Tok::Punct(p) if p == c)
    }

    pub(crate) fn is_lit(&self) -> bool {
        matches!(self.tok, Tok::Str(_) | Tok::Int(_) | Tok::Float(_))
    }

    pub(crate) fn parens(&self) -> Option<&[Tt]> {
        match &self.tok {
            Tok::Group('(', inner) => Some(inner),
            _ => None,
        }
    }
}

/// Splits `text` into token trees.
pub(crate) fn lex(text: &str) -> Result<Vec<Tt>, Error> {
    let mut lexer = Lexer { text, pos: 0 };
    let (trees, close) = lexer.trees(0)?;
    match close {
        None => Ok(trees),
        Some((c, at)) => Err(Error::new(
            Span::new(at, at + c.len_utf8()),
            format!("unexpected closing delimiter `{c}`"),
        )),
    }
}

/// The closing delimiter a group's trees ended at, and its offset; `None`
/// at the text's end.
type Closed = Option<(char, usize)>;

struct Lexer<'a> {
    text: &'a str,
    pos: usize,
}

impl Lexer<'_> {
    fn peek(&self) -> Option<char> {
        self.text[self.pos..].chars().next()
    }

    fn peek2(&self) -> Option<char> {
        self.text[self.pos..].chars().nth(1)
    }

    fn bump(&mut self) -> Option<char> {
        let c = self.peek()?;
        self.pos += c.len_utf8();
        Some(c)
    }

    /// Trees up to a closing delimiter (returned with its offset) or the end.
    fn trees(&mut self, depth: usize) -> Result<(Vec<Tt>, Closed), Error> {
        let mut trees = Vec::new();
        loop {
            while self.peek().is_some_and(char::is_whitespace) {
                self.bump();
            }
            let start = self.pos;
            let Some(c) = self.bump() else {
                return Ok((trees, None));
            };
            let tok = match c {
                ')' | ']' | '}' => return Ok((trees, Some((c, start)))),
                '(' | '[' | '{' => {
                    if depth >= MAX_DEPTH {
                        return Err(Error::new(
                            Span::new(start, start + 1),
                            format!("groups nest deeper than {MAX_DEPTH} levels"),
                        ));
                    }
                    let (inner, close) = self.trees(depth + 1)?;
                    let want = match c {
                        '(' => ')',
                        '[' => ']',
                        _ => '}',
                    };
                    match close {
                        Some((got, _)) if got == want => {}
                        Some((got, at)) => {
                            return Err(Error::new(
                                Span::new(at, at + 1),
                                format!("mismatched closing delimiter `{got}`; expected `{want}`"),
                            ));
                        }
                        None => {
                            return Err(Error::new(
                                Span::new(start, start + 1),
                                format!("unclosed delimiter `{c}`; add `{want}`"),
                            ));
                        }
                    }
                    Tok::Group(c, inner)
                }
                '"' => Tok::Str(self.string(start)?),
                '\'' => self.char_or_quote(),
                // `r"..."`, `r#"..."#`: a raw string (`br".."` and
                // `cr".."` too, as bytes or C text).
                'r' | 'b' | 'c' if self.raw_ahead(c) => {
                    if c != 'r' {
                        self.bump();
                    }
                    Tok::Str(self.raw_string(start)?)
                }
                'r' if self.peek() == Some('#') && self.peek2().is_some_and(is_ident_start) => {
                    self.bump();
                    Tok::Ident(self.ident_rest(self.pos))
                }
                c if is_ident_start(c) => Tok::Ident(self.ident_rest(start)),
                c if c.is_ascii_digit() => self.number(start),
                c => Tok::Punct(c),
            };
            trees.push(Tt {
                tok,
                span: Span::new(start, self.pos),
            });
        }
    }

    /// Whether a raw string starts here, after `c` (`r`, or `b`/`c` then `r`).
    fn raw_ahead(&self, c: char) -> bool {
        let rest = &self.text[self.pos..];
        let rest = match c {
            'r' => rest,
            _ => match rest.strip_prefix('r') {
                Some(rest) => rest,
                None => return false,
            },
        };
        rest.starts_with(['"', '#']) && rest.trim_start_matches('#').starts_with('"')
    }

    /// After a `'`: a character literal (`'a'`, `'\n'`), or the quote of a
    /// lifetime or label.
    fn char_or_quote(&mut self) -> Tok {
        let rest = &self.text[self.pos..];
        let mut chars = rest.char_indices();
        let end = match (chars.next(), chars.next()) {
            // (`'\''`: the escaped character, then the closing quote.)
            (Some((_, '\\')), Some((i, c))) => {
                let after = i + c.len_utf8();
                rest[after..].find('\'').map(|j| after + j + 1)
            }
            (Some(_), Some((i, '\''))) => Some(i + 1),
            _ => None,
        };
        match end {
            Some(end) => {
                self.pos += end;
                Tok::Char
            }
            None => Tok::Punct('\''),
        }
    }

    fn ident_rest(&mut self, start: usize) -> String {
        while self.peek().is_some_and(|c| c.is_alphanumeric() || c == '_') {
            self.bump();
        }
        self.text[start..self.pos].to_owned()
    }

    /// A string literal's value, after its opening quote.
    fn string(&mut self, start: usize) -> Result<String, Error> {
        let mut value = String::new();
        loop {
            match self.bump() {
                None => {
                    return Err(Error::new(
                        Span::new(start, self.pos),
                        "unterminated double quote string".to_owned(),
                    ));
                }
                Some('"') => return Ok(value),
                Some('\\') => {
                    let escape = self.pos - 1;
                    let c = match self.bump() {
                        Some('n') => '\n',
                        Some('t') => '\t',
                        Some('r') => '\r',
                        Some('0') => '\0',
                        Some(c @ ('\\' | '"' | '\'')) => c,
                        // `\x31`, `\u{b5}`.
                        Some('x') => self.hex(2, escape)?,
                        Some('u') if self.peek() == Some('{') => {
                            self.bump();
                            let c = self.hex(6, escape)?;
                            if self.bump() != Some('}') {
                                return Err(self.bad_escape(escape));
                            }
                            c
                        }
                        Some('\n') => {
                            while self.peek().is_some_and(char::is_whitespace) {
                                self.bump();
                            }
                            continue;
                        }
                        _ => return Err(self.bad_escape(escape)),
                    };
                    value.push(c);
                }
                Some(c) => value.push(c),
            }
        }
    }

    fn bad_escape(&self, escape: usize) -> Error {
        Error::new(
            Span::new(escape, self.pos),
            "unknown character escape".to_owned(),
        )
    }

    /// Up to `most` hex digits (at least one), as a character.
    fn hex(&mut self, most: usize, escape: usize) -> Result<char, Error> {
        let start = self.pos;
        while self.pos - start < most && self.peek().is_some_and(|c| c.is_ascii_hexdigit()) {
            self.bump();
        }
        u32::from_str_radix(&self.text[start..self.pos], 16)
            .ok()
            .and_then(char::from_u32)
            .ok_or_else(|| self.bad_escape(escape))
    }

    /// A raw string's value, after its `r`.
    fn raw_string(&mut self, start: usize) -> Result<String, Error> {
        let hashes =
            self.text[self.pos..].len() - self.text[self.pos..].trim_start_matches('#').len();
        self.pos += hashes + 1;
        let close = format!("\"{}", "#".repeat(hashes));
        match self.text[self.pos..].find(&close) {
            Some(i) => {
                let value = self.text[self.pos..self.pos + i].to_owned();
                self.pos += i + close.len();
                Ok(value)
            }
            None => Err(Error::new(
                Span::new(start, self.text.len()),
                "unterminated raw string".to_owned(),
            )),
        }
    }

    /// A number literal: its digits without `_` and suffix; a float when
    /// it has a fraction or an exponent.
    fn number(&mut self, start: usize) -> Tok {
        let digits = |l: &mut Self| {
            while l.peek().is_some_and(|c| c.is_ascii_digit() || c == '_') {
                l.bump();
            }
        };
        digits(self);
        let mut float = false;
        if self.peek() == Some('.') && self.peek2().is_none_or(|c| c != '.' && !is_ident_start(c)) {
            float = true;
            self.bump();
            digits(self);
        }
        let before_exponent = self.pos;
        if matches!(self.peek(), Some('e' | 'E')) {
            self.bump();
            if matches!(self.peek(), Some('+' | '-')) {
                self.bump();
            }
            if self.peek().is_some_and(|c| c.is_ascii_digit()) {
                float = true;
                digits(self);
            } else {
                self.pos = before_exponent;
            }
        }
        let number: String = self.text[start..self.pos]
            .chars()
            .filter(|c| *c != '_')
            .collect();
        // (A suffix: `100ms`, `2u32`, `0x10`'s `x10`.)
        let _ = self.ident_rest(self.pos);
        if float {
            Tok::Float(number)
        } else {
            Tok::Int(number)
        }
    }
}

fn is_ident_start(c: char) -> bool {
    c.is_alphabetic() || c == '_'
}

#[cfg(test)]
mod tests {
    use crate::parse;

    #[test]
    fn strings_read_as_rust_reads_them() {
        for text in [
            r#"constant("1s")"#,
            r##"constant(r"1s")"##,
            r###"constant(r#"1s"#)"###,
            r#"constant("\x31s")"#,
            r#"constant("\u{31}s")"#,
        ] {
            let base = parse(text).unwrap().strategy.unwrap().base.unwrap();
            assert_eq!(base.value, std::time::Duration::from_secs(1), "{text}");
        }
        let e = parse(r##"constant(r#"1s")"##).unwrap_err();
        assert_eq!(e.errors()[0].message(), "unterminated raw string");
        let e = parse(r#"constant("\q1s")"#).unwrap_err();
        assert_eq!(e.errors()[0].message(), "unknown character escape");
        let e = parse("constant(\"1s)").unwrap_err();
        assert_eq!(e.errors()[0].message(), "unterminated double quote string");
        let e = parse("chain(constant(\"1s\"]").unwrap_err();
        assert_eq!(e.errors()[0].span(), crate::Span::new(19, 20));
    }
}
