//! The names the loop's emitters share: the runtime's path, the return
//! type and the spans errors about it are reported at, the policy, the
//! retry state's slot and what the first failure builds it from.

use proc_macro2::{Span, TokenStream};
use quote::{quote, quote_spanned};
use syn::ext::IdentExt;
use syn::spanned::Spanned;
use syn::{Ident, Signature, Type};

use super::params::inferred;
use super::policy;
use crate::attr::RetryArgs;

// Names of locals. Those holding a user's value (`when`, `on_retry`,
// `sleep`) carry its span wherever they appear, declaration included, so
// type errors point at the argument (once) and the names resolve even when
// the argument came through a `macro_rules!`. The loop's own locals resolve
// at the call site: inside a `quote_spanned!` they are named with `local`,
// whose idents only take the user's position.

/// A local of the loop's own, at the position of `at`.
pub(super) fn local(name: &str, at: Span) -> Ident {
    Ident::new(name, Span::call_site().located_at(at))
}

/// A local holding a user's value, at (and resolved at) `at`.
pub(super) fn user(name: &str, at: Span) -> Ident {
    Ident::new(name, at)
}

/// The runtime's path at the user's tokens, for the checks of their values:
/// a call spanned there in full is reported there (once), not on the whole
/// attribute.
pub(super) fn p_at(at: Span) -> Ident {
    user("__backoff_private", at)
}

/// The `<` opening `<_ as Parameter<..>>::pass(..)`, at the argument's
/// name: the path then starts elsewhere than the value it is reported on,
/// which keeps rustc from suggesting `&` before the user's function when it
/// takes a parameter by value.
pub(super) fn lt_at(at: Span) -> TokenStream {
    quote_spanned!(at=> <)
}

/// What every emitter of the loop reads.
pub(super) struct Names<'a> {
    pub(super) args: &'a RetryArgs,
    pub(super) sig: &'a Signature,
    /// The body's type, `impl Trait` written `_`.
    pub(super) ret: Type,
    pub(super) is_async: bool,
    /// The runtime's hidden module, imported as `__backoff_private`. (An
    /// `Ident`, not a `TokenStream`: interpolated hundreds of times, a
    /// single token is the cheapest to copy.)
    pub(super) p: Ident,
    /// The return type's first token: every use of the return type as a
    /// `Result` is spanned there alone, so that a non-`Result` is reported
    /// once, there.
    pub(super) ret_span: Span,
    /// The runtime's path at `ret_span`.
    pub(super) pr: Ident,
    /// `__backoff_value`, at `ret_span`.
    pub(super) value: Ident,
    /// With `policy = EXPR`, that expression's span (a wrong type is
    /// reported once, there); else the call site.
    pub(super) start_span: Span,
    /// The loop's clock, `SYNC_CLOCK` or `ASYNC_CLOCK`.
    pub(super) clock: TokenStream,
    /// The runtime type naming the policy, when the attribute can name it.
    pub(super) fixed: Option<TokenStream>,
    /// Whether the loop keeps a `Carried` rather than a `RetryState`.
    pub(super) carried: bool,
    /// The policy, a `&Policy<S>`.
    pub(super) policy_ref: TokenStream,
    /// `let __backoff_started = ..;`, if the call's start time is read.
    pub(super) started: TokenStream,
    /// Whether the policy is all there is to start the state from.
    pub(super) constant_start: bool,
    /// Whether a hook reads the time (`on_retry`, `on_giveup`).
    pub(super) timed: bool,
    /// What the first failure builds the state from: a `&Origin`.
    pub(super) start_ref: TokenStream,
}

