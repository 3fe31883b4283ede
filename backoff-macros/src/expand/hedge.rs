//! `hedge`: the body's attempts overlap, run by the runtime's hedged call
//! (`Policy::hedge_async`) inside the function's own future.

use proc_macro2::{Ident, Literal, TokenStream};
use quote::{ToTokens, quote, quote_spanned};

use super::body::Body;
use super::fleet;
use super::hooks::{
    call_on_giveup, call_on_retry, call_on_success, decide_ok, decision, typed_closure,
};
use super::names::{Names, local, p_at};
use super::policy::duration;
use super::step;
use super::timeouts::attempt_timeout;
use crate::attr::{Arg, Attempts, DurationArg, Hedge, defaults};

// Input:  hedge = "20ms" | "p95", attempts = N, `when`, `when_ok`,
//         `on_retry`, `on_giveup`, `fallback`, `on_success`, `budget`, `circuit`,
//         `attempt_timeout`, the body.
// Output: static POLICY: Policy = Policy::immediate().attempts(N).named("module::f");
//         static LATENCY: Latency = Latency::new();           // "pNN" only (`delay`)
//         budget; circuit;                                     // see `fleet`
//         let mut gave_up: Option<GiveUp> = None;              // (`hooks`)
//         let attempt = async |context| body;                  // (`attempts`)
//         let outcome: R = POLICY.hedge_async::<N>(HedgeDelay::After(D))
//             .when(..) .. .circuit(..)                        // each hook given (`hooks`)
//             .call_op(|| attempt::<R, _>(async { body }),     // (`attempts`)
//                      tracer!(name, ..))                      // `tracing` events
//             .await;                                          // under `timeout`: `timeout`
//         from_result(Ended::resume(result, gave_up).finish(|result, report| { on_giveup; fallback; result }))
//
// The hooks are closures bound before the call: a hedged body cannot hold
// `&mut` access anyway (see `valid::hedge`). The attempts capture the
// arguments by reference (each `clone(..)` parameter is cloned in each).
pub(super) fn hedged(n: &Names<'_>, body: &Body, import: &TokenStream) -> TokenStream {
    let (args, p, ret) = (n.args, &n.p, &n.ret);
    let name = n.name();
    let Some(hedge) = &args.hedge else {
        return TokenStream::new();
    };
    let limit = match args.attempts.as_ref().map(|a| a.value) {
        Some(Attempts::Limited(n)) => n,
        // (`valid::hedge` reported anything else.)
        _ => defaults::ATTEMPTS,
    };
    let (limit_u32, limit_usize) = (
        Literal::u32_suffixed(u32::try_from(limit).unwrap_or(u32::MAX)),
        Literal::usize_unsuffixed(usize::try_from(limit).unwrap_or(usize::MAX)),
    );
    let (latency, delay) = delay(p, hedge.value);
    let finish = step::finish(n);
    let Hooks {
        lets,
        chain,
        finished,
        gives_up,
    } = hooks(n, &finish);
    let bindings = fleet::bindings(n);
    let (attempt_closure, call) = attempts(n, body);
    let hedged = quote! {
        __BACKOFF_HEDGE_POLICY
            .hedge_async::<#limit_usize>(#delay)
            #chain
            .call_op(#call, #p::tracer!(#name, &#p::outcome_type::<#ret>))
    };
    let (timed, outcome) = match &args.timeout {
        Some(t) => timeout(n, t, &hedged, &finish),
        None => (TokenStream::new(), quote!(#hedged.await)),
    };
    let outcome = super::cancel::before_hedged(n, outcome, gives_up);
    quote! {
        #import
        static __BACKOFF_HEDGE_POLICY: #p::Policy = #p::Policy::immediate()
            .attempts(#limit_u32)
            .named(::core::concat!(::core::module_path!(), "::", #name));
        #latency
        #bindings
        #lets
        #attempt_closure
        #timed
        let __backoff_outcome: #ret = #outcome;
        #finished
    }
}

// Input:  hedge = "20ms" | "p95" | "p99.9".
// Output: the latency it learns from, and the delay:
//         `HedgeDelay::After(D)`;
//         `static LATENCY: Latency = Latency::new();` and `HedgeDelay::P95(&LATENCY)`
//         (`HedgeDelay::Quantile(&LATENCY, q)` for another percentile).
fn delay(p: &Ident, hedge: Hedge) -> (TokenStream, TokenStream) {
    match hedge {
        Hedge::After(d) => {
            let d = duration(p, d);
            (TokenStream::new(), quote!(#p::HedgeDelay::After(#d)))
        }
        Hedge::Percentile(thousandths) => {
            let latency = quote! {
                static __BACKOFF_LATENCY: #p::Latency = #p::Latency::new();
            };
            let delay = if thousandths == 950 {
                quote!(#p::HedgeDelay::P95(&__BACKOFF_LATENCY))
            } else {
                let q = Literal::f64_suffixed(f64::from(thousandths) / 1000.0);
                quote!(#p::HedgeDelay::Quantile(&__BACKOFF_LATENCY, #q))
            };
            (latency, delay)
        }
    }
}

/// A hedged call's hooks: what `hooks` writes.
struct Hooks {
    /// The bindings the give-up and success hooks fill, before the call.
    lets: TokenStream,
    /// The builder's hook methods, `.when(..)` to `.circuit(..)`.
    chain: TokenStream,
    /// The function's result, from `__backoff_outcome`.
    finished: TokenStream,
    /// Whether `on_giveup` or `fallback` runs after the call.
    gives_up: bool,
}

// Input:  `when`, `when_ok`, `on_retry`, `on_hedge`, `on_giveup`,
//         `fallback`, `on_success`, `budget`, `circuit`; `finish`, the give-up's end.
// Output: lets:  let mut gave_up: Option<GiveUp> = None;      // with `on_giveup` or `fallback`
//                let mut succeeded: Option<SuccessEvent> = None; // with `on_success`
//         chain: .when(|error: &E| verdict)                   // each hook, if given
//                .when_ok(|value: &T| verdict)
//                .on_retry(..) .on_hedge(..)                  // `on_retry`, `on_hedge`
//                .on_giveup(|_, report| gave_up = Some(*report))
//                .on_success(|_, event| succeeded = Some(*event))
//                .budget(b).circuit(c, |open| E::from(open))
//         finished: from_result(Ended::resume(result, gave_up).finish(..)), after
//                `if let Some((value, event)) = result.as_ref().ok().zip(succeeded) { on_success(value, &event) }`;
//                or the outcome as it is.
fn hooks(n: &Names<'_>, finish: &TokenStream) -> Hooks {
    let (args, p) = (n.args, &n.p);
    let (ok_of, error_of) = (n.ok_of(), n.error_of());
    let mut chain = TokenStream::new();
    if args.when.is_some() {
        let verdict = decision(n);
        chain.extend(quote! {
            .when(|__backoff_error: &#error_of| -> #p::Decision { #verdict })
        });
    }
    if let Some(w) = &args.when_ok {
        let verdict = decide_ok(n, w);
        chain.extend(quote! {
            .when_ok(|__backoff_value: &#ok_of| -> #p::Decision { #verdict })
        });
    }
    chain.extend(on_retry(n));
    chain.extend(on_hedge(n));
    // (The give-up hooks run once, after the call, on the report it kept:
    // the function's own loop's `finish`.)
    let gives_up = call_on_giveup(n).is_some();
    let (split, from_result) = (&n.split(), &n.rebuild_fn());
    let (mut lets, mut finished) = (TokenStream::new(), quote!(__backoff_outcome));
    if gives_up {
        lets.extend(quote! {
            let mut __backoff_gave_up: ::core::option::Option<#p::GiveUp> =
                ::core::option::Option::None;
        });
        chain.extend(quote! {
            .on_giveup(|_: &#p::Result<#ok_of, #error_of>, __backoff_report: &#p::GiveUp| {
                __backoff_gave_up = ::core::option::Option::Some(*__backoff_report);
            })
        });
        finished = quote!(#from_result(#p::Ended::resume(#split, __backoff_gave_up).#finish));
    }
    // `on_success` runs after the call too, if it told of an accepted `Ok`.
    let told = quote! {
        ::core::option::Option::zip(
            #p::Result::ok(#p::Result::as_ref(&__backoff_result)),
            __backoff_succeeded,
        )
    };
    if let Some(call) = call_on_success(n, told) {
        let finish = if gives_up {
            quote!(#from_result(#p::Ended::resume(__backoff_result, __backoff_gave_up).#finish))
        } else {
            quote!(#from_result(__backoff_result))
        };
        lets.extend(quote! {
            let mut __backoff_succeeded: ::core::option::Option<#p::SuccessEvent> =
                ::core::option::Option::None;
        });
        chain.extend(quote! {
            .on_success(|_: &#ok_of, __backoff_event: &#p::SuccessEvent| {
                __backoff_succeeded = ::core::option::Option::Some(*__backoff_event);
            })
        });
        finished = quote! {{
            let __backoff_result = #split;
            #call
            #finish
        }};
    }
    chain.extend(controls(n));
    Hooks {
        lets,
        chain,
        finished,
        gives_up,
    }
}

// Input:  `budget = B`, `circuit = C`.
// Output: .budget(__backoff_budget)
//         .circuit(__backoff_circuit, |open| <E as FromCircuitOpen>::from_circuit_open(open))
//         each if given (the bindings are `fleet::bindings`').
fn controls(n: &Names<'_>) -> TokenStream {
    let args = n.args;
    let mut chain = TokenStream::new();
    if args.budget.is_some() {
        chain.extend(quote!(.budget(__backoff_budget)));
    }
    if let Some(c) = &args.circuit {
        let pc = p_at(c.key);
        let open = local("__backoff_open", c.key);
        // (At the return type: one error there for a non-`Result` fn.)
        let error = n.error_of();
        let from = quote_spanned! {c.key=>
            <#error as #pc::FromCircuitOpen>::from_circuit_open(#open)
        };
        chain.extend(quote!(.circuit(__backoff_circuit, |__backoff_open| #from)));
    }
    chain
}

// Input:  the body; `context = ctx`, `attempt_timeout = A`, `timeout = T`.
// Output: the attempt closure bound before the call, and the call:
//         with `context` (or `attempt_timeout` beside `timeout`):
//           let attempt = async |context: AttemptContext| -> R { body };  // `attempt_timeout`: cut(A, context)
//           WithContext(|context| { calls += 1; let context = within_timeout(context, started, T, clock); attempt(context) })
//         else nothing, and
//           || { calls += 1; attempt::<R, _>(async { body }) }
//         (`calls += 1` and `within_timeout` under `timeout` only; the
//         call as `cancel::hedged_call` writes it).
fn attempts(n: &Names<'_>, body: &Body) -> (TokenStream, TokenStream) {
    let (args, p, ret) = (n.args, &n.p, &n.ret);
    // Under `timeout`, each attempt counts itself, for the report of a call
    // that runs out of time.
    let count_call = args
        .timeout
        .as_ref()
        .map(|_| quote!(__backoff_calls.fetch_add(1, ::core::sync::atomic::Ordering::Relaxed);));
    let timed = args
        .attempt_timeout
        .as_ref()
        .map(|t| attempt_timeout(n, t, &body.async_block(n)));
    let context =
        args.context.is_some() || (args.attempt_timeout.is_some() && args.timeout.is_some());
    if !context {
        let attempt = match timed {
            Some(timed) => quote!(#p::attempt::<#ret, _>(async { #timed })),
            None => {
                let async_body = body.async_block(n);
                let asyncness = quote_spanned!(body.open=> async);
                quote!(#p::attempt::<#ret, _>(#asyncness #async_body))
            }
        };
        let call = quote!(|| {
            #count_call
            #attempt
        });
        return (
            TokenStream::new(),
            super::cancel::hedged_call(n, false, call),
        );
    }
    // `context = ctx`: each attempt is told its context (and
    // `attempt_timeout` is cut to its time left). An async closure owns
    // its argument and borrows what it captures, as the attempts must; the
    // closure the call holds calls it by reference.
    let closure_body = match timed {
        Some(timed) => quote!({ #timed }),
        None => body.async_block(n).to_token_stream(),
    };
    // (`timeout` bounds the call from outside: an attempt's time left
    // counts to its end too.)
    let within = args.timeout.as_ref().map(|t| {
        let (d, clock) = (duration(p, t.value.value), &n.clock);
        quote! {
            let __backoff_context =
                #p::within_timeout(__backoff_context, __backoff_started, #d, #clock);
        }
    });
    let asyncness = quote_spanned!(body.open=> async);
    let call = quote! {
        |__backoff_context: #p::AttemptContext| {
            #count_call
            #within
            __backoff_attempt(__backoff_context)
        }
    };
    (
        quote! {
            let __backoff_attempt = #asyncness |__backoff_context: #p::AttemptContext| -> #ret #closure_body;
        },
        super::cancel::hedged_call(n, true, call),
    )
}

// Input:  `timeout = D`, the hedged call's future, `on_giveup`/`fallback`.
// Output: let __backoff_calls = AtomicU32::new(0);      // counted by each attempt
//         let __backoff_started = began(..); let mut recording = Recording::begin(..);
//         and the outcome:
//         { let timed = timeout(D, hedged).await;        // the attempts dropped here
//           match timed { Ok(outcome) => outcome,
//                         Err(elapsed) => { let result = Err(E::from(elapsed));
//                                           return from_result(timed_out(..).finish(|result, report| { on_giveup; fallback; result })) } } }
fn timeout(
    n: &Names<'_>,
    t: &Arg<DurationArg>,
    hedged: &TokenStream,
    finish: &TokenStream,
) -> (TokenStream, TokenStream) {
    let (p, clock, from_result) = (&n.p, &n.clock, &n.rebuild_fn());
    let d = duration(p, t.value.value);
    let (elapsed, pt) = (local("__backoff_elapsed", t.key), p_at(t.key));
    // (At the return type: one error there for a non-`Result` fn.)
    let error = n.error_of();
    let from = quote_spanned! {t.key=>
        <#error as #pt::FromElapsed>::from_elapsed(#elapsed)
    };
    let timer = quote_spanned! {t.key=>
        <#pt::DefaultSleep as #pt::AsyncTimeout>::timeout(#d, #hedged)
    };
    let tracer = n.tracer("result", "__backoff_result");
    let begin_recording = n.begin_full_recording();
    (
        quote! {
            let __backoff_calls = ::core::sync::atomic::AtomicU32::new(0);
            let __backoff_started = #p::began(&__BACKOFF_HEDGE_POLICY, #clock, true);
            #begin_recording
        },
        quote! {{
            // (Bound first: the attempts, and what they borrow, are
            // dropped before `on_giveup` and `fallback` run.)
            let __backoff_timed = #timer.await;
            match __backoff_timed {
                #p::Result::Ok(__backoff_outcome) => __backoff_outcome,
                #p::Result::Err(__backoff_elapsed) => {
                    let __backoff_result = #p::Result::Err(#from);
                    let __backoff_calls = __backoff_calls.load(::core::sync::atomic::Ordering::Relaxed);
                    // (The hedged call's own recording counted the
                    // attempts that ended.)
                    __backoff_recording.gave_up_after(__backoff_calls, #p::GiveUpReason::Timeout);
                    return #from_result(#p::timed_out(
                        #p::timeout_report(__backoff_calls, #clock, __backoff_started),
                        &mut #p::Recording::OFF,
                        #tracer,
                        __backoff_result,
                    ).#finish);
                }
            }
        }},
    )
}

// Input:  `on_retry = O`.
// Output: .on_retry(|outcome: &Result<T, E>, event: &RetryEvent| {
//             if let Err(error) = outcome { O(error, event) }   // (O(outcome, event) beside `when_ok`)
//         })
//         or nothing without it.
//
// `on_retry` keeps its type, `(&E, &RetryEvent)` (beside `when_ok`,
// `(&Result<T, E>, &RetryEvent)`); the runtime calls it only when an
// outcome it retries starts the next attempt, so an `Ok` reaches it only
// beside `when_ok`, which is when it takes the whole outcome.
fn on_retry(n: &Names<'_>) -> Option<TokenStream> {
    let (args, p) = (n.args, &n.p);
    let (ok_of, error_of) = (n.ok_of(), n.error_of());
    let call = call_on_retry(n)?;
    let body = if args.when_ok.is_some() {
        quote!(#call)
    } else {
        quote! {
            if let #p::Result::Err(__backoff_outcome) = __backoff_outcome {
                #call
            }
        }
    };
    let within = super::timeouts::event_within(n);
    Some(quote! {
        .on_retry(|__backoff_outcome: &#p::Result<#ok_of, #error_of>, __backoff_event: &#p::RetryEvent| {
            #within
            #body
        })
    })
}

// Input:  `on_hedge = H`.
// Output: .on_hedge(|event: &RetryEvent| { let mut hook = H; hook(event); })
//         or nothing without it.
//
// `on_hedge`, `(&RetryEvent)`, runs when the delay starts an attempt.
fn on_hedge(n: &Names<'_>) -> Option<TokenStream> {
    let p = &n.p;
    let h = n.args.on_hedge.as_ref()?;
    let event_ty = quote!(&#p::RetryEvent);
    let typed = typed_closure(&h.value, || [event_ty]);
    let hook = local("__backoff_on_hedge", h.span);
    let call = quote_spanned! {h.span=>
        #hook(__backoff_event)
    };
    let within = super::timeouts::event_within(n);
    Some(quote! {
        .on_hedge(|__backoff_event: &#p::RetryEvent| {
            #within
            #[allow(unused_mut)]
            let mut #hook = #typed;
            #call;
        })
    })
}
