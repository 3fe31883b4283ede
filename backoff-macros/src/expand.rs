//! Code generation: the function's body becomes a loop over the runtime's
//! state machine (`RetryState`); the runtime owns every decision.

use proc_macro2::{Delimiter, Group, Span, TokenStream};
use quote::{ToTokens, quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{AttrStyle, Block, Expr, Ident, Pat, Signature, Stmt, Type};

mod failure;
mod function;
mod hooks;
mod lean;
mod policy;
mod shapes;

use crate::attr::RetryArgs;
use crate::errors::Errors;
use crate::valid;
use failure::{CarriedParts, FailureParts, carried_failure, failure};
use function::{Function, async_trait_body_mut, parse_function};
use hooks::typed_closure;
use lean::{LeanParts, lean_blocking};
use policy::{duration, policy_binding};
use shapes::{Reborrow, cloned_mutability, inferred, reborrowed, rename_self};

/// The attribute's whole work, on `proc_macro2` tokens so it can be tested
/// and fuzzed outside the compiler.
///
/// Input: the attribute's arguments and the item it is on.
/// Output: the rewritten function; or, on any mistake, the item unchanged
/// followed by one `compile_error!` per mistake.
pub(crate) fn retry(args: TokenStream, item: TokenStream) -> TokenStream {
    let mut errors = Errors::default();
    let args = RetryArgs::parse(args, &mut errors);
    valid::check_args(&args, &mut errors);
    let func = match parse_function(&item) {
        Ok(func) => Some(func),
        Err(e) => {
            errors.push(e);
            None
        }
    };
    // Whether `#[tracing::instrument]` has rewritten an `async fn`'s body,
    // which then moves the arguments (scanned once, on the body as written).
    let moves_arguments = func.as_ref().is_some_and(|f| {
        f.sig.asyncness.is_some() && shapes::instrumented(f.block.to_token_stream())
    });
    if let Some(func) = &func {
        valid::check_signature(&func.sig, func.is_async(), &args, &mut errors);
        valid::check_attributes(&func.attrs, &mut errors);
        if func.sig.asyncness.is_some() && moves_arguments {
            valid::check_instrumented(&func.sig, &mut errors);
        }
    }
    match (errors.finish(), func) {
        (Ok(()), Some(func)) => rewrite(&args, func, moves_arguments),
        // (No function means an error was recorded.)
        (result, _) => {
            let errors = result.err().map(|e| e.to_compile_error());
            quote!(#item #errors)
        }
    }
}

// Input:  #[attrs] vis fn name(args) -> R { body }
// Output: #[attrs] vis fn name(args) -> R {
//             static POLICY: Policy<Exponential> = ...; let mut slot = None;   // state: on the first failure
//             loop {
//                 let outcome: R = attempt(|| body);           // or async { body }.await
//                 let delay = {
//                     let e = match outcome { Ok(v) => return Ok(v), Err(e) => e };
//                     match next_delay(&mut slot, || start_at(&POLICY, ..), || when(&e)) {  // out of line
//                         Some(delay) => { on_retry(&e, &event); delay }
//                         None => return Err(e),
//                     }
//                 };
//                 sleep(delay);                                // or sleep(delay).await
//             }
//         }
fn rewrite(args: &RetryArgs, func: Function, moves_arguments: bool) -> TokenStream {
    // `valid::check_signature` reports a missing return type; `()` keeps the
    // rewrite total.
    let ret: Type = match func.body_type() {
        // A bare trait object (`-> Trait + Send`, an error of its own) is
        // only a type in some positions; parenthesized, it is one in all
        // those the loop uses, and rustc reports the real mistake.
        Some(ty @ Type::TraitObject(_)) => Type::Verbatim(quote!((#ty))),
        Some(ty) => ty,
        None => Type::Verbatim(quote!(())),
    };
    let is_async = func.is_async();
    let Function {
        attrs,
        vis,
        mut sig,
        mut block,
    } = func;
    let (outer, inner): (Vec<_>, Vec<_>) = attrs
        .into_iter()
        .partition(|a| matches!(a.style, AttrStyle::Outer));
    // The function's braces keep the user's span, so the item is the
    // user's: lints on it (`missing_docs`, `clippy::missing_safety_doc`, ..)
    // fire as they would without `#[retry]`.
    let braces = block.brace_token.span.join();
    let braced = |stmts: TokenStream| {
        let mut group = Group::new(Delimiter::Brace, stmts);
        group.set_span(braces);
        group
    };
    if sig.asyncness.is_none()
        && let Some(body) = async_trait_body_mut(&mut block)
    {
        // `#[async_trait]` ran first: retry the body inside its future
        // (whose bindings of the parameters are its own: no reborrows).
        let retry_loop = retry_loop(args, &sig, &ret, true, body, &[], &[]);
        // The loop's statements, verbatim: nothing to re-parse, nothing
        // that could fail.
        body.stmts = vec![Stmt::Expr(Expr::Verbatim(retry_loop), None)];
        let stmts = &block.stmts;
        let body = braced(quote!(#(#inner)* #(#stmts)*));
        return quote! {
            #(#outer)*
            #vis #sig #body
        };
    }
    // (A body `#[tracing::instrument]` has rewritten moves every argument
    // into a future of its own: each attempt must give it a reborrow.)
    let reborrows = reborrowed(&mut sig, moves_arguments);
    let cloned_mut = cloned_mutability(args, &mut sig);
    let retry_loop = retry_loop(args, &sig, &ret, is_async, &block, &reborrows, &cloned_mut);
    let body = braced(quote!(#(#inner)* #retry_loop));
    quote! {
        #(#outer)*
        #vis #sig #body
    }
}

// Input:  the arguments, the signature, the body's type `R` and the body.
// Output: the statements that run the body in a loop over `RetryState`.
fn retry_loop(
    args: &RetryArgs,
    sig: &Signature,
    ret: &Type,
    is_async: bool,
    block: &Block,
    reborrows: &[Reborrow],
    cloned_mut: &[Ident],
) -> TokenStream {
    // Inside the function, `impl Trait` in the return type is written `_`.
    let ret = &inferred(ret);
    let krate = args
        .krate
        .as_ref()
        .map_or_else(|| quote!(::backoff_runtime), |k| k.value.to_token_stream());
    // One import of the runtime, so a wrong `crate = "..."` is reported once.
    let import = quote!(use #krate::__private as __backoff_private;);
    // (An `Ident`, not a `TokenStream`: interpolated hundreds of times, a
    // single token is the cheapest to copy.)
    let p = Ident::new("__backoff_private", Span::call_site());
    // Names of locals. Those holding a user's value (`when`, `on_retry`,
    // `sleep`) carry its span wherever they appear, declaration included, so
    // type errors point at the argument (once) and the names resolve even
    // when the argument came through a `macro_rules!`. The loop's own locals
    // resolve at the call site: inside a `quote_spanned!` they are named with
    // `local`, whose idents only take the user's position.
    let local = |name: &str, at: Span| Ident::new(name, Span::call_site().located_at(at));
    let user = |name: &str, at: Span| Ident::new(name, at);
    // The runtime's path at the user's tokens, for the checks of their
    // values: a call spanned there in full is reported there (once), not
    // on the whole attribute.
    let p_at = |at: Span| user("__backoff_private", at);
    // The `<` opening `<_ as Parameter<..>>::pass(..)`, at the argument's
    // name: the path then starts elsewhere than the value it is reported
    // on, which keeps rustc from suggesting `&` before the user's function
    // when it takes a parameter by value.
    let lt_at = |at: Span| quote_spanned!(at=> <);
    // Every use of the return type as a `Result` is spanned on its first
    // token alone, so that a non-`Result` is reported once, there: the type
    // is inferred rather than written (`<R as RetryResult>` would add an
    // error on the whole type), and the outcome is split through a binding
    // of that span.
    let ret_span = ret.span();
    let pr = p_at(ret_span);
    let outcome = local("__backoff_outcome", ret_span);
    let value = local("__backoff_value", ret_span);
    let whole = user("__backoff_whole", ret_span);
    let split = quote_spanned! {ret_span=>
        {
            let #whole = #outcome;
            #pr::RetryResult::into_result(#whole)
        }
    };
    let from_result = quote_spanned! {ret_span=> #pr::RetryResult::from_result };
    let result = local("__backoff_result", ret_span);
    // With `policy = EXPR`, a wrong type is reported once, at EXPR.
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
        && keeps_no_state(args);
    // The retry state's slot as a place: `__backoff_slot`, behind a
    // `ManuallyDrop` unless a breaker is named (see `start`).
    let slot = if args.circuit.is_some() || carried {
        quote!(__backoff_slot)
    } else {
        quote!((*__backoff_slot))
    };
    let policy = if fixed.is_some() {
        TokenStream::new()
    } else {
        policy_binding(args, &p, &clock)
    };
    // The call's start is read if `elapsed` may be reported.
    let timed = args.on_retry.is_some() || args.on_giveup.is_some();
    // The policy: the `static` the attribute built, or `policy = EXPR`'s
    // value. Only what the loop needs after an attempt is kept in locals,
    // since an `async fn` stores those in its future.
    let policy_ref = if let Some(policy) = &args.policy {
        // At the expression: a value of the wrong type is reported there,
        // once (rustc merges the same error at the same place).
        let name = local("__backoff_policy", policy.span);
        quote!(#name)
    } else {
        match &fixed {
            Some(fixed) => quote!(<#fixed>::REF),
            None => quote!(__BACKOFF_POLICY.policy),
        }
    };
    // The call's start time, read now, only if something may need it: an
    // `on_retry` or `on_giveup` (`elapsed`) or a deadline (`max_elapsed`,
    // or any `policy = EXPR`).
    let needs_start = timed || args.max_elapsed.is_some() || args.policy.is_some();
    let (started, started_value) = if needs_start {
        (
            {
                let checked = quote_spanned! {start_span=>
                    #p::started(#policy_ref, #clock, #timed)
                };
                quote!(let __backoff_started = #checked;)
            },
            quote!(__backoff_started),
        )
    } else {
        (TokenStream::new(), quote!(::core::option::Option::None))
    };
    // What the failure path's step builds the state from, on the first
    // failure: the policy type's `START` or the `static` when it holds all
    // of it (a policy the attribute built, no start time, no budget), else
    // one made there.
    let constant_start = args.policy.is_none() && !needs_start && args.budget.is_none();
    let start_ref = if constant_start {
        match &fixed {
            Some(fixed) => quote!(&<#fixed>::START),
            None => quote!(&__BACKOFF_POLICY),
        }
    } else {
        let budget = if args.budget.is_some() {
            quote!(::core::option::Option::Some(__backoff_budget))
        } else {
            quote!(::core::option::Option::None)
        };
        quote_spanned! {start_span=>
            &#p::Start::at(#policy_ref, #clock, #started_value, #budget)
        }
    };
    // What each attempt starts with: its `context`, its reborrows of the
    // `&mut` parameters, its clones of the `clone(..)` parameters.
    let mut prologue = TokenStream::new();
    // `context = ctx`: the attempt's number and whether it is the last,
    // computed before the attempt (no clock, no allocation).
    let context_value = args.context.as_ref().map(|ctx| {
        let name = &ctx.value;
        let ty = quote_spanned! {ctx.span=> #p::AttemptContext };
        prologue.extend(quote!(let #name: #ty = __backoff_context;));
        quote! {
            let __backoff_context = #p::AttemptContext::of(#policy_ref, #p::attempt_number(&#slot));
        }
    });
    for Reborrow { mutability, name } in reborrows {
        prologue.extend(quote!(let #mutability #name = &mut *#name;));
    }
    let block_open = block.brace_token.span.open();
    let braces = block.brace_token.span.join();
    // The body's statements, to put in the user's braces after what the
    // attempt starts with (one block: no `unused_braces` on a nested one).
    // Items the body starts with (`use std::fmt::Write;`) stay first, so
    // `clippy::items_after_statements` sees the body as written.
    let leading = block
        .stmts
        .iter()
        .take_while(|stmt| matches!(stmt, Stmt::Item(_)))
        .count();
    let mut items = TokenStream::new();
    for stmt in &block.stmts[..leading] {
        stmt.to_tokens(&mut items);
    }
    let mut stmts = TokenStream::new();
    for stmt in &block.stmts[leading..] {
        stmt.to_tokens(&mut stmts);
    }
    for name in args.clone.iter().flat_map(|c| &c.value) {
        // Spanned on the name in `clone(..)`: a type that is not `Clone` is
        // reported there.
        let cloned = quote_spanned! {name.span()=> ::core::clone::Clone::clone(&#name) };
        if name == "self" {
            let renamed = Ident::new("__backoff_self", name.span());
            let mutability = cloned_mut.iter().any(|m| m == "self").then(|| quote!(mut));
            prologue.extend(quote!(let #mutability #renamed = #cloned;));
            stmts = rename_self(stmts);
        } else {
            // The clone takes the parameter's name and span: the body's uses
            // resolve to it.
            let param = sig
                .inputs
                .iter()
                .find_map(|input| match input {
                    syn::FnArg::Typed(t) => match &*t.pat {
                        Pat::Ident(p) if p.ident == *name => Some(p.ident.clone()),
                        _ => None,
                    },
                    syn::FnArg::Receiver(_) => None,
                })
                .unwrap_or_else(|| name.clone());
            let mutability = cloned_mut.contains(&param).then(|| quote!(mut));
            prologue.extend(quote!(let #mutability #param = #cloned;));
        }
    }
    let braced = |inner: TokenStream| {
        let mut group = Group::new(Delimiter::Brace, inner);
        group.set_span(braces);
        group
    };
    // The body, in the user's braces, built for the kind of function it is.
    let body = || braced(quote!(#items #prologue #stmts));
    // An async body's type is fixed before the body is checked (a `return`
    // never taken, as `async-trait` does): a `return` of the wrong type in
    // the body is then one error, at that `return`.
    let async_body = || {
        braced(quote! {
            #items
            if false {
                return #p::outcome_type::<#ret>();
            }
            #prologue
            #stmts
        })
    };
    // A plain fn whose arguments are all policy (no hook, no custom sleep,
    // no budget, breaker or context): the runtime runs the loop, with the
    // first attempt inline and the rest out of line (see `lean_blocking`).
    if !is_async && args.sleep.is_none() && keeps_no_state(args) {
        let (run, start) = match fixed.as_ref().filter(|_| constant_start) {
            Some(fixed) => (quote!(retry_blocking_fixed::<#fixed>), None),
            None => (quote!(retry_blocking), Some(quote!(#start_ref,))),
        };
        let looped = lean_blocking(
            &p,
            &LeanParts {
                name: sig.ident.to_string(),
                ret,
                body: body(),
                bars: quote_spanned!(block_open=> ||),
                run,
                start,
            },
        );
        return quote! {
            #import
            #policy
            #started
            #looped
        };
    }
    let attempt = match (&args.attempt_timeout, is_async) {
        (Some(t), true) => {
            let d = duration(&p, t.value.value);
            let (elapsed, pt) = (local("__backoff_elapsed", t.key), p_at(t.key));
            let from = quote_spanned! {t.key=>
                <#pt::ErrorOf<#ret> as #pt::FromElapsed>::from_elapsed(#elapsed)
            };
            let pk = p_at(t.key);
            let async_body_group = async_body();
            let timeout = quote_spanned! {t.key=>
                <#pk::DefaultSleep as #pk::AsyncTimeout>::timeout(#d, #p::attempt::<#ret, _>(async #async_body_group))
            };
            quote! {
                match #timeout.await {
                    #p::Result::Ok(__backoff_outcome) => __backoff_outcome,
                    #p::Result::Err(__backoff_elapsed) => {
                        #from_result(#p::Result::Err(#from))
                    }
                }
            }
        }
        (_, true) => {
            let asyncness = quote_spanned!(block_open=> async);
            let async_body = async_body();
            quote!(#p::attempt::<#ret, _>(#asyncness #async_body).await)
        }
        (_, false) => {
            // The closure starts where the body does, so it is the user's
            // code to the lints (`clippy::needless_return` in the body).
            let bars = quote_spanned!(block_open=> ||);
            let body = body();
            quote!(#p::attempt_sync::<#ret, _>(#bars #body))
        }
    };
    // What follows is the loop of the function's own: the hooks, the state,
    // the failure path.

    let give_up = quote_spanned! {ret_span=> #from_result(#result) };
    let succeed = quote_spanned! {ret_span=> #from_result(#p::Result::Ok(#value)) };
    let error_of = quote_spanned! {ret_span=> #pr::ErrorOf<#ret> };
    let ok_of = quote_spanned! {ret_span=> #pr::OkOf<#ret> };
    // The types a closure's parameters are given, at the return type's
    // tokens (a return type that is not a `Result` is reported there).
    // (Built only for the hooks that are given.)
    let error_ty = || quote_spanned! {ret_span=> &#error_of };
    let ok_ty = || quote_spanned! {ret_span=> &#ok_of };
    let outcome_ty = || quote_spanned! {ret_span=> &#pr::Result<#ok_of, #error_of> };
    // The verdict on an error, inside the failure path. Each hook is
    // evaluated where it is called, as in a loop written by hand (a closure
    // may use `self` and the `&mut` arguments the body uses too), and
    // called with each argument through a trait of its own, so that a
    // function of the wrong type is reported in the argument's terms.
    let decision = match &args.when {
        Some(w) => {
            let typed = typed_closure(&w.value, &[&error_ty()]);
            let when_l = user("__backoff_when", w.span);
            let (p, error, lt) = (p_at(w.span), local("__backoff_error", w.span), lt_at(w.key));
            let call = quote_spanned! {w.span=>
                #p::IntoDecision::into_decision(<_ as #p::WhenFn<_, _>>::call(
                    &mut #when_l,
                    #lt _ as #p::WhenParameter<_>>::pass(#error),
                ))
            };
            quote! {{
                let mut #when_l = #typed;
                #call
            }}
        }
        None => quote!(#p::Decision::Retry),
    };
    let call_on_retry = args.on_retry.as_ref().map(|o| {
        let first_ty = if args.when_ok.is_some() {
            outcome_ty()
        } else {
            error_ty()
        };
        let event_ty = quote!(&#p::RetryEvent);
        let typed = typed_closure(&o.value, &[&first_ty, &event_ty]);
        let on_retry_l = user("__backoff_on_retry", o.span);
        let [result, error, slot, delay] = [
            "__backoff_result",
            "__backoff_error",
            "__backoff_slot",
            "__backoff_delay",
        ]
        .map(|name| local(name, o.span));
        let slot_at = if args.circuit.is_some() {
            quote!(#slot)
        } else {
            quote!(*#slot)
        };
        let (p, lt) = (p_at(o.span), lt_at(o.key));
        let event = quote_spanned! {o.span=>
            #lt _ as #p::OnRetryEventParameter<_>>::pass(&#p::event_of(&#slot_at, #delay))
        };
        let first = if args.when_ok.is_some() {
            quote_spanned! {o.span=>
                #lt _ as #p::OnRetryOutcomeParameter<#ok_of, #error_of>>::pass(&#result)
            }
        } else {
            // Without `when_ok`, only errors are retried: `__backoff_error`
            // is the error, `&E`.
            quote_spanned! {o.span=>
                #lt _ as #p::OnRetryParameter<_>>::pass(#error)
            }
        };
        let call = quote_spanned! {o.span=>
            <_ as #p::OnRetryReturn>::done(<_ as #p::OnRetryFn<_, _, _>>::call(
                &mut #on_retry_l,
                #first,
                #event,
            ));
        };
        quote! {{
            let mut #on_retry_l = #typed;
            #call
        }}
    });
    // Calls `on_giveup` with `__backoff_result` and `__backoff_report`: an
    // `FnOnce`, evaluated on whichever path gives up, just before it
    // returns (so it may move a by-value argument the body does not move).
    let call_on_giveup = args.on_giveup.as_ref().map(|g| {
        let giveup_ty = quote!(&#p::GiveUp);
        let typed = typed_closure(&g.value, &[&outcome_ty(), &giveup_ty]);
        let [result, report, hook] = ["__backoff_result", "__backoff_report", "__backoff_hook"]
            .map(|name| local(name, g.span));
        let (p, lt) = (p_at(g.span), lt_at(g.key));
        let call = quote_spanned! {g.span=>
            <_ as #p::OnGiveupReturn>::done(<_ as #p::OnGiveupFn<_, _, _>>::call(
                #hook,
                #lt _ as #p::OnGiveupParameter<#ok_of, #error_of>>::pass(&#result),
                #lt _ as #p::OnGiveupRecordParameter<_>>::pass(&#report),
            ));
        };
        quote! {{
            let #hook = #typed;
            #call
        }}
    });
    // Under `timeout`, the loop is a future of its own, which a closure
    // moving a by-value argument would move into it, for good: there,
    // `on_giveup` is called after the future, from what the loop gave up
    // with (`__backoff_gave_up`), as on the timed-out path.
    let defer_giveup = is_async && args.timeout.is_some() && args.on_giveup.is_some();
    let call_on_giveup_in_loop = if defer_giveup {
        Some(quote! {
            __backoff_gave_up = ::core::option::Option::Some(__backoff_report);
        })
    } else {
        call_on_giveup.clone()
    };
    // Reports giving up with `__backoff_result` for `__backoff_report`.
    let report_give_up = || {
        let name = sig.ident.to_string();
        quote! {
            #p::traced_give_up! { #name, outcome: &__backoff_result, &__backoff_report }
            #call_on_giveup_in_loop
        }
    };
    let sleep_binding = args.sleep.as_ref().map(|s| {
        let expr = &s.value;
        let sleep_l = user("__backoff_sleep", s.span);
        quote!(let mut #sleep_l = #expr;)
    });
    // The default async sleep is the runtime's, whose poll is out of line:
    // it stays out of the function's own.
    let sleep_span = match (&args.sleep, sig.asyncness) {
        (Some(s), _) => s.span,
        (None, Some(a)) => a.span,
        (None, None) => Span::call_site(),
    };
    let (sleep_l, delay) = (
        user("__backoff_sleep", sleep_span),
        local("__backoff_delay", sleep_span),
    );
    // `sleep` is called with its argument, and its result checked, each
    // through a trait of its own (see `decision`).
    let sleep_call = |s: &crate::attr::Arg<Expr>| {
        let (p, lt) = (p_at(s.span), lt_at(s.key));
        let call = quote_spanned! {s.span=>
            <_ as #p::SleepFn<_, _>>::call(&mut #sleep_l, #lt _ as #p::SleepParameter>::pass(#delay))
        };
        (p, call)
    };
    let sleep = match (&args.sleep, is_async) {
        (Some(s), false) => {
            let (p, call) = sleep_call(s);
            quote_spanned! {s.span=>
                <_ as #p::BlockingSleepReturn>::done(#call);
            }
        }
        (Some(s), true) => {
            let (p, call) = sleep_call(s);
            quote_spanned! {s.span=>
                <_ as #p::AsyncSleepReturn<_>>::sleeping(#call).await;
            }
        }
        (None, false) => quote!(#p::sleep_blocking(__backoff_delay);),
        (None, true) => {
            let ps = p_at(sleep_span);
            let sleeping = quote_spanned! {sleep_span=>
                <#ps::DefaultSleep as #ps::AsyncSleep>::sleep(#delay)
            };
            quote! {
                // (Tested by value: a borrow of the delay would keep it in
                // the future across the sleep.)
                if #p::sleeps(__backoff_delay) {
                    #sleeping.await;
                }
            }
        }
    };
    // `budget` and `circuit`: evaluated once per call, before the first
    // attempt. A `static`'s path (by convention in capitals) must be one:
    // a `const` would be a fresh budget or breaker for every call.
    let shared = |arg: &Option<crate::attr::Arg<Expr>>, name: &str, trait_: &str, fun: &str| {
        arg.as_ref().map(|a| {
            let expr = &a.value;
            let local = Ident::new(&format!("__backoff_{name}"), Span::call_site());
            let value = Ident::new(&format!("__backoff_{name}_value"), a.span);
            let check = Ident::new(fun, a.span);
            let (pa, trait_) = (p_at(a.span), Ident::new(trait_, a.span));
            let borrowed = if names_a_static(expr) {
                // (A `const` here is a temporary, which rustc reports at
                // the name: "creates a temporary value", "requires that
                // borrow lasts for `'static`".)
                quote_spanned! {a.span=> #pa::must_be_static(&#expr) }
            } else {
                quote_spanned! {a.span=> &(#expr) }
            };
            let checked = quote_spanned! {a.span=> #pa::#trait_::#check(#value) };
            let bind = quote_spanned! {a.span=> let #value = #borrowed; };
            quote! {
                #bind
                let #local = #checked;
            }
        })
    };
    let budget_binding = shared(&args.budget, "budget", "AsBudget", "as_budget");
    let circuit_binding = shared(&args.circuit, "circuit", "AsCircuit", "as_circuit");
    let with_budget = args
        .budget
        .as_ref()
        .map(|_| quote!(.with_budget(__backoff_budget)));
    let with_circuit = args
        .circuit
        .as_ref()
        .map(|_| quote!(.with_circuit(__backoff_circuit)));
    // The state is built on the first failure, so a call that succeeds at
    // once builds nothing; a breaker needs it from the start (it admits
    // the first attempt). A budget is only spent on retries: a success
    // before any failure deposits into it directly.
    let eager = args.circuit.is_some();
    let make = || {
        quote_spanned! {start_span=>
            #p::start_at(#policy_ref, #clock, #started_value)
                #with_budget
                #with_circuit
        }
    };
    let slot_init = if eager {
        let make = make();
        quote!(::core::option::Option::Some(#make))
    } else {
        quote!(::core::option::Option::None)
    };
    // (The slot's type names the policy's strategy: with `policy = EXPR`,
    // spanned there too, so a wrong type is reported once.)
    //
    // The loop works on `__backoff_slot`, an `Option<RetryState>`. Without
    // a breaker the state holds nothing to release (its only `Drop`
    // part is a breaker's permit), so its slot is a `ManuallyDrop`: a call
    // that returns has no drop of the slot to run, and an `async fn`'s
    // future none to keep.
    let slot_name = local("__backoff_slot", start_span);
    let start = if carried {
        quote!(let mut #slot_name = #p::Carried::NEW;)
    } else if args.circuit.is_some() {
        quote_spanned! {start_span=>
            #started
            let mut #slot_name = #slot_init;
        }
    } else {
        quote_spanned! {start_span=>
            #started
            let mut #slot_name = ::core::mem::ManuallyDrop::new(#slot_init);
        }
    };
    // A refused call fails fast with `E::from(CircuitOpen)`.
    let before_attempt = args.circuit.as_ref().map(|c| {
        // On the argument's name: the mistake is the error type, not the
        // breaker.
        let (open, pc) = (local("__backoff_open", c.key), p_at(c.key));
        let from = quote_spanned! {c.key=>
            <#pc::ErrorOf<#ret> as #pc::FromCircuitOpen>::from_circuit_open(#open)
        };
        let (make_state, refused_give_up) = (make(), report_give_up());
        quote! {
            let __backoff_state = (#slot).get_or_insert_with(|| #make_state);
            if let #p::Result::Err(__backoff_open) = __backoff_state.before_attempt() {
                let __backoff_result = #p::Result::Err(#from);
                let __backoff_report = #p::report(__backoff_state);
                #refused_give_up
                return #from_result(__backoff_result);
            }
        }
    });
    let on_success = if eager {
        Some(quote! {
            if let ::core::option::Option::Some(__backoff_state) = &mut #slot {
                __backoff_state.on_success();
            }
        })
    } else {
        args.budget.as_ref().map(|_| {
            quote! {
                #p::succeeded_with_budget(&mut #slot, __backoff_budget);
            }
        })
    };
    // The outcome: an `Ok` is returned at once, unless `when_ok` rejects it.
    // Without `when_ok` the failure path holds the error, `__backoff_error`;
    // with it, the whole `Result`, `__backoff_result`.
    let outcome = || match &args.when_ok {
        None => quote! {
            let __backoff_error = match #split {
                #p::Result::Ok(__backoff_value) => {
                    #on_success
                    return #succeed;
                }
                // (Failing is the exception: `next_delay`, which the error
                // leads to, is `#[cold]`, so the success path stays straight.)
                #p::Result::Err(__backoff_error) => __backoff_error,
            };
        },
        Some(w) => {
            let typed = typed_closure(&w.value, &[&ok_ty()]);
            let when_ok_l = user("__backoff_when_ok", w.span);
            let (p, lt, value) = (p_at(w.span), lt_at(w.key), local("__backoff_value", w.span));
            let call = quote_spanned! {w.span=>
                <_ as #p::WhenOkReturn>::decision(<_ as #p::WhenOkFn<_, _>>::call(
                    &mut #when_ok_l,
                    #lt _ as #p::WhenOkParameter<_>>::pass(#value),
                ))
            };
            let decide_ok = quote! {{
                let mut #when_ok_l = #typed;
                #call
            }};
            quote! {
                let __backoff_result = #split;
                let __backoff_ok_decision = match &__backoff_result {
                    #p::Result::Ok(__backoff_value) => match #decide_ok {
                        #p::Decision::Stop => {
                            #on_success
                            return #from_result(__backoff_result);
                        }
                        __backoff_decision => __backoff_decision,
                    },
                    #p::Result::Err(_) => {
                        #p::cold();
                        #p::Decision::Stop
                    }
                };
            }
        }
    };

    let failed = match fixed.as_ref().filter(|_| carried) {
        Some(fixed) => carried_failure(
            &p,
            &CarriedParts {
                name: sig.ident.to_string(),
                fixed,
                slot: &slot,
                split: &split,
                from_result: &from_result,
                sleep: &sleep,
            },
        ),
        None => failure(
            &p,
            &FailureParts {
                name: sig.ident.to_string(),
                when_ok: args.when_ok.is_some(),
                slot: slot.clone(),
                outcome: outcome(),
                start: start_ref,
                // (Only a policy that is all there is to start from.)
                fixed: fixed.filter(|_| constant_start),
                decision,
                when: args.when.is_some(),
                call_on_retry,
                report_give_up: report_give_up(),
                call_on_giveup: call_on_giveup_in_loop.clone(),
                sleep,
                give_up,
            },
        ),
    };
    let count_call = args
        .timeout
        .as_ref()
        .map(|_| quote!(__backoff_calls = __backoff_calls.saturating_add(1);));
    let retry_loop = quote! {
        loop {
            #before_attempt
            #count_call
            #context_value
            // (The attempt is the function's body: `clippy::result_large_err`
            // is the function's to report, not the closure's too.)
            #[allow(clippy::result_large_err)]
            let __backoff_outcome: #ret = #attempt;
            #failed
        }
    };
    // `timeout`: the whole loop, sleeps and the attempt in flight included,
    // under one timer; when it fires, the call ends with `E::from(Elapsed)`.
    let retry_loop = match (&args.timeout, is_async) {
        (Some(t), true) => {
            let name = sig.ident.to_string();
            let timed_out_give_up = quote! {
                #p::traced_give_up! { #name, outcome: &__backoff_result, &__backoff_report }
                #call_on_giveup
            };
            let d = duration(&p, t.value.value);
            let (elapsed, pt) = (local("__backoff_elapsed", t.key), p_at(t.key));
            let from = quote_spanned! {t.key=>
                <#pt::ErrorOf<#ret> as #pt::FromElapsed>::from_elapsed(#elapsed)
            };
            let pk = p_at(t.key);
            let timeout = quote_spanned! {t.key=>
                <#pk::DefaultSleep as #pk::AsyncTimeout>::timeout(#d, #p::attempt::<#ret, _>(async { #retry_loop }))
            };
            let (gave_up, finished) = if defer_giveup {
                (
                    quote! {
                        let mut __backoff_gave_up: ::core::option::Option<#p::GiveUp> =
                            ::core::option::Option::None;
                    },
                    quote! {
                        match __backoff_gave_up {
                            ::core::option::Option::None => __backoff_outcome,
                            ::core::option::Option::Some(__backoff_report) => {
                                let __backoff_result = #split;
                                #call_on_giveup
                                #from_result(__backoff_result)
                            }
                        }
                    },
                )
            } else {
                (TokenStream::new(), quote!(__backoff_outcome))
            };
            quote! {
                let mut __backoff_calls: u32 = 0;
                #gave_up
                match #timeout.await {
                    #p::Result::Ok(__backoff_outcome) => #finished,
                    #p::Result::Err(__backoff_elapsed) => {
                        let __backoff_result = #p::Result::Err(#from);
                        let __backoff_report = #p::timed_out(__backoff_calls, #clock, #started_value);
                        #timed_out_give_up
                        #from_result(__backoff_result)
                    }
                }
            }
        }
        _ => retry_loop,
    };
    quote! {
            #import
            #policy
            #budget_binding
            #circuit_binding
            #sleep_binding
            #start
            #retry_loop
    }
}

/// Whether the loop keeps nothing for the arguments but the policy: no
/// hook, budget, breaker or context.
fn keeps_no_state(args: &RetryArgs) -> bool {
    args.when.is_none()
        && args.when_ok.is_none()
        && args.on_retry.is_none()
        && args.on_giveup.is_none()
        && args.budget.is_none()
        && args.circuit.is_none()
        && args.context.is_none()
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
