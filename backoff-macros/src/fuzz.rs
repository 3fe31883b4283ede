//! Fuzzing the expansion: random attribute arguments and items, valid
//! grammar mixed with mutations (truncated groups, wrong literals, huge
//! numbers, unicode, nested garbage; `backoff_schedule::fuzz`, the
//! generator of `Policy::parse`'s fuzz pass too), fed to [`expand::retry`]
//! on `proc_macro2` tokens.
//!
//! Properties: the expansion never panics, and its output always parses as
//! Rust items, carrying a `compile_error!` unless the input was valid (when
//! the input item does not parse, the output is that item echoed with the
//! error, and must still carry the error). One exception: a function whose
//! signature parses and whose body does not is expanded with the body as
//! written (the attribute does not parse bodies), and rustc reports the
//! body's syntax error at its own tokens.
//!
//! `cargo test -p backoff-macros fuzz` runs a bounded pass (set
//! `BACKOFF_FUZZ_CASES`, default 3,000); a long run:
//! `BACKOFF_FUZZ_CASES=1000000 cargo test --release -p backoff-macros fuzz`.

use std::str::FromStr;

use proc_macro2::TokenStream;
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};

use backoff_schedule::fuzz::texts;

use crate::expand;

/// Attribute argument fragments: the grammar, and near misses.
const ARGS: &[&str] = &[
    "exponential",
    "exponential(base = \"100ms\", factor = 2, max = \"5s\")",
    "exponential(base = \"250ms\", factor = 1.5)",
    "exponential(factor = 0.5)",
    "exponential(factor = 1e400)",
    "exponential(factor = -3)",
    "exponential(base = 100)",
    "exponential(bse = \"1s\")",
    "exponential = \"1s\"",
    "chain(exponential(times = 3), constant(\"1m\"))",
    "chain(exponential(times = 0), sum(immediate, steps(), times = 2), decorrelated)",
    "chain(linear(times = 99999999999999999999), fibonacci)",
    "chain(exponential, constant(\"1s\", times = 2))",
    "steps(\"1s\", \"5s\", \"30s\")",
    "steps(1, \"x\", times = 2)",
    "shorter(exponential(base = \"1s\"), linear(base = \"3s\", jitter = \"full\"))",
    "longer(decorrelated, sum(constant(\"1s\"), sidekiq))",
    "sum(constant(\"3m\"), exponential(base = \"2m\", max = \"1h\"))",
    "sum(sum(sum(sum(immediate, immediate), immediate), immediate)",
    "union(immediate, immediate)",
    "and_then(",
    "stop_at_delay = \"10s\"",
    "stop_at_delay = \"10s\", attempts = 0",
    "stop_at_delay = \"0s\"",
    "stop_at_delay = \"1ns\"",
    "on_deadline = \"last_try\"",
    "on_deadline = \"never\"",
    "jitter = range(0.5, 1.5)",
    "jitter = range(2, 1)",
    "jitter = range(-0, 1e999)",
    "jitter = range(0.5)",
    "linear(base = \"1.5s\", max = \"2m\")",
    "linear(base = \"20s\")",
    "linear(factor = 2)",
    "constant(\"1s\")",
    "constant(delay = \"500ms\")",
    "constant(\"0s\")",
    "constant(\"1s\", \"2s\")",
    "fibonacci(base = \"10ms\", max = \"1s\")",
    "decorrelated(base = \"5ms\", max = \"2s\")",
    "decorrelated",
    "immediate",
    "immediate(base = \"1s\")",
    "attempts = 5",
    "attempts = 0",
    "attempts = 4294967295",
    "attempts = 4294967296",
    "attempts = 99999999999999999999999999999999999999999",
    "attempts = unlimited",
    "attempts = unlimted",
    "attempts = \"3\"",
    "attempts = -1",
    "attempts",
    "attempts =",
    "jitter = \"full\"",
    "jitter = \"equal\"",
    "jitter = \"half\"",
    "jitter = \"none\"",
    "jitter = \"spread\"",
    "decorrelated, jitter = \"spread\"",
    "decorrelated, jitter = \"full\"",
    "jitter = \"ful\"",
    "jitter = scattered(0.25)",
    "jitter = scattered(1.5)",
    "jitter = scattered(\"x\")",
    "jitter = scattered()",
    "jitter = 3",
    "max_elapsed = \"30s\"",
    "max_elapsed = \"1m30s\"",
    "max_elapsed = \"0s\"",
    "max_elapsed = \"99999999999999999999999h\"",
    "max_elapsed = \"1.5.3s\"",
    "max_elapsed = \"30s1m\"",
    "max_elapsed = \"10 parsecs\"",
    "max_elapsed = \"\"",
    "max_elapsed = \"µs\"",
    "max_elapsed = \"3µs\"",
    "when = is_transient",
    "when = |e| e.is_transient()",
    "when = |e, f| true",
    "when = 42",
    "when = Decision::Retry",
    "on_retry = log",
    "on_retry = |e, ev| println!(\"{e} {ev:?}\")",
    "sleep = tokio::time::sleep",
    "sleep = |d| ()",
    "policy = &POLICY",
    "policy = Policy::immediate().attempts(n)",
    "policy = 5",
    "crate = \"::backoff_runtime\"",
    "crate = \"not a path!\"",
    "crate = 5",
    "throttled(exponential(base = \"500ms\", max = \"30s\"), attempts = 10)",
    "throttled(constant(\"1s\"))",
    "throttled(chain(constant(\"1s\", times = 2), exponential(base = \"2s\", max = \"1m\")), attempts = 6)",
    "throttled(sidekiq, attempts = 300)",
    "throttled(exponentail, attempts = 1)",
    "throttled(exponential, tries = 1)",
    "throttled",
    "throttled()",
    "budget = BUDGET",
    "budget = RetryBudget::new(1, 0.1)",
    "circuit = BREAKER",
    "circuit = 1",
    "circuit = self.breaker()",
    "throttle = THROTTLE",
    "throttle = &self.throttle()",
    "hedge = \"20ms\"",
    "hedge = \"p95\"",
    "hedge = \"p100\"",
    "hedge = \"p\"",
    "hedge = 20",
    "fallback = cached",
    "fallback = |e, g| Err(e)",
    "fallback = |e| Ok(1)",
    "fallback = cached()",
    "attempt_timeout = \"2s\"",
    "attempt_timeout = \"0s\"",
    "when_ok = |r| r.status == 503",
    "when_ok = unavailable",
    "when_ok = 3",
    "on_giveup = |outcome, g| log(outcome, g)",
    "on_giveup = report",
    "context = ctx",
    "context = self",
    "context = \"ctx\"",
    "context",
    "timeout = \"30s\"",
    "timeout = \"0s\"",
    "timeout = 30",
    "retry_after_max = \"1m\"",
    "retry_after_max = \"0s\"",
    "budget = &*self.budget",
    "circuit = self.breakers[host]",
    "circuit = CircuitBreaker::new(1, 1, D)",
    "cancel = token",
    "cancel = self.shutdown",
    "cancel = ",
    "cancel = |t| t",
    "attempt",
    "retries = 3",
    "5",
    "\"full\"",
    "é = 1",
    "r#attempts = 3",
    "::attempts = 3",
    "(((",
    "[[]]",
    "{ attempts = 3 }",
    "attempts = { 3 }",
    "#",
    "=",
    ",",
    "exponential(base = \"1s\" max = \"2s\")",
    "exponential(,,)",
    // Values that must be literals, names at the wrong level or from other
    // libraries, and the closures' shapes.
    "attempts = MAX_TRIES",
    "attempts = u32::MAX",
    "attempts: 3",
    "exponential(base = BASE)",
    "exponential(base = Duration::from_millis(100))",
    "exponential(base = std::time::Duration::new(1, 500))",
    "exponential(base = 0.5)",
    "exponential(attempts = 3)",
    "exponential(multiplier = 2, max_delay = \"5s\")",
    "constant(1)",
    "constant(Duration::from_secs(1))",
    "immediate(attempts = 3)",
    "jitter = Jitter::Full",
    "jitter = Jitter::Scattered(0.2)",
    "jitter = 0.2",
    "base = \"200ms\"",
    "max_retries = 3",
    "max_attempts = 5",
    "max_delay = \"5s\"",
    "strategy = \"exponential\"",
    "\"exponential\"",
    "\"100ms\"",
    "max_elapsed = \"1e3ms\"",
    "max_elapsed = \"1m 30s\"",
    "max_elapsed = \"1d\"",
    "max_elapsed = \"500MS\"",
    "max_elapsed = \"1m30\"",
    "when = |e: E| true",
    "when = |e: &mut E| true",
    "when_ok = |v| false",
    "on_retry = |e| ()",
    "on_giveup = |o, g| ()",
    "on_giveup = |o: Result<(), E>, g: GiveUp| ()",
    "wen = classify",
];

