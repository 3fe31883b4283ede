//! The policy the attribute builds: a `static` made by const fns from the
//! literal arguments, or `policy = EXPR`'s value.

use std::time::Duration;

use proc_macro2::{Literal, Span, TokenStream};
use quote::{quote, quote_spanned};
use syn::Ident;

use crate::attr::defaults;
use crate::attr::schedule::arm_limit;
use crate::attr::{Attempts, JitterKind, OnAction, RetryArgs, StrategyArg, StrategyKind};
use backoff_schedule::Strategy;

// Input:  the strategy, attempts, jitter and max_elapsed arguments, or `policy = EXPR`.
// Output: `static __BACKOFF_POLICY: Origin<'static, _> = Origin::new(&Policy::..., CLOCK);`
//         built by const fns (the policy and the loop's clock), or
//         `let __backoff_policy: &Policy<_> = ...;` from the expression,
//         evaluated once per call. `throttled(..)` adds
//         `.throttled_kind(Kind::new("throttled", Policy::from_strategy(Builtin::..)..))`,
//         or for a composed schedule, `sidekiq` or `buckets`
//         `static __BACKOFF_THROTTLED: Policy<Chain<..>> = ...;` and
//         `.throttled_kind(Kind::of("throttled", &__BACKOFF_THROTTLED))`:
//         the entry an `on(..)` arm builds (`kind_entry`).
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
    let (ty, ctor) = strategy_parts(p, strategy.map(|s| &*s.schedule));
    let main_jitter = match &args.jitter {
        Some(j) => jitter(p, &j.value),
        None => jitter(p, &default_jitter(strategy)),
    };
    let mut chain = quote!(#p::Policy::<#ty>::from_strategy(#ctor).jitter(#main_jitter));
    let (limit, stop) = stop_rule(args);
    chain.extend(attempts(limit));
    if let Some(stop) = stop {
        let d = duration(p, stop);
        chain.extend(quote!(.stop_at_delay(#d)));
    }
    if let Some(m) = &args.max_elapsed {
        let d = duration(p, m.value.value);
        chain.extend(quote!(.max_elapsed(#d)));
    }
    if let Some(m) = &args.retry_after_max {
        let d = duration(p, m.value.value);
        chain.extend(quote!(.retry_after_max(#d)));
    }
    if args.on_deadline.as_ref().is_some_and(|r| r.value) {
        chain.extend(quote!(.on_deadline(#p::OnDeadline::LastTry)));
    }
    if let Some(r) = &args.reset_after {
        let d = duration(p, r.value.value);
        chain.extend(quote!(.reset_after(#d)));
    }
    let mut throttled_static = TokenStream::new();
    if let Some(t) = &args.throttled {
        let t = &t.value;
        // `jitter` applies to both schedules; `decorrelated` is random by itself.
        let jitter = args
            .jitter
            .as_ref()
            .map(|j| &j.value)
            .filter(|_| t.strategy.kind != StrategyKind::Decorrelated);
        let policy = Ident::new("__BACKOFF_THROTTLED", Span::call_site());
        let limit = t.attempts.as_ref().map(|a| a.value);
        let (static_policy, kind) = kind_entry(p, "throttled", &policy, &t.strategy, jitter, limit);
        throttled_static = static_policy;
        chain.extend(quote!(.throttled_kind(#kind)));
    }
    chain.extend(kinds_setters(args));
    let kinds = kinds_static(args, p);
    quote! {
        #kinds
        #throttled_static
        static __BACKOFF_POLICY: #p::Origin<'static, #ty> = #p::Origin::new(&#chain, #clock);
    }
}

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
    let (ty, ctor) = strategy_parts(p, Some(&*strategy.schedule));
    let kind = strategy.kind;
    let j = jitter(
        p,
        &chosen.cloned().unwrap_or_else(|| strategy.default_jitter()),
    );
    let a = attempts(limit);
    if is_builtin(kind) {
        let variant = type_name(kind, "");
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

// Input:  the strategy, attempts, jitter and max_elapsed arguments (no
//         `policy = EXPR`, `throttled`, `retry_after_max`).
// Output: the runtime type naming that policy, whose constants `REF` (the
//         policy) and `ORIGIN` (with the loop's clock) the loop uses:
//         `Fixed<ExponentialOf<100000000>, false, 1, 5>` (the arguments
//         at their defaults left out; a jitter not given is `u64::MAX`,
//         the runtime's default for the strategy);
//         `None` for what it cannot name (then `policy_binding`'s `static`).
//
// A type of the runtime's, not a `static` of the function's: the function
// then has no item or body of its own to type-check and evaluate, and
// functions with the same arguments share one instance.
pub(super) fn fixed_policy(args: &RetryArgs, p: &Ident, is_async: bool) -> Option<TokenStream> {
    if args.policy.is_some()
        || args.throttled.is_some()
        || args.retry_after_max.is_some()
        || args.on_deadline.as_ref().is_some_and(|r| r.value)
        || args.reset_after.is_some()
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
        // (Random by themselves, uncapped by default, or composed: a
        // `static` of the function's builds them.)
        StrategyKind::Sidekiq
        | StrategyKind::Buckets
        | StrategyKind::Chain
        | StrategyKind::Steps
        | StrategyKind::Shorter
        | StrategyKind::Longer
        | StrategyKind::Sum => return None,
        StrategyKind::Immediate => quote!(#p::Immediate),
        StrategyKind::Exponential => {
            let base = given(Some(base.unwrap_or(defaults::BASE)))?;
            let factor = factor.map_or(unset.clone(), |f| Literal::u64_unsuffixed(f.to_bits()));
            let args = trimmed(vec![base, max, factor], 1, &unset);
            quote!(#p::ExponentialOf<#(#args),*>)
        }
        other => {
            if factor.is_some() {
                return None;
            }
            let default = defaults::base(other);
            let name = type_name(other, "Of");
            let base = given(Some(base.unwrap_or(default)))?;
            let args = trimmed(vec![base, max], 1, &unset);
            quote!(#p::#name<#(#args),*>)
        }
    };
    // Not given: `UNSET`, the runtime's default for the strategy.
    let jitter = match args.jitter.as_ref().map(|j| &j.value) {
        None => u64::MAX,
        Some(JitterKind::None) => 0,
        Some(JitterKind::Full) => 1,
        Some(JitterKind::Equal) => 2,
        Some(JitterKind::Spread) => 3,
        Some(JitterKind::Scattered(r)) => Some(r.to_bits()).filter(|&b| b > 3)?,
        Some(JitterKind::Range(..) | JitterKind::Custom(_)) => return None,
    };
    let jitter = Literal::u64_unsuffixed(jitter);
    let (limit, stop) = stop_rule(args);
    if stop.is_some() {
        return None;
    }
    let attempts = match limit {
        None => unset.clone(),
        Some(Attempts::Unlimited) => Literal::u64_unsuffixed(0),
        Some(Attempts::Limited(0)) => return None,
        Some(Attempts::Limited(n)) => Literal::u64_unsuffixed(n.min(u64::from(u32::MAX))),
    };
    let elapsed = given(args.max_elapsed.as_ref().map(|m| m.value.value))?;
    let is_async = Ident::new(if is_async { "true" } else { "false" }, Span::call_site());
    // The arguments after `ASYNC` that are not at the runtime's defaults.
    let mut rest = vec![jitter, attempts, elapsed];
    while let Some(last) = rest.last() {
        if last.to_string() != unset.to_string() {
            break;
        }
        rest.pop();
    }
    Some(quote!(#p::Fixed<#strategy, #is_async #(, #rest)*>))
}

/// `args` without the trailing ones equal to `unset` past the first
/// `keep` (a const generic argument at its default).
fn trimmed(mut args: Vec<Literal>, keep: usize, unset: &Literal) -> Vec<Literal> {
    while args.len() > keep
        && args
            .last()
            .is_some_and(|a| a.to_string() == unset.to_string())
    {
        args.pop();
    }
    args
}

// Input:  a strategy argument (default: exponential), composed or not.
// Output: its runtime type and a const expression building it, such as
//         `Exponential` and `Exponential::new(base).factor(f).max_delay(max)`,
//         or `Chain<Exponential, Constant>` and `Chain::new(.., 3, ..)`;
//         what is not given keeps the runtime's default.
pub(super) fn strategy_parts(p: &Ident, strategy: Option<&Strategy>) -> (TokenStream, TokenStream) {
    let kind = strategy.map_or(StrategyKind::Exponential, |s| s.kind);
    if let Some(s) = strategy
        && (kind.takes_stages() || kind == StrategyKind::Steps)
    {
        return composed_parts(p, s);
    }
    let default = defaults::base(kind);
    let ty = type_name(kind, "");
    match kind {
        StrategyKind::Sidekiq | StrategyKind::Buckets => {
            let unit = strategy
                .and_then(|s| s.base.as_ref())
                .map_or(defaults::UNIT, |b| b.value);
            let u = duration(p, unit);
            let mut ctor = quote!(#p::#ty::new().unit(#u));
            ctor.extend(strategy_setters(p, strategy));
            return (quote!(#p::#ty), ctor);
        }
        StrategyKind::Immediate => return (quote!(#p::#ty), quote!(#p::#ty)),
        _ => {}
    }
    let base = strategy
        .and_then(|s| s.base.as_ref())
        .map_or(default, |b| b.value);
    let b = duration(p, base);
    let mut ctor = quote!(#p::#ty::new(#b));
    ctor.extend(strategy_setters(p, strategy));
    // A `constant` stage's `max` is its delay: the composed `max` (and
    // what jitter may reach) is then its delay, not unbounded.
    if kind == StrategyKind::Constant && strategy.is_some_and(|s| s.nested) {
        ctor.extend(quote!(.max_delay(#b)));
    }
    (quote!(#p::#ty), ctor)
}

// Input:  `chain(..)`, `steps(..)`, `shorter(..)`, `longer(..)` or `sum(..)`.
// Output: the runtime's composed type and its const constructor; more than
//         two stages nest to the right: `Chain::new(a, 2, Chain::new(b, 3, c))`.
fn composed_parts(p: &Ident, s: &Strategy) -> (TokenStream, TokenStream) {
    if s.kind == StrategyKind::Steps {
        let delays = s.steps.iter().map(|d| duration(p, d.value));
        return (quote!(#p::Steps), quote!(#p::Steps::new(&[#(#delays),*])));
    }
    let form = type_name(s.kind, "");
    let mut stages = s.stages.iter().rev();
    let Some(last) = stages.next() else {
        // (Refused when parsed: at least two stages.)
        return strategy_parts(p, None);
    };
    let (mut ty, mut ctor) = strategy_parts(p, Some(last));
    let chain = s.kind == StrategyKind::Chain;
    if !chain {
        (ty, ctor) = side(p, last, (ty, ctor));
    }
    for stage in stages {
        let (mut stage_ty, mut stage_ctor) = strategy_parts(p, Some(stage));
        ctor = match (chain, &stage.lasting) {
            (true, Some(lasting)) => {
                let d = duration(p, lasting.value);
                quote!(#p::#form::lasting(#stage_ctor, #d, #ctor))
            }
            (true, None) => {
                let times = stage.times.as_ref().map_or(0, |t| t.value);
                let times = Literal::u32_suffixed(u32::try_from(times).unwrap_or(u32::MAX));
                quote!(#p::#form::new(#stage_ctor, #times, #ctor))
            }
            (false, _) => {
                (stage_ty, stage_ctor) = side(p, stage, (stage_ty, stage_ctor));
                quote!(#p::#form::new(#stage_ctor, #ctor))
            }
        };
        ty = quote!(#p::#form<#stage_ty, #ty>);
    }
    (ty, ctor)
}

// Input:  a side of `shorter`/`longer` and its type and constructor.
// Output: those of `Stage::times(side, n)` or `Stage::lasting(side, D)`
//         if it ends, else unchanged.
fn side(
    p: &Ident,
    s: &Strategy,
    (ty, ctor): (TokenStream, TokenStream),
) -> (TokenStream, TokenStream) {
    let ctor = match (&s.lasting, s.times.as_ref().map(|t| t.value)) {
        (Some(lasting), _) => {
            let d = duration(p, lasting.value);
            quote!(#p::Stage::lasting(#ctor, #d))
        }
        (None, Some(t)) => {
            let times = Literal::u32_suffixed(u32::try_from(t).unwrap_or(u32::MAX));
            quote!(#p::Stage::times(#ctor, #times))
        }
        (None, None) => return (ty, ctor),
    };
    (quote!(#p::Stage<#ty>), ctor)
}

/// The jitter of a strategy (default: exponential) when `jitter` is not
/// given.
pub(super) fn default_jitter(strategy: Option<&StrategyArg>) -> JitterKind {
    strategy.map_or(JitterKind::Full, StrategyArg::default_jitter)
}

/// `.factor(f)` and `.max_delay(max)`, as given.
fn strategy_setters(p: &Ident, strategy: Option<&Strategy>) -> TokenStream {
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

/// The attempt limit, and the delay of a run-time `stop_at_delay`: for a
/// schedule without randomness, the rule is an attempt count computed
/// here (the smaller of it and `attempts`); for a random one, a run-time
/// check beside `attempts`, unlimited unless given.
fn stop_rule(args: &RetryArgs) -> (Option<Attempts>, Option<Duration>) {
    let given = args.attempts.as_ref().map(|a| a.value);
    // (Beside `on(..)`, it applies to each arm: `kinds_static`.)
    let stop = args.stop_at_delay.as_ref().filter(|_| args.on.is_empty());
    backoff_schedule::macro_support::stop_rule(
        args.strategy.as_ref().map(|s| &*s.schedule),
        given,
        stop.map(|s| s.value.value),
    )
}

/// The runtime's name for `kind` followed by `suffix`: its strategy type
/// (`Exponential`, `Chain`; also the `Builtin` variant of a plain one) or
/// with `"Of"` its `Fixed` strategy (`LinearOf`).
fn type_name(kind: StrategyKind, suffix: &str) -> Ident {
    let name = kind.name();
    let name = format!("{}{}{suffix}", name[..1].to_uppercase(), &name[1..]);
    Ident::new(&name, Span::call_site())
}

/// A jitter as a const expression.
pub(super) fn jitter(p: &Ident, kind: &JitterKind) -> TokenStream {
    match *kind {
        JitterKind::None => quote!(#p::Jitter::None),
        JitterKind::Full => quote!(#p::Jitter::Full),
        JitterKind::Equal => quote!(#p::Jitter::Equal),
        JitterKind::Spread => quote!(#p::Jitter::Spread),
        JitterKind::Scattered(r) => {
            let r = Literal::f64_suffixed(r);
            quote!(#p::Jitter::Scattered(#r))
        }
        JitterKind::Range(lo, hi) => {
            // (`f32` in the runtime, no wider than its other variants;
            // `valid` checked both fit. `+ 0.0` writes `-0` as `0`.)
            #[allow(clippy::cast_possible_truncation)]
            let (lo, hi) = (
                Literal::f32_suffixed(lo as f32 + 0.0),
                Literal::f32_suffixed(hi as f32 + 0.0),
            );
            quote!(#p::Jitter::Range(#lo, #hi))
        }
        // (Spanned on the name: a value that is no `Jitterer` is an error
        // there.)
        JitterKind::Custom(ref path) => {
            let path = &path.0;
            quote_spanned!(syn::spanned::Spanned::span(path)=> #p::Jitter::Custom(&#path))
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
