//! The fleet controls: `budget`, `circuit` and `throttle`, evaluated once
//! per call, and the retry state's slot they live in (a breaker or a
//! throttle needs the state from the first attempt).

use proc_macro2::{Span, TokenStream};
use quote::{quote, quote_spanned};
use syn::{Expr, Ident};

use super::names::{Names, p_at};
use crate::attr::Arg;

// Input:  `budget = EXPR` (`name` "budget", checked by `AsBudget::as_budget`)
//         or `circuit = EXPR` ("circuit", `AsCircuit::as_circuit`).
// Output: let __backoff_budget_value = &(EXPR);     // or const { &STATIC }
//         let __backoff_budget = AsBudget::as_budget(__backoff_budget_value);
//
// Evaluated once per call, before the first attempt. A `static`'s path (by
// convention in capitals) must be one: a `const` would be a fresh budget or
// breaker for every call.
fn shared(
    arg: Option<&Arg<Expr>>,
    (name, function): (&str, &Ident),
    trait_: &str,
    fun: &str,
) -> Option<TokenStream> {
    arg.map(|a| {
        let local = Ident::new(&format!("__backoff_{name}"), Span::call_site());
        let (value, checked) = checked(a, (name, function), trait_, fun);
        quote! {
            #value
            let #local = #checked;
        }
    })
}