/// Items: every shape the attribute supports, and things it refuses.
const ITEMS: &[&str] = &[
    "fn f() -> Result<(), E> { Ok(()) }",
    "pub async fn fetch(url: &str) -> Result<Page, FetchError> { get(url).await }",
    "fn m(&self, x: u32) -> std::io::Result<u32> { Ok(x) }",
    "async fn m(&mut self) -> Result<(), E> { self.n += 1; Ok(()) }",
    "async fn m(self: Arc<Self>) -> anyhow::Result<()> { Ok(()) }",
    "fn g<T: Clone, U>(t: &T, u: impl AsRef<str>) -> Result<T, E> where U: Send { Ok(t.clone()) }",
    "unsafe fn u(p: *const u8) -> Result<u8, ()> { Ok(*p) }",
    "#[inline] #[must_use] /// doc\n pub(crate) fn a() -> Result<u8, E> { #![allow(unused)] Ok(1) }",
    "fn ret(flag: bool) -> Result<u8, E> { if flag { return Err(E); } let x = y?; Ok(x) }",
    "fn no_ret() {}",
    "fn opt() -> Option<u32> { None }",
    "fn it() -> Result<impl Display, E> { Ok(1) }",
    "const fn c() -> Result<(), ()> { Ok(()) }",
    "fn decl(&self) -> Result<(), E>;",
    "struct S;",
    "impl S { fn f() {} }",
    "trait T { fn f(&self) -> Result<(), E>; }",
    "mod m {}",
    "static X: u8 = 1;",
    "fn f() -> Result<(), E> { Box::pin(async move { let __ret: Result<(), E> = { Ok(()) }; __ret }) }",
    "fn f<'a, 'async_trait>(&'a self) -> Pin<Box<dyn Future<Output = Result<u8, E>> + Send + 'async_trait>> { Box::pin(async move { let __self = self; let __ret: Result<u8, E> = { Ok(1) }; __ret }) }",
    "fn f() -> Result<(), E> { loop {} }",
    // Found by a 1,000,000-case run: a bare trait object as return type.
    "async fn m(&mut self) -> Result<(), E>+{ self.n  = 1; Ok(()) }",
    "fn t() -> dyn Fn() + Send { x }",
    "extern \"C\" fn x() -> Result<(), E> { Ok(()) }",
    "fn",
    "fn f(",
    "fn f() -> { }",
    "async",
    "",
    "🦀",
    "fn 日本() -> Result<(), E> { Ok(()) }",
];

