//! syn utilities for the attribute's parser: `=` after a name, groups,
//! and values shown back in messages. A leaf: it imports nothing of the
//! attribute's.

use proc_macro2::{Span, TokenStream, TokenTree};
use quote::ToTokens;
use syn::ext::IdentExt;
use syn::parse::ParseStream;
use syn::{Expr, Ident, Token};

/// An error underlining from `start` to `end` (both in the attribute).
pub(super) fn span_range(start: Span, end: Span, message: impl std::fmt::Display) -> syn::Error {
    let tokens: TokenStream = [
        TokenTree::Ident(Ident::new("start", start)),
        TokenTree::Ident(Ident::new("end", end)),
    ]
    .into_iter()
    .collect();
    syn::Error::new_spanned(tokens, message)
}

/// Expects `=` after `key`.
pub(super) fn eq(input: ParseStream<'_>, key: &Ident, example: &str) -> syn::Result<()> {
    if input.peek(Token![:]) && !input.peek(Token![::]) {
        let colon: Token![:] = input.parse()?;
        return Err(syn::Error::new(
            colon.span,
            format!("write `=` here, not `:`, as in `{example}`"),
        ));
    }
    if input.peek(Token![=]) {
        input.parse::<Token![=]>()?;
        if !input.is_empty() && !input.peek(Token![,]) {
            return Ok(());
        }
    }
    Err(syn::Error::new(
        key.span(),
        format!("`{}` needs a value, as in `{example}`", key.unraw()),
    ))
}

/// Parses a parenthesized group with `f`; on an error, drops the rest of the
/// group, so that error is the only one reported for it.
pub(super) fn in_parens<T>(
    input: ParseStream<'_>,
    f: impl FnOnce(ParseStream<'_>) -> syn::Result<T>,
) -> syn::Result<T> {
    let content;
    syn::parenthesized!(content in input);
    let result = f(&content);
    if result.is_err() {
        let _ = content.parse::<TokenStream>();
    }
    result
}

/// `expr` without the invisible groups a `macro_rules!` puts around the
/// fragments it forwards (`$f:expr`, `$f:path`).
pub(crate) fn ungrouped(expr: &Expr) -> &Expr {
    match expr {
        Expr::Group(group) => ungrouped(&group.expr),
        other => other,
    }
}

/// A value short enough to repeat in a suggestion: a literal or a plain path.
pub(super) fn shown_value(value: Option<&Expr>) -> Option<String> {
    match ungrouped(value?) {
        Expr::Lit(lit) => Some(lit.lit.to_token_stream().to_string()),
        Expr::Path(path) if path.qself.is_none() => show_path(&path.path),
        Expr::Unary(syn::ExprUnary {
            op: syn::UnOp::Neg(_),
            expr,
            ..
        }) => shown_value(Some(expr)).map(|v| format!("-{v}")),
        _ => None,
    }
}

/// `a::b::C`, when it has no generic arguments.
fn show_path(path: &syn::Path) -> Option<String> {
    let segments = path
        .segments
        .iter()
        .map(|s| s.arguments.is_none().then(|| s.ident.unraw().to_string()))
        .collect::<Option<Vec<_>>>()?;
    let lead = if path.leading_colon.is_some() {
        "::"
    } else {
        ""
    };
    Some(format!("{lead}{}", segments.join("::")))
}
