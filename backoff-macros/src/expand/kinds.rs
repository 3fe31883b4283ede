//! `on(PATTERN, ..)`: the policy's table of kinds, and the `match` that
//! turns `when`'s value into a kind's `Decision`.

use proc_macro2::{Span, TokenStream};
use quote::{quote, quote_spanned};
use syn::Ident;

use super::policy::{attempts, builtin_variant, jitter, strategy_parts};
use crate::attr::schedule::arm_limit;
use crate::attr::{Attempts, JitterKind, OnAction, RetryArgs, StrategyArg, StrategyKind};

// Input:  the `on(..)` arms (none: nothing).
// Output: static __BACKOFF_KIND_1: Policy<Chain<..>> = Policy::from_strategy(Chain::new(..)).jitter(..);
//         static __BACKOFF_KINDS: [Kind; N] = [
//             Kind::new("Failure::Transient", Policy::from_strategy(Builtin::Exponential(..)).jitter(..).attempts(5)),
//             Kind::of("Failure::Conflict", &__BACKOFF_KIND_1),   // composed, `sidekiq`, `buckets`
//             Kind::named("Failure::Permanent"),   // `stop` and `after = EXPR`
//         ];
//         An arm without `jitter` takes the top-level `jitter` (but for
//         `decorrelated`, random by itself), else its strategy's default;
//         without `attempts`, the default, 3; beside `stop_at_delay`, the
//         attempt count the rule gives its schedule, if smaller or not given.
pub(super) fn kinds_static(args: &RetryArgs, p: &Ident) -> TokenStream {
    if args.on.is_empty() {
        return TokenStream::new();
    }
    let top_jitter = args.jitter.as_ref().map(|j| &j.value);
    // Arms on a strategy that is not a `Builtin` (composed, `sidekiq`,
    // `buckets`): a `static` policy each, which the kind refers to.
    let mut policies = TokenStream::new();
    let kinds: Vec<TokenStream> = args
        .on
        .iter()
        .enumerate()
        .map(|(i, arm)| {
            let name = &arm.text;
            let OnAction::Schedule {
                strategy,
                attempts: limit,
                jitter: own,
            } = &arm.action
            else {
                return quote!(#p::Kind::named(#name));
            };
            let kind = strategy.kind;
            let chosen = own
                .as_ref()
                .map(|j| &j.value)
                .or(top_jitter.filter(|_| kind != StrategyKind::Decorrelated));
            let stop = args.stop_at_delay.as_ref().map(|s| s.value.value);
            let limit = arm_limit(strategy, limit.as_ref().map(|a| a.value), stop);
            let policy = Ident::new(&format!("__BACKOFF_KIND_{i}"), Span::call_site());
            let (static_policy, kind) = kind_entry(p, name, &policy, strategy, chosen, limit);
            policies.extend(static_policy);
            kind
        })
        .collect();
    let n = args.on.len();
    quote! {
        #policies
        static __BACKOFF_KINDS: [#p::Kind; #n] = [#(#kinds),*];
    }
}

// Input:  a kind's name, its strategy, jitter (`None`: the strategy's
//         default) and attempt limit.
// Output: `Kind::new(name, Policy::from_strategy(Builtin::..(..)).jitter(..).attempts(n))`
//         for a builtin strategy; else, beside it,
//         `static #policy: Policy<Chain<..>> = Policy::from_strategy(..).jitter(..).attempts(n);`
//         and `Kind::of(name, &#policy)`. An `on(..)` arm's entry, and the
//         throttled kind.
pub(super) fn kind_entry(
    p: &Ident,
    name: &str,
    policy: &Ident,
    strategy: &StrategyArg,
    chosen: Option<&JitterKind>,
    limit: Option<Attempts>,
) -> (TokenStream, TokenStream) {
    let (ty, ctor) = strategy_parts(p, Some(strategy));
    let kind = strategy.kind;
    let j = jitter(
        p,
        &chosen.cloned().unwrap_or_else(|| strategy.default_jitter()),
    );
    let a = attempts(limit);
    if is_builtin(kind) {
        let variant = builtin_variant(kind);
        let entry = quote! {
            #p::Kind::new(#name, #p::Policy::from_strategy(#p::Builtin::#variant(#ctor)).jitter(#j) #a)
        };
        return (TokenStream::new(), entry);
    }
    let static_policy = quote! {
        static #policy: #p::Policy<#ty> = #p::Policy::from_strategy(#ctor).jitter(#j) #a;
    };
    (static_policy, quote!(#p::Kind::of(#name, &#policy)))
}

/// Whether the runtime's `Builtin` holds `kind`'s strategy (held by value
/// in the kind); the others live in a `static` policy of their own (for an
/// `on(..)` arm and for `throttled`).
pub(super) fn is_builtin(kind: StrategyKind) -> bool {
    matches!(
        kind,
        StrategyKind::Exponential
            | StrategyKind::Linear
            | StrategyKind::Constant
            | StrategyKind::Fibonacci
            | StrategyKind::Decorrelated
            | StrategyKind::Immediate
    )
}

// Input:  the `on(..)` arms and the top-level `attempts`.
// Output: `.kinds(&__BACKOFF_KINDS)`, and `.unlimited_attempts()` unless
//         `attempts` was given (the arms' limits bound the call).
pub(super) fn kinds_setters(args: &RetryArgs) -> TokenStream {
    if args.on.is_empty() {
        return TokenStream::new();
    }
    let unlimited = args
        .attempts
        .is_none()
        .then(|| quote!(.unlimited_attempts()));
    quote!(.kinds(&__BACKOFF_KINDS) #unlimited)
}

// Input:  `value`, the call of `when` (spanned on `when`'s value), and the
//         `on(..)` arms.
// Output: match value {
//             Failure::Transient => Decision::Kind(0),
//             Failure::RetryAfter(d) => Decision::KindAfter(1, { let after: Duration = d; after }),
//             Failure::Permanent => Decision::Kind(2),
//         }
//         with no other arm but one whose guard is false (which counts for
//         nothing): a variant without an `on(..)` arm is rustc's
//         "non-exhaustive patterns" error, at `when`'s value, naming it.
//         The value passes through `WhenClassification::classified`: a
//         `bool` or a `Decision` is one error there, in the attribute's terms.
pub(super) fn classify(args: &RetryArgs, p: &Ident, value: TokenStream, at: Span) -> TokenStream {
    let arms = args.on.iter().enumerate().map(|(i, arm)| {
        let pat = &arm.pat;
        let index = u8::try_from(i).unwrap_or(u8::MAX);
        let body = match &arm.action {
            OnAction::After(expr) => {
                let after = Ident::new("__backoff_after", Span::mixed_site());
                quote_spanned! {arm.key=>
                    #p::Decision::KindAfter(#index, {
                        let #after: #p::Duration = #expr;
                        #after
                    })
                }
            }
            _ => quote_spanned!(arm.key=> #p::Decision::Kind(#index)),
        };
        quote!(#pat => #body,)
    });
    // A last arm that never matches (its guard is false), of the macro's
    // own context, so that rustc's error for a variant without an arm
    // suggests no edit of the generated match in the attribute (it only
    // suggests one when the last two arms share a context).
    let never = quote!(_ if false => #p::Decision::Stop,);
    let classified = quote_spanned! {at=>
        <_ as #p::WhenClassification<_>>::classified(#value)
    };
    quote_spanned! {at=>
        match #classified {
            #(#arms)*
            #never
        }
    }
}
