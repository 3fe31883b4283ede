//! The fleet controls: `budget`, `circuit` and `throttle`, evaluated once
//! per call, and the retry state's slot they live in (a breaker or a
//! throttle needs the state from the first attempt).

use proc_macro2::{Span, TokenStream};
use quote::{quote, quote_spanned};
use syn::{Expr, Ident};

use super::names::{Names, local, p_at};
use crate::attr::Arg;

// Input:  `budget = EXPR` (`name` "budget", checked by `AsBudget::as_budget`)
//         or `circuit = EXPR` ("circuit", `AsCircuit::as_circuit`).
// Output: let __backoff_budget_value = &(EXPR);     // or must_be_static(&STATIC)
//         let __backoff_budget = AsBudget::as_budget(__backoff_budget_value);
//
// Evaluated once per call, before the first attempt. A `static`'s path (by
// convention in capitals) must be one: a `const` would be a fresh budget or
// breaker for every call.
fn shared(arg: Option<&Arg<Expr>>, name: &str, trait_: &str, fun: &str) -> Option<TokenStream> {
    arg.map(|a| {
        let expr = &a.value;
        let local = Ident::new(&format!("__backoff_{name}"), Span::call_site());
        let value = Ident::new(&format!("__backoff_{name}_value"), a.span);
        let check = Ident::new(fun, a.span);
        let (pa, trait_) = (p_at(a.span), Ident::new(trait_, a.span));
        let borrowed = if names_a_static(expr) {
            // (A `const` here is a temporary, which rustc reports at the
            // name: "creates a temporary value", "requires that borrow
            // lasts for `'static`".)
            quote_spanned! {a.span=> #pa::must_be_static(&#expr) }
        } else {
            let expr = kept_across_calls(expr, &pa);
            quote_spanned! {a.span=> &(#expr) }
        };
        let checked = quote_spanned! {a.span=> #pa::#trait_::#check(#value) };
        let bind = quote_spanned! {a.span=> let #value = #borrowed; };
        quote! {
            #bind
            let #local = #checked;
        }
    })
}

/// `budget`'s, `circuit`'s and `throttle`'s bindings, in that order.
pub(super) fn bindings(n: &Names<'_>) -> TokenStream {
    let budget = shared(n.args.budget.as_ref(), "budget", "AsBudget", "as_budget");
    let circuit = shared(
        n.args.circuit.as_ref(),
        "circuit",
        "AsCircuit",
        "as_circuit",
    );
    let throttle = shared(
        n.args.throttle.as_ref(),
        "throttle",
        "AsThrottle",
        "as_throttle",
    );
    quote! {
        #budget
        #circuit
        #throttle
    }
}

// Input:  the policy, the start time, `budget`, `circuit`, `throttle`.
// Output: state_from(policy, clock, started).with_budget(b).with_circuit(c)
//             .with_throttle(t)
fn make(n: &Names<'_>) -> TokenStream {
    let (p, policy_ref, clock, started_value) = (&n.p, &n.policy_ref, &n.clock, &n.started_value);
    let with_budget = n
        .args
        .budget
        .as_ref()
        .map(|_| quote!(.with_budget(__backoff_budget)));
    let with_circuit = n
        .args
        .circuit
        .as_ref()
        .map(|_| quote!(.with_circuit(__backoff_circuit)));
    let with_throttle = n
        .args
        .throttle
        .as_ref()
        .map(|_| quote!(.with_throttle(__backoff_throttle)));
    quote_spanned! {n.start_span=>
        #p::state_from(#policy_ref, #clock, #started_value)
            #with_budget
            #with_circuit
            #with_throttle
    }
}

// Input:  the policy and what the loop keeps.
// Output: let __backoff_started = ..;                 // if read
//         let mut __backoff_slot = ManuallyDrop::new(None);
//         (`Some(make())` beside a breaker, not in a `ManuallyDrop`;
//         `Carried::NEW` for an `async fn` that keeps nothing else)
//
// The state is built on the first failure, so a call that succeeds at once
// builds nothing; a breaker needs it from the start (it admits the first
// attempt). A budget is only spent on retries: a success before any
// failure deposits into it directly. Without a breaker the state holds
// nothing to release (its only `Drop` part is a breaker's permit), so its
// slot is a `ManuallyDrop`: a call that returns has no drop of the slot to
// run, and an `async fn`'s future none to keep. (The slot's type names the
// policy's strategy: with `policy = EXPR`, spanned there too, so a wrong
// type is reported once.)
pub(super) fn start(n: &Names<'_>) -> TokenStream {
    let (p, started, start_span) = (&n.p, &n.started, n.start_span);
    let slot_init = if n.args.gates_attempts() {
        let make = make(n);
        quote!(::core::option::Option::Some(#make))
    } else {
        quote!(::core::option::Option::None)
    };
    let slot_name = local("__backoff_slot", start_span);
    if n.carried {
        quote!(let mut #slot_name = #p::Carried::NEW;)
    } else if n.args.gates_attempts() {
        quote_spanned! {start_span=>
            #started
            let mut #slot_name = #slot_init;
        }
    } else {
        quote_spanned! {start_span=>
            #started
            let mut #slot_name = ::core::mem::ManuallyDrop::new(#slot_init);
        }
    }
}

// Input:  `circuit`, `throttle`, and how the loop reports giving up.
// Output: let state = slot.get_or_insert_with(|| make());
//         if let Err(open) = state.before_attempt() {
//             let result = Err(E::from(open)); let report = report(state);
//             recording.gave_up(None, report.reason);     // `circuit_open`
//             report_give_up; return from_result(result);
//         }
//         (the same with `state.ask_throttle()` and `E::from(Rejected)`)
//
// A refused call fails fast with `E::from(CircuitOpen)`, a rejected one
// with `E::from(Rejected)`.
pub(super) fn before_attempt(n: &Names<'_>, report_give_up: &TokenStream) -> Option<TokenStream> {
    if !n.args.gates_attempts() {
        return None;
    }
    let (p, ret, slot, from_result) = (&n.p, &n.ret, &n.slot, &n.rebuild_fn());
    let record_refused = n.record_refused();
    let refuse = |arg: &Option<Arg<Expr>>, ask: &str, trait_: &str, conv: &str| {
        let a = arg.as_ref()?;
        // On the argument's name: the mistake is the error type, not the
        // breaker or the throttle.
        let (refused, pc) = (local("__backoff_refused", a.key), p_at(a.key));
        let (ask, trait_, conv) = (
            Ident::new(ask, Span::call_site()),
            Ident::new(trait_, a.key),
            Ident::new(conv, a.key),
        );
        let from = quote_spanned! {a.key=>
            <#pc::ErrorOf<#ret> as #pc::#trait_>::#conv(#refused)
        };
        Some(quote! {
            if let #p::Result::Err(__backoff_refused) = __backoff_state.#ask() {
                let __backoff_result = #p::Result::Err(#from);
                let __backoff_report = #p::report(__backoff_state);
                #record_refused
                #report_give_up
                return #from_result(__backoff_result);
            }
        })
    };
    let circuit = refuse(
        &n.args.circuit,
        "before_attempt",
        "FromCircuitOpen",
        "from_circuit_open",
    );
    let throttle = refuse(
        &n.args.throttle,
        "ask_throttle",
        "FromRejected",
        "from_rejected",
    );
    let make_state = make(n);
    Some(quote! {
        let __backoff_state = (#slot).get_or_insert_with(|| #make_state);
        #circuit
        #throttle
    })
}

// Input:  `circuit`, `throttle`, `budget`.
// Output: what an accepted outcome tells them: the state's (breaker's,
//         throttle's)
//         `on_success()`, or the budget's deposit.
pub(super) fn on_success(n: &Names<'_>) -> Option<TokenStream> {
    let (p, slot) = (&n.p, &n.slot);
    if n.args.gates_attempts() {
        Some(quote! {
            if let ::core::option::Option::Some(__backoff_state) = &mut #slot {
                __backoff_state.on_success();
            }
        })
    } else {
        n.args.budget.as_ref().map(|_| {
            quote! {
                #p::succeeded_with_budget(&mut #slot, __backoff_budget);
            }
        })
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