/// Raw tokens to splice in.
const NOISE: &[&str] = &[
    ",",
    "=",
    "(",
    ")",
    "[]",
    "{}",
    "\"",
    "\"5s\"",
    "1e309",
    "-0",
    "0x10",
    "'a",
    "b\"x\"",
    "340282366920938463463374607431768211456",
    "é",
    "日本",
    "🦀",
    "::",
    "#",
    "#!",
    "$",
    "?",
    "async",
    "fn",
    "self",
    "Self",
    "crate",
    "r#type",
    "1.0f32",
    "true",
    "'\\u{10FFFF}'",
    "exponential",
    "attempts",
    "jitter",
    "scattered",
    "unlimited",
    "|e|",
    "..",
    "..=",
];

/// Arguments and an item, each mutated (a stretch repeated at most
/// twice: syn recurses on each group, where rustc grows its stack).
fn input() -> impl Strategy<Value = (String, String)> {
    (texts(ARGS, 0..6, NOISE, 3), texts(ITEMS, 1..2, NOISE, 3))
}

/// Whether `tokens` contain a `compile_error!` invocation.
fn has_compile_error(tokens: &TokenStream) -> bool {
    tokens.to_string().contains("compile_error")
}

/// Checks one input: whether it holds, and whether the output carries a
/// compile error; `None` if the text does not lex (the compiler never hands
/// a macro such tokens).
fn check(args: &str, item: &str) -> Option<(Result<(), String>, bool)> {
    let args = TokenStream::from_str(args).ok()?;
    let item_tokens = TokenStream::from_str(item).ok()?;
    let out = expand::retry(args, item_tokens.clone());
    let error = has_compile_error(&out);
    let item_parses = syn::parse2::<syn::Item>(item_tokens).is_ok();
    let parses = syn::parse2::<syn::File>(out.clone()).is_ok();
    let verdict = if !item_parses {
        // A function whose body alone does not parse is expanded with the
        // body as written (the body is not parsed): rustc reports it at
        // its own tokens.
        if error || only_the_body_is_unparsable(&item_tokens_of(item)) {
            Ok(())
        } else {
            Err(format!("unparsable item without an error: {out}"))
        }
    } else if parses {
        Ok(())
    } else {
        Err(format!("output does not parse as items: {out}"))
    };
    Some((verdict, error))
}

