//! The policy the attribute builds: a `static` made by const fns from the
//! literal arguments, or `policy = EXPR`'s value.

use std::time::Duration;

use proc_macro2::{Literal, Span, TokenStream};
use quote::{quote, quote_spanned};
use syn::Ident;

use crate::attr::defaults;
use crate::attr::{Attempts, JitterKind, RetryArgs, StrategyArg, StrategyKind};

// Input:  the strategy, attempts, jitter and max_elapsed arguments, or `policy = EXPR`.
// Output: `static __BACKOFF_POLICY: Origin<'static, _> = Origin::new(&Policy::..., CLOCK);`
//         built by const fns (the policy and the loop's clock), or
//         `let __backoff_policy: &Policy<_> = ...;` from the expression,
//         evaluated once per call.
pub(super) fn policy_binding(args: &RetryArgs, p: &Ident, clock: &TokenStream) -> TokenStream {
    if let Some(policy) = &args.policy {
        let expr = &policy.value;
        let value = Ident::new("__backoff_policy_value", policy.span);
        let pp = Ident::new("__backoff_private", policy.span);
        let checked = quote_spanned! {policy.span=> #pp::AsPolicy::as_policy(&#value) };
        let name = Ident::new(
            "__backoff_policy",
            Span::call_site().located_at(policy.span),
        );
        return quote! {
            let #value = #expr;
            let #name = #checked;
        };
    }
    // The strategy's own type, not the `Builtin` enum: each step of the
    // loop then computes its delay without dispatching on the strategy.
    let strategy = args.strategy.as_ref();
    let kind = strategy.map_or(StrategyKind::Exponential, |s| s.kind);
    let (ty, ctor) = strategy_parts(p, strategy);
    let main_jitter = jitter(
        p,
        args.jitter
            .as_ref()
            .map_or(defaults::jitter(kind), |j| j.value),
    );
    let mut chain = quote!(#p::Policy::<#p::#ty>::from_strategy(#ctor).jitter(#main_jitter));
    chain.extend(attempts(args.attempts.as_ref().map(|a| a.value)));
    if let Some(m) = &args.max_elapsed {
        let d = duration(p, m.value.value);
        chain.extend(quote!(.max_elapsed(#d)));
    }
    if let Some(m) = &args.retry_after_max {
        let d = duration(p, m.value.value);
        chain.extend(quote!(.retry_after_max(#d)));
    }
    if let Some(t) = &args.throttled {
        let t = &t.value;
        // `jitter` applies to both schedules; `decorrelated` is random by itself.
        let jitter = args
            .jitter
            .as_ref()
            .map(|j| j.value)
            .filter(|_| t.strategy.kind != StrategyKind::Decorrelated);
        // A `Policy<Builtin>`: `throttled` takes any builtin strategy.
        let (variant, ctor) = strategy_parts(p, Some(&t.strategy));
        let jitter = self::jitter(p, jitter.unwrap_or(defaults::jitter(t.strategy.kind)));
        let attempts = attempts(t.attempts.as_ref().map(|a| a.value));
        chain.extend(quote! {
            .throttled(#p::Policy::from_strategy(#p::Builtin::#variant(#ctor)).jitter(#jitter) #attempts)
        });
    }
    chain.extend(super::kinds::kinds_setters(args));
    let kinds = super::kinds::kinds_static(args, p);
    quote! {
        #kinds
        static __BACKOFF_POLICY: #p::Origin<'static, #p::#ty> = #p::Origin::new(&#chain, #clock);
    }
}

// Input:  the strategy, attempts, jitter and max_elapsed arguments (no
//         `policy = EXPR`, `throttled`, `retry_after_max`).
// Output: the runtime type naming that policy, whose constants `REF` (the
//         policy) and `ORIGIN` (with the loop's clock) the loop uses:
//         `Fixed<ExponentialOf<100000000, UNSET, UNSET>, 1, 5, UNSET, false>`;
//         `None` for what it cannot name (then `policy_binding`'s `static`).
//
// A type of the runtime's, not a `static` of the function's: the function
// then has no item or body of its own to type-check and evaluate, and
// functions with the same arguments share one instance.
pub(super) fn fixed_policy(args: &RetryArgs, p: &Ident, is_async: bool) -> Option<TokenStream> {
    if args.policy.is_some()
        || args.throttled.is_some()
        || args.retry_after_max.is_some()
        || !args.on.is_empty()
    {
        return None;
    }
    // `u64::MAX`: not given (the runtime's `UNSET`).
    let unset = Literal::u64_unsuffixed(u64::MAX);
    let nanos = |d: Duration| u64::try_from(d.as_nanos()).ok().filter(|&n| n != u64::MAX);
    let given = |d: Option<Duration>| match d {
        None => Some(unset.clone()),
        Some(d) => nanos(d).map(Literal::u64_unsuffixed),
    };
    let strategy = args.strategy.as_ref();
    let kind = strategy.map_or(StrategyKind::Exponential, |s| s.kind);
    let base = strategy.and_then(|s| s.base.as_ref()).map(|b| b.value);
    let max = given(strategy.and_then(|s| s.max.as_ref()).map(|m| m.value))?;
    let factor = strategy.and_then(|s| s.factor.as_ref()).map(|f| f.value);
    let strategy = match kind {
        // (Random by themselves, uncapped by default: a `static` of the
        // function's builds them.)
        StrategyKind::Sidekiq | StrategyKind::Buckets => return None,
        StrategyKind::Immediate => quote!(#p::Immediate),
        StrategyKind::Exponential => {
            let base = given(Some(base.unwrap_or(defaults::BASE)))?;
            let factor = factor.map_or(unset.clone(), |f| Literal::u64_unsuffixed(f.to_bits()));
            quote!(#p::ExponentialOf<#base, #max, #factor>)
        }
        other => {
            if factor.is_some() {
                return None;
            }
            let name = match other {
                StrategyKind::Linear => "LinearOf",
                StrategyKind::Fibonacci => "FibonacciOf",
                StrategyKind::Decorrelated => "DecorrelatedOf",
                _ => "ConstantOf",
            };
            let default = defaults::base(other);
            let name = Ident::new(name, Span::call_site());
            let base = given(Some(base.unwrap_or(default)))?;
            quote!(#p::#name<#base, #max>)
        }
    };
    let jitter = match args
        .jitter
        .as_ref()
        .map_or(defaults::jitter(kind), |j| j.value)
    {
        JitterKind::None => 0,
        JitterKind::Full => 1,
        JitterKind::Equal => 2,
        JitterKind::Spread => 3,
        JitterKind::Scattered(r) => Some(r.to_bits()).filter(|&b| b > 3)?,
    };
    let jitter = Literal::u64_unsuffixed(jitter);
    let attempts = match args.attempts.as_ref().map(|a| a.value) {
        None => unset.clone(),
        Some(Attempts::Unlimited) => Literal::u64_unsuffixed(0),
        Some(Attempts::Limited(0)) => return None,
        Some(Attempts::Limited(n)) => Literal::u64_unsuffixed(n.min(u64::from(u32::MAX))),
    };
    let elapsed = given(args.max_elapsed.as_ref().map(|m| m.value.value))?;
    let is_async = Ident::new(if is_async { "true" } else { "false" }, Span::call_site());
    Some(quote!(#p::Fixed<#strategy, #jitter, #attempts, #elapsed, #is_async>))
}

// Input:  a strategy argument (default: exponential).
// Output: its runtime type's name and a const expression building it, such
//         as `Exponential` and `Exponential::new(base).factor(f).max_delay(max)`;
//         what is not given keeps the runtime's default.
pub(super) fn strategy_parts(p: &Ident, strategy: Option<&StrategyArg>) -> (Ident, TokenStream) {
    let kind = strategy.map_or(StrategyKind::Exponential, |s| s.kind);
    let default = defaults::base(kind);
    let name = match kind {
        StrategyKind::Exponential => "Exponential",
        StrategyKind::Linear => "Linear",
        StrategyKind::Fibonacci => "Fibonacci",
        StrategyKind::Decorrelated => "Decorrelated",
        StrategyKind::Constant => "Constant",
        StrategyKind::Sidekiq | StrategyKind::Buckets => {
            let ty = Ident::new(
                if kind == StrategyKind::Sidekiq {
                    "Sidekiq"
                } else {
                    "Buckets"
                },
                Span::call_site(),
            );
            let unit = strategy
                .and_then(|s| s.base.as_ref())
                .map_or(defaults::UNIT, |b| b.value);
            let u = duration(p, unit);
            let mut ctor = quote!(#p::#ty::new().unit(#u));
            ctor.extend(strategy_setters(p, strategy));
            return (ty, ctor);
        }
        StrategyKind::Immediate => {
            let ty = Ident::new("Immediate", Span::call_site());
            return (ty.clone(), quote!(#p::#ty));
        }
    };
    let ty = Ident::new(name, Span::call_site());
    let base = strategy
        .and_then(|s| s.base.as_ref())
        .map_or(default, |b| b.value);
    let b = duration(p, base);
    let mut ctor = quote!(#p::#ty::new(#b));
    ctor.extend(strategy_setters(p, strategy));
    (ty, ctor)
}

/// `.factor(f)` and `.max_delay(max)`, as given.
fn strategy_setters(p: &Ident, strategy: Option<&StrategyArg>) -> TokenStream {
    let mut setters = TokenStream::new();
    if let Some(s) = strategy {
        if let Some(f) = &s.factor {
            let f = Literal::f64_suffixed(f.value);
            setters.extend(quote!(.factor(#f)));
        }
        if let Some(max) = &s.max {
            let d = duration(p, max.value);
            setters.extend(quote!(.max_delay(#d)));
        }
    }
    setters
}

/// A jitter as a const expression.
pub(super) fn jitter(p: &Ident, kind: JitterKind) -> TokenStream {
    match kind {
        JitterKind::None => quote!(#p::Jitter::None),
        JitterKind::Full => quote!(#p::Jitter::Full),
        JitterKind::Equal => quote!(#p::Jitter::Equal),
        JitterKind::Spread => quote!(#p::Jitter::Spread),
        JitterKind::Scattered(r) => {
            let r = Literal::f64_suffixed(r);
            quote!(#p::Jitter::Scattered(#r))
        }
    }
}

/// `.attempts(n)` or `.unlimited_attempts()`, if given.
pub(super) fn attempts(limit: Option<Attempts>) -> TokenStream {
    match limit {
        Some(Attempts::Limited(n)) => {
            let n = Literal::u32_suffixed(u32::try_from(n).unwrap_or(u32::MAX));
            quote!(.attempts(#n))
        }
        Some(Attempts::Unlimited) => quote!(.unlimited_attempts()),
        None => TokenStream::new(),
    }
}

/// A `Duration` as a const expression.
pub(super) fn duration(p: &Ident, d: Duration) -> TokenStream {
    let secs = Literal::u64_suffixed(d.as_secs());
    let nanos = Literal::u32_suffixed(d.subsec_nanos());
    quote!(#p::Duration::new(#secs, #nanos))
}
