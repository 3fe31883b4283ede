//! Code generation: the function's body becomes a loop over the runtime's
//! state machine (`RetryState`); the runtime owns every decision.

use proc_macro2::{Delimiter, Group, TokenStream, TokenTree};
use quote::{ToTokens, quote, quote_spanned};
use syn::{AttrStyle, Block, Expr, Ident, Signature, Stmt, Type};

mod body;
mod cancel;
mod chaos;
mod fleet;
mod function;
mod hedge;
mod hooks;
mod kinds;
mod names;
mod params;
mod policy;
mod runtime_loop;
mod sleep;
mod step;
mod timeouts;

use crate::attr::RetryArgs;
use crate::errors::Errors;
use crate::valid;
use function::{Function, async_trait_body_mut, parse_function};
use names::{Names, keeps_no_state, keeps_no_state_but_when};
use params::{Reborrow, cloned_mutability, reborrowed};
use policy::policy_binding;
use runtime_loop::{RuntimeLoopParts, runtime_loop};

/// The attribute's whole work, on `proc_macro2` tokens so it can be tested
/// and fuzzed outside the compiler.
///
/// Input: the attribute's arguments and the item it is on.
/// Output: the rewritten function; or, on any mistake, the item unchanged
/// followed by one `compile_error!` per mistake.
pub(crate) fn retry(args: TokenStream, item: TokenStream) -> TokenStream {
    let mut errors = Errors::default();
    // (Kept for the error path, which alone reads `path_heads` and `words`.)
    let tokens = args.clone();
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
        f.sig.asyncness.is_some() && params::instrumented(f.block.to_token_stream())
    });
    if let Some(func) = &func {
        // (Scanned only where it changes a message.)
        let blocks_on_body = !func.is_async()
            && (args.timeout.is_some() || args.attempt_timeout.is_some())
            && valid::blocks_on_its_body(func.block.to_token_stream());
        valid::check_signature(
            &func.sig,
            func.is_async(),
            blocks_on_body,
            &args,
            &mut errors,
        );
        valid::check_borrows_handed_over(&func.sig, &func.block, func.is_async(), &mut errors);
        cancel::check(&args, func.is_async(), &mut errors);
        valid::check_struct_bindings(&func.block, &args, &mut errors);
        valid::check_attributes(&func.attrs, &mut errors);
        if func.sig.asyncness.is_some() && moves_arguments {
            valid::check_instrumented(&func.sig, &args, &mut errors);
        }
    }
    match (errors.finish(), func) {
        (Ok(()), Some(func)) => rewrite(&args, func, moves_arguments),
        // (No function means an error was recorded.)
        (result, func) => {
            let errors = result.err().map(|e| e.to_compile_error());
            // The function as written, but for the names the arguments use
            // (`AdaptiveThrottle` in `throttle = Arc::new(AdaptiveThrottle::new(..))`),
            // which its body names too, so that their imports are not
            // reported unused besides the error.
            if let Some(mut func) = func {
                func.block = syn::parse2(valid::struct_patterns(func.block.to_token_stream()))
                    .unwrap_or(func.block);
                let types = valid::hook_parameter_types(&args);
                let (heads, words) = (path_heads(tokens.clone()), words(tokens));
                let func = with_names_used(func, &heads, &words, &types);
                return quote!(#func #errors);
            }
            // On an expression (rustc lets an attribute reach a closure,
            // with errors of its own), one expression: the error, then
            // the expression unchanged.
            if syn::parse2::<syn::Item>(item.clone()).is_err()
                && syn::parse2::<syn::Expr>(item.clone()).is_ok()
            {
                return quote!({ #errors #item });
            }
            quote!(#item #errors)
        }
    }
}

// Input:  the attribute's arguments.
// Output: the first segment of each path of two or more segments in them
//         (`Arc` and `AdaptiveThrottle` in `Arc::new(AdaptiveThrottle::new(..))`),
//         but `self`, `Self`, `super`, `crate`, `std`, `core`, `alloc` and
//         the primitive types, once each.
fn path_heads(args: TokenStream) -> Vec<Ident> {
    fn walk(tokens: TokenStream, heads: &mut Vec<Ident>) {
        let trees: Vec<TokenTree> = tokens.into_iter().collect();
        for (i, tree) in trees.iter().enumerate() {
            match tree {
                TokenTree::Group(g) => walk(g.stream(), heads),
                TokenTree::Ident(ident) => {
                    let colons = |at: usize| matches!(trees.get(at), Some(TokenTree::Punct(p)) if p.as_char() == ':');
                    let after_path_or_field = i > 0
                        && matches!(&trees[i - 1], TokenTree::Punct(p) if p.as_char() == ':' || p.as_char() == '.');
                    let name = ident.to_string();
                    const SKIPPED: &[&str] = &[
                        "self", "Self", "super", "crate", "std", "core", "alloc", "u8", "u16",
                        "u32", "u64", "u128", "usize", "i8", "i16", "i32", "i64", "i128", "isize",
                        "f32", "f64", "bool", "char", "str",
                    ];
                    // (A keyword, `async` in `Policy async ::immediate()`,
                    // is no path's head: syn does not read it as a name.)
                    let keyword = syn::parse_str::<Ident>(&name).is_err();
                    if colons(i + 1)
                        && colons(i + 2)
                        && !after_path_or_field
                        && !keyword
                        && !SKIPPED.contains(&name.as_str())
                        && !heads.iter().any(|h| *h == name)
                    {
                        heads.push(ident.clone());
                    }
                }
                _ => {}
            }
        }
    }
    let mut heads = Vec::new();
    walk(args, &mut heads);
    heads
}

/// Every identifier in `tokens`, in groups too, but an argument's name
/// (`budget` in `budget = ..`).
fn words(tokens: TokenStream) -> Vec<String> {
    let mut words = Vec::new();
    let mut stack = vec![tokens];
    while let Some(tokens) = stack.pop() {
        let mut trees = tokens.into_iter().peekable();
        while let Some(tree) = trees.next() {
            match tree {
                TokenTree::Ident(i) => {
                    let named = matches!(trees.peek(), Some(TokenTree::Punct(p))
                        if p.as_char() == '=' && p.spacing() == proc_macro2::Spacing::Alone);
                    if !named {
                        words.push(i.to_string());
                    }
                }
                TokenTree::Group(g) => stack.push(g.stream()),
                _ => {}
            }
        }
    }
    words
}

// Input:  the function, `heads` (see `path_heads`), the arguments' words.
// Output: the function with `#[allow(unused_imports)] use Head as _;` for
//         each head first in its body, its generic parameters left out
//         (a `use` cannot name them), and `let _ = &param;` for each
//         parameter the arguments name (`host` in `budget = self.budgets.get(host)`).
//
// Only beside an error of the attribute's. (In an edition-2015 crate a
// `use` path starts at the crate's root, so a head imported in a module is
// an unresolved import there, a second error beside the attribute's.)
fn with_names_used(
    func: Function,
    heads: &[Ident],
    words: &[String],
    types: &[&Type],
) -> TokenStream {
    let Function {
        attrs,
        vis,
        sig,
        block,
    } = func;
    let generic = |h: &Ident| {
        sig.generics.params.iter().any(|p| match p {
            syn::GenericParam::Type(t) => t.ident == *h,
            syn::GenericParam::Const(c) => c.ident == *h,
            syn::GenericParam::Lifetime(_) => false,
        })
    };
    let uses = heads
        .iter()
        .filter(|h| !generic(h))
        .map(|h| quote!(#[allow(unused_imports)] use #h as _;));
    let params = sig.inputs.iter().filter_map(|input| match input {
        syn::FnArg::Typed(t) => match &*t.pat {
            syn::Pat::Ident(p) if words.contains(&p.ident.to_string()) => Some(&p.ident),
            _ => None,
        },
        syn::FnArg::Receiver(_) => None,
    });
    let params = params.map(|p| quote!(let _ = &#p;));
    // (And the types the hooks' closures declare their parameters with.)
    let types = types
        .iter()
        .map(|t| quote!(let _: ::core::marker::PhantomData<#t>;));
    let (outer, inner): (Vec<_>, Vec<_>) = attrs
        .into_iter()
        .partition(|a| matches!(a.style, AttrStyle::Outer));
    let stmts = &block.stmts;
    let mut body = Group::new(
        Delimiter::Brace,
        quote!(#(#inner)* #(#uses)* #(#params)* #(#types)* #(#stmts)*),
    );
    body.set_span(block.brace_token.span.join());
    quote! {
        #(#outer)*
        #vis #sig #body
    }
}

// Input:  #[attrs] vis fn name(args) -> R { body }
// Output: #[attrs] vis fn name(args) -> R {
//             static POLICY: Policy<..> = ..;                  // or a `Fixed` policy type
//             let mut call = Call::begin(&POLICY, clock, timed, "module::name");   // see `fleet::start`
//             let ended = loop {
//                 // a breaker's refusal: break call.refused(..)  // see `step::refusals`
//                 let outcome: R = attempt(|| body);           // or async { body }.await
//                 let delay = match call.after_error("module::name", tracer!(..), when(&error), error) {  // see `step`
//                     Continue(delay) => delay,               // the error was dropped in there
//                     Break(ended) => break ended,
//                 };
//                 sleep(delay);                                // or sleep(delay).await
//                 call.next_attempt();
//             };
//             from_result(ended.finish(|result, report| { on_giveup; fallback; result }))
//         }
//         or, for a plain fn with no hook but a `when` that borrows nothing,
//         the runtime's blocking loop (`runtime_loop`), and for `hedge` the
//         runtime's hedged call (`hedge`).
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
    // (Not beside `#[tracing::instrument]`, whose body moves every argument.)
    let moved = (!moves_arguments).then(|| valid::moved_arguments(&sig, &block, args));
    let body = braced(quote!(#(#inner)* #moved #retry_loop));
    quote! {
        #(#outer)*
        #vis #sig #body
    }
}

// Input:  the arguments, the signature, the body's type `R` and the body.
// Output: the statements that run the body in a loop over `RetryState`:
//         use RUNTIME::__private as __backoff_private;
//         policy; budget; circuit; sleep; slot;                  // see each emitter
//         loop {
//             before_attempt;                                    // fleet: a breaker's refusal
//             let outcome: R = attempt;                          // body
//             failure path: outcome split, verdict, on_retry, give up, sleep
//         }                                                      // under `timeout`: timeouts
//         or, for a plain fn that names only its policy, the runtime's loop.
fn retry_loop(
    args: &RetryArgs,
    sig: &Signature,
    ret: &Type,
    is_async: bool,
    block: &Block,
    reborrows: &[Reborrow],
    cloned_mut: &[Ident],
) -> TokenStream {
    let n = Names::new(args, sig, ret, is_async);
    let p = &n.p;
    let krate = args
        .krate
        .as_ref()
        .map_or_else(|| quote!(::backoff_runtime), |k| k.value.to_token_stream());
    // One import of the runtime, so a wrong `crate = "..."` is reported once.
    let import = quote!(use #krate::__private as __backoff_private;);
    let policy = if n.fixed.is_some() {
        TokenStream::new()
    } else {
        policy_binding(args, p, &n.clock)
    };
    let body = body::body(&n, block, reborrows, cloned_mut);
    if args.hedge.is_some() && is_async {
        return hedge::hedged(&n, &body, &import);
    }
    let started = &n.started;
    // A plain fn whose arguments are all policy (no hook, no custom sleep,
    // no budget, breaker or context): the runtime runs the loop, with the
    // first attempt inline and the rest out of line (see `runtime_loop`).
    // It records the call's metrics as `module_path!()::name` (through the
    // runtime's recording facade, its feature `record`).
    // So does one whose only hook is a `when` that borrows nothing of the
    // function's (see `hooks::borrows_nothing`): it lives beside the
    // attempts for the whole loop, as a closure of the verdict.
    let runtime_when = args
        .when
        .as_ref()
        .filter(|w| keeps_no_state_but_when(args) && hooks::borrows_nothing(&w.value, sig));
    if !is_async && args.sleep.is_none() && (keeps_no_state(args) || runtime_when.is_some()) {
        let function = n.function();
        let when = runtime_when.map(|w| hooks::verdict_closure(&n, w.span));
        let run = match when {
            None => quote!(retry_blocking),
            Some(_) => quote!(retry_blocking_when),
        };
        let start = match n.fixed.as_ref().filter(|_| n.constant_start) {
            // (The policy's constant, through a generic call: see `origin`.)
            Some(fixed) => quote!(#p::origin::<#fixed>(), #function,),
            None => {
                let start_ref = &n.start_ref;
                quote!(#start_ref, #function,)
            }
        };
        let looped = runtime_loop(
            p,
            &RuntimeLoopParts {
                name: n.name(),
                ret: &n.ret,
                body: body.block(),
                bars: quote_spanned!(body.open=> ||),
                run,
                start,
                when,
            },
        );
        return quote! {
            #import
            #policy
            #started
            #looped
        };
    }
    // What follows is the loop of the function's own: after each attempt,
    // one call into the runtime's driver (`step`).
    let attempt = body::attempt(&n, &body);
    let sleep = sleep::sleep(&n);
    let context_value = &body.context_value;
    // (A plain fn's attempt is a closure, but the function's body:
    // `clippy::result_large_err` is the function's to report, not the
    // closure's too. An `async fn`'s is an `async` block, which the lint
    // does not look at.)
    let allow_large_err = (!is_async).then(|| quote!(#[allow(clippy::result_large_err)]));
    let (sleep_binding, start) = (sleep::sleep_binding(&n), fleet::start(&n));
    let (before_attempt, after) = (step::refusals(&n), step::after_attempt(&n));
    let count_call = args
        .timeout
        .as_ref()
        .map(|_| quote!(__backoff_calls = __backoff_calls.saturating_add(1);));
    let retry_loop = quote! {
        loop {
            #before_attempt
            #count_call
            #context_value
            #allow_large_err
            let __backoff_outcome = #attempt;
            #after
            #sleep
            __backoff_call.next_attempt();
        }
    };
    let ended = timeouts::call_timeout(&n, retry_loop);
    let ended = cancel::before_first_attempt(&n, ended);
    // (The call's result is spanned at the return type, where a type that
    // is not a `Result` is reported, once.)
    let (finish, from_result, ret_span) = (step::finish(&n), n.rebuild_fn(), n.ret_span);
    let ended_at = names::local("__backoff_ended", ret_span);
    let result = quote_spanned!(ret_span=> #from_result(#ended_at.#finish));
    let on_success = hooks::call_on_success(&n, quote!(__backoff_call.success(&__backoff_ended)));
    quote! {
        #import
        #policy
        #sleep_binding
        #start
        let __backoff_ended = #ended;
        #on_success
        #result
    }
}

#[cfg(test)]
mod size;

#[cfg(test)]
mod names_used {
    use quote::quote;

    /// What an erroneous attribute's arguments name through paths: their
    /// first segments, once each, not `self`, `std` or a primitive.
    #[test]
    fn path_heads_are_the_first_segments_of_paths() {
        let heads = super::path_heads(quote! {
            throttle = Arc::new(AdaptiveThrottle::new(2.0, Duration::from_secs(120))),
            budget = std::rc::Rc::new(budgets::make()),
            circuit = self.breakers.get(u64::MAX as usize),
            when = Arc::clone
        });
        let heads: Vec<String> = heads.iter().map(ToString::to_string).collect();
        assert_eq!(heads, ["Arc", "AdaptiveThrottle", "Duration", "budgets"]);
    }

    /// Regression (found by the expansion fuzzer): a keyword before `::` in
    /// a broken argument is not a head, so no `use async as _;` is written
    /// and the output still parses.
    #[test]
    fn a_keyword_before_colons_is_not_a_head() {
        let heads = super::path_heads(quote!(policy = Policy async ::immediate(), when = self::f));
        assert!(
            heads.iter().all(|h| h != "async" && h != "self"),
            "{heads:?}"
        );
        let out = super::retry(
            quote!(policy = Policy async ::immediate().attempts(n), constant("1s")),
            quote!(
                fn f() -> Result<(), E> {
                    Ok(())
                }
            ),
        );
        syn::parse2::<syn::File>(out).expect("the output parses as items");
    }

    /// The function comes back whole, with a `use` of each head that is not
    /// one of its generic parameters, after its inner attributes.
    #[test]
    fn the_function_names_the_heads_and_keeps_its_body() {
        let func = super::parse_function(&quote! {
            fn f<T: Default>() -> Result<T, E> { #![allow(unused)] Ok(T::default()) }
        })
        .unwrap();
        let heads = super::path_heads(quote!(budget = Arc::new(T::make())));
        let out = super::with_names_used(func, &heads, &[], &[]).to_string();
        assert!(out.contains("use Arc as _ ;"), "{out}");
        assert!(!out.contains("use T as"), "{out}");
        let inner = out
            .find("# ! [allow (unused)]")
            .expect("inner attribute kept");
        assert!(inner < out.find("use Arc").unwrap(), "{out}");
        assert!(out.contains("Ok (T :: default ())"), "{out}");
    }

    /// A parameter the arguments name is used in the body too (an
    /// attribute with an error leaves it otherwise unused); one they do
    /// not name is left alone.
    #[test]
    fn a_parameter_the_arguments_name_is_used() {
        let func = super::parse_function(&quote! {
            fn f(&self, host: &str, other: u32) -> Result<u32, E> { Ok(other) }
        })
        .unwrap();
        let args = quote!(budget = self.budgets.get(host), other = 1);
        let out = super::with_names_used(func, &[], &super::words(args), &[]).to_string();
        assert!(out.contains("let _ = & host ;"), "{out}");
        // (`other` names an argument there, not the parameter.)
        assert!(!out.contains("& other ;"), "{out}");
    }
}
