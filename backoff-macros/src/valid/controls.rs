//! A fleet control given to the wrong argument (`budget = PAYMENTS` where
//! `PAYMENTS` is a breaker): one error, on the value, naming the argument
//! it belongs to with the user's own expression, "did you mean `circuit =
//! PAYMENTS`?".
//!
//! The runtime's traits (`control::Budget`, `Circuit`, `Throttle`) cannot
//! quote the user's expression, so the value goes through a check of the
//! function's own before the runtime's: `retry_args`'s `pick` on
//! `&&&&BudgetValue(v)` tells the argument's own control (the value,
//! unchanged) from each other control (a marker, `ACircuitBreaker`, ...)
//! and from anything else (the value again, for the runtime's check and its
//! message): see its comment. A trait of the function's own, whose message
//! is built from the expression, refuses the marker of each other control;
//! a value that is two controls (a type of the user's implementing both) is
//! taken as the argument's.
//!
//! A value whose name says the argument it is given to (`budget = BUDGET`,
//! `circuit = self.breaker`, `throttle = &*self.throttle`) gets no such
//! check: a control named for its kind is that kind, and the common
//! expansion stays as small as it was. (One that is not, a breaker named
//! `BUDGET`, gets the runtime's message, which says where each control
//! goes.)

use proc_macro2::{Delimiter, Span, TokenStream, TokenTree};
use quote::{ToTokens, format_ident, quote_spanned};
use syn::{Expr, Ident};

/// Each control argument: its name, the type it lends, what it is called
/// and the marker of a value of its kind given to another argument.
const CONTROLS: [(&str, &str, &str, &str); 3] = [
    ("budget", "RetryBudget", "a retry budget", "ARetryBudget"),
    (
        "circuit",
        "CircuitBreaker",
        "a circuit breaker",
        "ACircuitBreaker",
    ),
    (
        "throttle",
        "AdaptiveThrottle",
        "a throttle",
        "AnAdaptiveThrottle",
    ),
];

/// Whether the expression's last name says the argument's kind: `BUDGET`,
/// `self.shared_budget`, `PAYMENTS_BREAKER`, `self.circuit()`.
fn named_for(name: &str, expr: &Expr) -> bool {
    let words: &[&str] = match name {
        "budget" => &["budget"],
        "circuit" => &["circuit", "breaker"],
        _ => &["throttle"],
    };
    let last = expr
        .to_token_stream()
        .into_iter()
        .filter_map(|t| match t {
            TokenTree::Ident(i) => Some(i.to_string().to_ascii_lowercase()),
            _ => None,
        })
        .last()
        .unwrap_or_default();
    words.iter().any(|w| last.contains(w))
}

/// `value` (a `&T`), checked to be no other control than `name`'s: an
/// expression giving `value` back (or, for another control, a control of
/// `name`'s type that is never used, beside the error).
pub(crate) fn other_control(
    name: &str,
    expr: &Expr,
    function: &Ident,
    pa: &Ident,
    span: Span,
    value: TokenStream,
) -> TokenStream {
    let Some(own) = CONTROLS.iter().find(|c| c.0 == name) else {
        return value;
    };
    if named_for(name, expr) {
        return value;
    }
    let written = written(expr.to_token_stream());
    let mut checks = TokenStream::new();
    let others: Vec<_> = CONTROLS.iter().filter(|c| c.0 != name).collect();
    for other in &others {
        let check = format_ident!(
            "{}ArgumentNot{}_of_{}",
            capitalized(name),
            other.3,
            function.to_string().trim_start_matches("r#"),
            span = span
        );
        let message = format!(
            "`#[retry]`: `{written}` is {}, not {}; did you mean `{} = {written}`?",
            other.2, own.2, other.0
        );
        let label = format!("{}, given to `{name}`", other.2);
        let note = format!(
            "`{name}` takes {} (`backoff_runtime::{}`, or a type of your own implementing `backoff_runtime::control::{}`); {} goes to `{} = ..`",
            own.2,
            own.1,
            capitalized(name),
            other.2,
            other.0
        );
        let fine = others
            .iter()
            .filter(|o| o.0 != other.0)
            .map(|o| Ident::new(o.3, span));
        checks.extend(quote_spanned! {span=>
            #[diagnostic::on_unimplemented(message = #message, label = #label, note = #note)]
            #[allow(non_camel_case_types)]
            trait #check<M> {
                fn check(_: &M) {}
            }
            #[diagnostic::do_not_recommend]
            impl #check<#pa::Own> for () {}
            #(
                #[diagnostic::do_not_recommend]
                impl #check<#pa::#fine> for () {}
            )*
            <() as #check<_>>::check(&kind);
        });
    }
    let probe = format_ident!("{}Value", capitalized(name), span = span);
    quote_spanned! {span=>
        {
            use #pa::Pick as _;
            let (kind, value) = (&&&&#pa::#probe(#value)).pick();
            #checks
            value
        }
    }
}

fn capitalized(word: &str) -> String {
    let mut chars = word.chars();
    chars
        .next()
        .map(|c| c.to_ascii_uppercase().to_string() + chars.as_str())
        .unwrap_or_default()
}

/// The expression as the user wrote it, without the spaces a token stream
/// puts between tokens: `&*self.breaker`, `crate::PAYMENTS`.
fn written(tokens: TokenStream) -> String {
    let mut out = String::new();
    let mut word = false;
    for tree in tokens {
        let is_word = matches!(tree, TokenTree::Ident(_) | TokenTree::Literal(_));
        if is_word && word {
            out.push(' ');
        }
        match &tree {
            TokenTree::Group(g) => {
                let (open, close) = match g.delimiter() {
                    Delimiter::Parenthesis => ("(", ")"),
                    Delimiter::Bracket => ("[", "]"),
                    Delimiter::Brace => ("{ ", " }"),
                    Delimiter::None => ("", ""),
                };
                out.push_str(open);
                out.push_str(&written(g.stream()));
                out.push_str(close);
            }
            TokenTree::Punct(p) if p.as_char() == ',' => out.push_str(", "),
            other => out.push_str(&other.to_string()),
        }
        word = is_word;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_expression_is_quoted_as_written() {
        for text in [
            "PAYMENTS",
            "&*self.breaker",
            "crate::fleet::PAYMENTS",
            "self.pick(\"a\", 2)",
        ] {
            let expr: Expr = syn::parse_str(text).unwrap();
            assert_eq!(written(expr.to_token_stream()), text);
        }
    }

    #[test]
    fn each_other_control_gets_a_message_of_its_own() {
        let budget: Expr = syn::parse_str("&*self.shared_budget").unwrap();
        let v = quote::quote!(v);
        let (f, pa) = (
            Ident::new("f", Span::call_site()),
            Ident::new("p", Span::call_site()),
        );
        let same = |name| other_control(name, &budget, &f, &pa, Span::call_site(), v.clone());
        assert_eq!(same("budget").to_string(), "v");
        assert_ne!(same("circuit").to_string(), "v");
        let expr: Expr = syn::parse_str("self.budget").unwrap();
        let f = Ident::new("f", Span::call_site());
        let pa = Ident::new("p", Span::call_site());
        let got = other_control(
            "circuit",
            &expr,
            &f,
            &pa,
            Span::call_site(),
            quote::quote!(v),
        )
        .to_string();
        assert!(
            got.contains("did you mean `budget = self.budget`?"),
            "{got}"
        );
        assert!(
            got.contains("did you mean `throttle = self.budget`?"),
            "{got}"
        );
        assert!(!got.contains("did you mean `circuit"), "{got}");
    }
}