fn item_tokens_of(item: &str) -> TokenStream {
    TokenStream::from_str(item).unwrap_or_default()
}

/// Whether `item` is a function with a braced body that parses once the
/// body is emptied.
fn only_the_body_is_unparsable(item: &TokenStream) -> bool {
    let mut tokens: Vec<proc_macro2::TokenTree> = item.clone().into_iter().collect();
    match tokens.pop() {
        Some(proc_macro2::TokenTree::Group(g))
            if g.delimiter() == proc_macro2::Delimiter::Brace =>
        {
            let mut emptied: TokenStream = tokens.into_iter().collect();
            emptied.extend(quote::quote!({}));
            syn::parse2::<syn::ItemFn>(emptied).is_ok()
        }
        _ => false,
    }
}

fn cases() -> u32 {
    std::env::var("BACKOFF_FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3_000)
}

#[test]
fn fuzz_expansion_never_panics_and_always_emits_items_or_an_error() {
    let mut runner = TestRunner::new(Config {
        cases: cases(),
        failure_persistence: None,
        ..Config::default()
    });
    let lexed = std::cell::Cell::new(0u64);
    let errors = std::cell::Cell::new(0u64);
    let result = runner.run(&input(), |(args, item)| {
        match std::panic::catch_unwind(|| check(&args, &item)) {
            Err(_) => Err(TestCaseError::fail(format!(
                "expansion panicked on #[retry({args})] {item}"
            ))),
            Ok(None) => Ok(()),
            Ok(Some((verdict, error))) => {
                lexed.set(lexed.get() + 1);
                errors.set(errors.get() + u64::from(error));
                verdict.map_err(|e| TestCaseError::fail(format!("#[retry({args})] {item}: {e}")))
            }
        }
    });
    let (lexed, errors) = (lexed.get(), errors.get());
    eprintln!(
        "fuzz: {} cases, {lexed} lexed, {errors} with compile errors",
        cases()
    );
    result.unwrap();
    assert!(
        lexed > u64::from(cases()) / 4,
        "too few inputs lexed: {lexed}"
    );
    assert!(
        errors > 0 && errors < lexed,
        "both valid and invalid inputs must occur"
    );
}

/// Regression: a return type that is a bare trait object (`-> R +`) was
/// pasted where such a type does not parse.
#[test]
fn bare_trait_object_return_types_expand_to_items() {
    for item in [
        "async fn m(&mut self) -> Result<(), E>+{ self.n  = 1; Ok(()) }",
        "fn t() -> Error + Send { x }",
    ] {
        assert_eq!(check("", item).map(|(v, _)| v), Some(Ok(())), "{item}");
    }
}

#[test]
fn every_valid_fragment_expands_without_error() {
    let valid = [
        "exponential(base = \"100ms\", factor = 2, max = \"5s\"), attempts = 5, jitter = \"full\", when = is_transient",
        "linear(base = \"1.5s\", max = \"2m\"), attempts = unlimited, max_elapsed = \"10m\"",
        "constant(\"1s\"), jitter = scattered(0.25), on_retry = |e, ev| log(e, ev), sleep = nap",
        "policy = &POLICY, when = |e| true",
        "throttled(constant(\"1s\"), attempts = 3), when = classify, budget = B, circuit = C",
        "throttle = T, fallback = |e, g| Err(e), on_giveup = |r, g| ()",
        "hedge = \"p99\", attempts = 3, when = classify, context = ctx, fallback = cached, budget = B",
        "",
    ];
    for args in valid {
        let out = expand::retry(
            TokenStream::from_str(args).unwrap(),
            TokenStream::from_str("async fn f(&self) -> Result<(), E> { Ok(()) }").unwrap(),
        );
        assert!(!has_compile_error(&out), "#[retry({args})]: {out}");
        syn::parse2::<syn::File>(out).unwrap();
    }
}