// Input:  `budget = EXPR` (`name` "budget", checked by `AsBudget::as_budget`)
//         or `circuit = EXPR` ("circuit", `AsCircuit::as_circuit`), ...
// Output: let __backoff_budget_value = &(EXPR);
//         and AsBudget::as_budget(__backoff_budget_value), or for a
//         `static`, no binding and AsBudget::as_budget(const { &STATIC }).
//
// Evaluated once per call, before the first attempt. (The binding keeps a
// temporary, such as the `&T` a method returns, alive for the call.) A
// `static`'s path (by convention in capitals) must be one: a `const` would
// be a fresh budget or breaker for every call.
fn checked(
    a: &Arg<Expr>,
    (name, function): (&str, &Ident),
    trait_: &str,
    fun: &str,
) -> (TokenStream, TokenStream) {
    let expr = &a.value;
    let check = Ident::new(fun, a.span);
    let (pa, trait_) = (p_at(a.span), Ident::new(trait_, a.span));
    let (binding, borrowed) = if names_a_static(expr) {
        // (A `const` of a breaker, a budget or a `LazyLock` is a new
        // temporary at each use, which rustc refuses in a `const` block
        // (E0492) with "try replacing the temporary by an interior
        // mutable `static`"; a `static` compiles to its address.)
        (
            TokenStream::new(),
            quote_spanned! {a.span=> const { &#expr } },
        )
    } else {
        let value = Ident::new(&format!("__backoff_{name}_value"), a.span);
        let expr = kept_across_calls(expr, &pa);
        (
            quote_spanned! {a.span=> let #value = &(#expr); },
            quote!(#value),
        )
    };
    // (A breaker given to `budget` is told `circuit = ..`, in its words.)
    let borrowed = crate::valid::other_control(name, expr, function, &pa, a.span, borrowed);
    (
        binding,
        quote_spanned! {a.span=> #pa::#trait_::#check(#borrowed) },
    )
}

/// `budget`'s, `circuit`'s and `throttle`'s bindings, in that order (for
/// a hedged call).
pub(super) fn bindings(n: &Names<'_>) -> TokenStream {
    let f = &n.sig.ident;
    let budget = shared(
        n.args.budget.as_ref(),
        ("budget", f),
        "AsBudget",
        "as_budget",
    );
    let circuit = shared(
        n.args.circuit.as_ref(),
        ("circuit", f),
        "AsCircuit",
        "as_circuit",
    );
    let throttle = shared(
        n.args.throttle.as_ref(),
        ("throttle", f),
        "AsThrottle",
        "as_throttle",
    );
    quote! {
        #budget
        #circuit
        #throttle
    }
}

// Input:  the policy and what the loop keeps.
// Output: let mut __backoff_call = Call::begin(policy, clock, timed, function)
//             .with_budget(AsBudget::as_budget(b)).with_circuit(..).with_throttle(..);
//         (`b` a binding made before, or a `static`: see `checked`)
//         or, for an `async fn` that keeps nothing but its attempt count
//         (a `Carried`): let mut __backoff_call = compact::<P>();
//
// The call's start is read only if a hook reads `elapsed` or there is a
// deadline; the retry state is built on the first failure, so a call that
// succeeds at once builds nothing, but beside a breaker or a throttle,
// which admit the first attempt. A budget is only spent on retries. (The
// policy is spanned at `policy = EXPR`, so a wrong type is reported once.)
pub(super) fn start(n: &Names<'_>) -> TokenStream {
    let p = &n.p;
    if n.carried {
        let fixed = &n.fixed;
        return quote!(let mut __backoff_call = #p::compact::<#fixed>(););
    }
    let (policy_ref, clock, timed, function) = (&n.policy_ref, &n.clock, n.timed, n.function());
    let mut bindings = TokenStream::new();
    let mut with = |arg: &Option<Arg<Expr>>, name: &str, trait_: &str, fun: &str| {
        arg.as_ref().map(|a| {
            let (binding, checked) = checked(a, (name, &n.sig.ident), trait_, fun);
            bindings.extend(binding);
            let method = Ident::new(&format!("with_{name}"), Span::call_site());
            quote!(.#method(#checked))
        })
    };
    let with_budget = with(&n.args.budget, "budget", "AsBudget", "as_budget");
    let with_circuit = with(&n.args.circuit, "circuit", "AsCircuit", "as_circuit");
    let with_throttle = with(&n.args.throttle, "throttle", "AsThrottle", "as_throttle");
    let begin = quote_spanned! {n.start_span=>
        #p::Call::begin(#policy_ref, #clock, #timed, #function)
    };
    quote! {
        #bindings
        let mut __backoff_call = #begin #with_budget #with_circuit #with_throttle;
    }
}

// Input:  `self.budget()`, `&make()`, `self.budget`.
// Output: <ReturnedValue as KeptAcrossCalls<_>>::check(self.budget()),
//         &<..>::check(make()), self.budget (unchanged)
//
// A call (under any `&`) must return a handle to a budget, breaker or
// throttle kept elsewhere: one it returns by value is new for every call
// of the function and limits nothing. A place (a field, a `static`, `*arc`)
// is one already.
fn kept_across_calls(expr: &Expr, pa: &Ident) -> TokenStream {
    match expr {
        Expr::Group(g) => kept_across_calls(&g.expr, pa),
        Expr::Paren(p) => kept_across_calls(&p.expr, pa),
        Expr::Reference(r) => {
            let (and, mutability) = (&r.and_token, &r.mutability);
            let inner = kept_across_calls(&r.expr, pa);
            quote!(#and #mutability #inner)
        }
        Expr::Call(_) | Expr::MethodCall(_) => {
            // At the method's name (`budget` in `self.budget()`), else at
            // the call's first token.
            let span = match expr {
                Expr::MethodCall(m) => m.method.span(),
                _ => syn::spanned::Spanned::span(expr),
            };
            quote_spanned! {span=>
                <#pa::ReturnedValue as #pa::KeptAcrossCalls<_>>::check(#expr)
            }
        }
        _ => quote!(#expr),
    }
}

/// Whether `expr` is a path whose last segment is in capitals, as the names
/// of `static`s are.
fn names_a_static(expr: &Expr) -> bool {
    let mut expr = expr;
    while let Expr::Group(g) = expr {
        expr = &g.expr;
    }
    let Expr::Path(path) = expr else {
        return false;
    };
    path.path.segments.last().is_some_and(|s| {
        let name = s.ident.to_string();
        name.chars().any(|c| c.is_ascii_uppercase())
            && !name.chars().any(|c| c.is_ascii_lowercase())
    })
}