impl<'a> Names<'a> {
    // Input:  the arguments, the signature and the body's type `R`.
    // Output: the names above; nothing is emitted yet.
    pub(super) fn new(args: &'a RetryArgs, sig: &'a Signature, ret: &Type, is_async: bool) -> Self {
        // Inside the function, `impl Trait` in the return type is written `_`
        // and a named lifetime `'_`.
        let ret = inferred(ret);
        let p = Ident::new("__backoff_private", Span::call_site());
        // The type is inferred rather than written (`<R as RetryResult>`
        // would add an error on the whole type), and the outcome is split
        // through a binding of that span.
        let ret_span = ret.span();
        let pr = p_at(ret_span);
        let start_span = args
            .policy
            .as_ref()
            .map_or_else(Span::call_site, |p| p.span);
        let clock = if is_async {
            quote!(#p::ASYNC_CLOCK)
        } else {
            quote!(#p::SYNC_CLOCK)
        };
        // The policy: a type of the runtime's naming it, or a `static` the
        // attribute builds, or `policy = EXPR`'s value.
        let fixed = policy::fixed_policy(args, &p, is_async);
        // An `async fn` whose policy is such a type, and that names nothing
        // else the state keeps (a hook, a budget, a breaker, a context, a
        // deadline), keeps a `Carried` between attempts rather than a whole
        // `RetryState`: its future is smaller by the difference.
        let carried = is_async
            && fixed.is_some()
            && args.policy.is_none()
            && args.max_elapsed.is_none()
            && args.timeout.is_none()
            && keeps_no_state_but_when(args);
        // The call's start is read if `elapsed` may be reported.
        let timed = args.on_retry.is_some()
            || args.on_giveup.is_some()
            || args.on_success.is_some()
            || (is_async && args.timeout.is_some());
        // Only what the loop needs after an attempt is kept in locals,
        // since an `async fn` stores those in its future.
        let policy_ref = if let Some(policy) = &args.policy {
            // At the expression: a value of the wrong type is reported
            // there, once (rustc merges the same error at the same place).
            let name = local("__backoff_policy", policy.span);
            quote!(#name)
        } else {
            match &fixed {
                Some(fixed) => quote!(<#fixed>::REF),
                None => quote!(__BACKOFF_POLICY.policy),
            }
        };
        // The call's start time, read now, only if something may need it:
        // an `on_retry` or `on_giveup` (`elapsed`) or a deadline
        // (`max_elapsed`, or any `policy = EXPR`).
        let needs_start = timed
            || args.max_elapsed.is_some()
            || args.policy.is_some()
            || args.reset_after.is_some();
        let (started, started_value) = if needs_start {
            (
                {
                    let checked = quote_spanned! {start_span=>
                        #p::began(#policy_ref, #clock, #timed)
                    };
                    quote!(let __backoff_started = #checked;)
                },
                quote!(__backoff_started),
            )
        } else {
            (TokenStream::new(), quote!(::core::option::Option::None))
        };
        // What the failure path's step builds the state from, on the first
        // failure: the policy type's `ORIGIN` or the `static` when it holds
        // all of it (a policy the attribute built, no start time, no
        // budget), else one made there.
        let constant_start = args.policy.is_none() && !needs_start && args.budget.is_none();
        let start_ref = if constant_start {
            match &fixed {
                Some(fixed) => quote!(&<#fixed>::ORIGIN),
                None => quote!(&__BACKOFF_POLICY),
            }
        } else {
            let budget = if args.budget.is_some() {
                quote!(::core::option::Option::Some(__backoff_budget))
            } else {
                quote!(::core::option::Option::None)
            };
            quote_spanned! {start_span=>
                &#p::Origin::at(#policy_ref, #clock, #started_value, #budget)
            }
        };
        Names {
            args,
            sig,
            is_async,
            p,
            ret_span,
            pr,
            value: local("__backoff_value", ret_span),
            start_span,
            clock,
            fixed,
            carried,
            policy_ref,
            started,
            constant_start,
            timed,
            start_ref,
            ret,
        }
    }

    /// The function's name, for `tracing`.
    pub(super) fn name(&self) -> String {
        self.sig.ident.to_string()
    }

    /// The call's name for the metrics (attribute `function`):
    /// `concat!(module_path!(), "::name")`, fixed at compile time.
    pub(super) fn function(&self) -> TokenStream {
        let name = format!("::{}", self.sig.ident.unraw());
        quote!(::core::concat!(::core::module_path!(), #name))
    }

    /// `let mut __backoff_recording = Recording::begin(function, clock);`,
    /// for every loop (a hedged call's).
    pub(super) fn begin_full_recording(&self) -> TokenStream {
        let (p, clock, function) = (&self.p, &self.clock, self.function());
        quote!(let mut __backoff_recording = #p::Recording::begin(#function, #clock);)
    }

    /// `tracer!(name, kind: &var)`, the `tracing` glue after an attempt
    /// whose outcome (`kind` `result`) or error (`error`) is in the local
    /// `var`: at the return type, where a type that is not a `Result` is
    /// reported, so that the feature adds no second report of it.
    pub(super) fn tracer(&self, kind: &str, var: &str) -> TokenStream {
        let (pr, name, at) = (&self.pr, self.name(), self.ret_span);
        let (kind, var) = (Ident::new(kind, at), local(var, at));
        quote_spanned! {at=> #pr::tracer!(#name, #kind: &#var) }
    }

    /// `ErrorOf<R>`, at the return type.
    pub(super) fn error_of(&self) -> TokenStream {
        let (pr, ret) = (&self.pr, &self.ret);
        quote_spanned! {self.ret_span=> #pr::ErrorOf<#ret> }
    }

    /// `OkOf<R>`, at the return type.
    pub(super) fn ok_of(&self) -> TokenStream {
        let (pr, ret) = (&self.pr, &self.ret);
        quote_spanned! {self.ret_span=> #pr::OkOf<#ret> }
    }

    // The types a closure's parameters are given, at the return type's
    // tokens (a return type that is not a `Result` is reported there).

    /// `&E`.
    pub(super) fn error_ty(&self) -> TokenStream {
        let error_of = self.error_of();
        quote_spanned! {self.ret_span=> &#error_of }
    }

    /// Splits `__backoff_outcome` into a `Result`, through a binding of
    /// `ret_span` (which a return type that is not a `Result` is then
    /// reported at, once).
    pub(super) fn split(&self) -> TokenStream {
        let (pr, ret_span) = (&self.pr, self.ret_span);
        let outcome = local("__backoff_outcome", ret_span);
        let whole = user("__backoff_whole", ret_span);
        quote_spanned! {ret_span=>
            {
                let #whole = #outcome;
                #pr::RetryResult::into_result(#whole)
            }
        }
    }

    /// `RetryResult::from_result`, at `ret_span`.
    pub(super) fn rebuild_fn(&self) -> TokenStream {
        let pr = &self.pr;
        quote_spanned! {self.ret_span=> #pr::RetryResult::from_result }
    }

    /// `&T`.
    pub(super) fn ok_ty(&self) -> TokenStream {
        let ok_of = self.ok_of();
        quote_spanned! {self.ret_span=> &#ok_of }
    }

    /// `&Result<T, E>`: for a return type written `..Result<..>`, `&R`, as
    /// the user wrote it (`RetryResult` is implemented for `Result` alone),
    /// so that a closure's parameter type is no more complex than the
    /// signature (`clippy::type_complexity` counted `OkOf<..>` and
    /// `ErrorOf<..>` around it); else `&Result<OkOf<R>, ErrorOf<R>>`, which
    /// a return type that is not a `Result` fails at its first token only.
    pub(super) fn outcome_ty(&self) -> TokenStream {
        let ret = &self.ret;
        let written_result = matches!(ret, Type::Path(path)
            if path.qself.is_none()
                && path.path.segments.last().is_some_and(|s| s.ident == "Result"));
        if written_result {
            return quote_spanned! {self.ret_span=> &#ret };
        }
        let (pr, ok_of, error_of) = (&self.pr, self.ok_of(), self.error_of());
        quote_spanned! {self.ret_span=> &#pr::Result<#ok_of, #error_of> }
    }
}

/// [`keeps_no_state`], but for a `when` (a verdict the compact loop takes
/// before it hands the outcome to the runtime).
pub(super) fn keeps_no_state_but_when(args: &RetryArgs) -> bool {
    args.when_ok.is_none()
        && args.on_retry.is_none()
        && args.on_giveup.is_none()
        && args.fallback.is_none()
        && args.budget.is_none()
        && args.circuit.is_none()
        && args.throttle.is_none()
        && args.context.is_none()
        && args.on_success.is_none()
}

/// Whether the loop keeps nothing for the arguments but the policy: no
/// hook, budget, breaker, throttle or context.
pub(super) fn keeps_no_state(args: &RetryArgs) -> bool {
    args.when.is_none() && keeps_no_state_but_when(args)
}
