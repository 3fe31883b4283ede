//! `Err(CircuitOpen)` as a pattern: `CircuitOpen` has a field (when the
//! breaker lets a call through again), so it is not a unit struct, and the
//! name alone binds a new variable that matches any value (rustc says only
//! that the variable is unused, or not snake case). Refused wherever the
//! attribute reads code: the body, and the closures of its hooks; the
//! function emitted beside the error has `CircuitOpen { .. }` there, so
//! that rustc adds no "unused variable" of its own.

use proc_macro2::{Group, TokenStream, TokenTree};
use quote::ToTokens;
use syn::visit::Visit;
use syn::{Expr, Pat};

use crate::attr::RetryArgs;
use crate::errors::Errors;

/// The runtime's types that are not unit structs, which a user may still
/// match as one (`Elapsed` is a unit struct: matching it by name works).
const NOT_UNIT: &[&str] = &["CircuitOpen"];

struct Bindings<'a>(&'a mut Errors);

impl<'ast> Visit<'ast> for Bindings<'_> {
    fn visit_pat_ident(&mut self, p: &'ast syn::PatIdent) {
        let name = p.ident.to_string();
        if p.subpat.is_none() && p.by_ref.is_none() && NOT_UNIT.contains(&name.as_str()) {
            self.0.push(syn::Error::new(
                p.ident.span(),
                format!("`{name}` here binds a new variable, which matches any value: `{name}` is not a unit struct; match a breaker's refusal with `{name} {{ .. }}`"),
            ));
        }
        syn::visit::visit_pat_ident(self, p);
    }

    // `matches!(value, PATTERN)` and `assert!(matches!(..))`: the pattern.
    fn visit_macro(&mut self, m: &'ast syn::Macro) {
        if let Some((exprs, pat)) = macro_parts(m) {
            exprs.iter().for_each(|e| self.visit_expr(e));
            pat.iter().for_each(|p| self.visit_pat(p));
        }
    }
}

/// A macro's arguments, if expressions (`assert!(..)`), or for `matches!`
/// the value, the pattern and what follows it (`if` guard).
fn macro_parts(m: &syn::Macro) -> Option<(Vec<Expr>, Option<Pat>)> {
    let matches = m.path.is_ident("matches");
    let parser = |input: syn::parse::ParseStream<'_>| {
        let mut exprs = Vec::new();
        while !input.is_empty() {
            exprs.push(input.parse::<Expr>()?);
            if input.parse::<Option<syn::Token![,]>>()?.is_none() {
                break;
            }
            if matches {
                let pat = Pat::parse_multi_with_leading_vert(input)?;
                input.parse::<TokenStream>()?;
                return Ok((exprs, Some(pat)));
            }
        }
        Ok((exprs, None))
    };
    syn::parse::Parser::parse2(parser, m.tokens.clone()).ok()
}

/// The body emitted beside the errors: each such binding as the struct
/// pattern the error names (by its tokens: `CircuitOpen` between `(`, `|`,
/// `,` or `let` and `)`, `|`, `,`, `=>`, `=` or `if`).
pub(crate) fn struct_patterns(tokens: TokenStream) -> TokenStream {
    let tokens: Vec<TokenTree> = tokens.into_iter().collect();
    let punct = |t: Option<&TokenTree>, set: &[&str]| match t {
        Some(TokenTree::Punct(p)) => set.contains(&p.as_char().to_string().as_str()),
        Some(TokenTree::Ident(i)) => set.contains(&i.to_string().as_str()),
        _ => false,
    };
    let mut out = TokenStream::new();
    for (i, token) in tokens.iter().enumerate() {
        match token {
            TokenTree::Group(g) => {
                let mut group = Group::new(g.delimiter(), struct_patterns(g.stream()));
                group.set_span(g.span());
                out.extend([TokenTree::Group(group)]);
            }
            TokenTree::Ident(ident)
                if NOT_UNIT.contains(&ident.to_string().as_str())
                    && (i == 0 || punct(tokens.get(i - 1), &["(", "|", ",", "let"]))
                    && (i + 1 == tokens.len()
                        || punct(tokens.get(i + 1), &[")", "|", ",", "=", "if"])) =>
            {
                out.extend(quote::quote_spanned!(ident.span()=> #ident { .. }));
            }
            _ => out.extend([token.clone()]),
        }
    }
    out
}

/// Each `CircuitOpen` written as a binding in the body or a hook.
pub(crate) fn check_struct_bindings(block: &syn::Block, args: &RetryArgs, errors: &mut Errors) {
    let tokens = block.to_token_stream();
    if !tokens.to_string().contains("CircuitOpen") {
        return;
    }
    let mut bindings = Bindings(errors);
    if let Ok(block) = syn::parse2::<syn::Block>(tokens) {
        bindings.visit_block(&block);
    }
    let hooks = [
        &args.when,
        &args.when_ok,
        &args.on_retry,
        &args.on_giveup,
        &args.fallback,
    ];
    for hook in hooks.into_iter().flatten() {
        bindings.visit_expr(&hook.value);
    }
}
