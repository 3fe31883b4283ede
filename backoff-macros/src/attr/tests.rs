//! Unit tests of the argument parser.

use super::*;

#[test]
fn key_value_form_is_told_from_the_list_form() {
    assert!(is_key_value_form("#[retry = \"100ms\"]"));
    assert!(is_key_value_form("#[backoff_runtime::retry= 3]"));
    assert!(!is_key_value_form("#[retry(\"100ms\")]"));
    assert!(!is_key_value_form("#[retry(attempts = 3)]"));
    assert!(!is_key_value_form("#[retry]"));
    assert!(!is_key_value_form("#[retry $($t)*]"));
}

fn messages(args: &str) -> Vec<String> {
    let mut errors = Errors::default();
    let tokens: TokenStream = args.parse().unwrap();
    let _ = RetryArgs::parse(tokens, &mut errors);
    match errors.finish() {
        Ok(()) => Vec::new(),
        Err(e) => e.into_iter().map(|e| e.to_string()).collect(),
    }
}

#[test]
fn raw_identifiers_are_their_names() {
    assert_eq!(messages("r#attempts = 3, r#when = f"), Vec::<String>::new());
}

#[test]
fn literal_only_values_are_translated() {
    for (args, expect) in [
        (
            "exponential(base = Duration::from_millis(100))",
            "write `\"100ms\"`",
        ),
        (
            "exponential(base = std::time::Duration::new(1, 500_000_000))",
            "write `\"1.5s\"`",
        ),
        ("max_elapsed = Duration::from_secs(90)", "write `\"90s\"`"),
        ("jitter = Jitter::Full", "write `jitter = \"full\"`"),
        (
            "jitter = backoff_runtime::Jitter::Scattered(0.2)",
            "write `jitter = scattered(0.2)`",
        ),
        ("jitter = 0.2", "write `jitter = scattered(0.2)`"),
        ("attempts = u32::MAX", "write `attempts = unlimited`"),
        ("attempts = -1", "cannot be negative"),
        (
            "attempts = MAX_TRIES",
            "`Policy::exponential(..).attempts(MAX_TRIES)`",
        ),
        ("exponential(base = BASE)", "`Policy::exponential(BASE)`"),
        ("linear(base = BASE)", "`Policy::linear(BASE)`"),
        (
            "constant(1)",
            "write `constant(\"1s\")` or `constant(\"1ms\")`",
        ),
        ("constant(DELAY)", "`Policy::constant(DELAY)`"),
        (
            "exponential(base = 0.5)",
            "if `0.5` is in seconds, write `\"500ms\"`",
        ),
        ("exponential(factor = FACTOR)", ".factor(FACTOR)`"),
        ("timeout = TIMEOUT", "reads it when the code compiles"),
        (
            "when = is_transient()",
            "write `when = is_transient`, without the call",
        ),
    ] {
        let all = messages(args).join("\n");
        assert!(all.contains(expect), "{args}: {all}");
    }
}

#[test]
fn names_at_the_wrong_level_say_where_they_belong() {
    for (args, expect) in [
        ("base = \"200ms\"", "`exponential(base = \"200ms\")`"),
        (
            "linear(max = \"5s\"), base = \"200ms\"",
            "`linear(.., base = \"200ms\")`",
        ),
        ("constant(\"1s\"), max = \"5s\"", "`constant` has no `max`"),
        ("delay = \"2s\"", "`constant(\"2s\")`"),
        ("factor = 3", "`exponential(factor = 3)`"),
        (
            "max_delay = \"5s\"",
            "the longest delay is the strategy's `max`: write `exponential(max = \"5s\")`",
        ),
        ("initial_delay = \"1s\"", "`exponential(base = \"1s\")`"),
        ("multiplier = 3", "`exponential(factor = 3)`"),
        (
            "exponential(attempts = 5)",
            "write it after the strategy: `exponential(..), attempts = 5`",
        ),
        (
            "exponential(max_elapsed = \"1m\")",
            "`exponential(..), max_elapsed = \"1m\"`",
        ),
        (
            "exponential(max_delay = \"5s\")",
            "the longest delay is `max`: write `max = \"5s\"`",
        ),
        ("immediate(attempts = 3)", "write `immediate, attempts = 3`"),
        ("max_attempts = 5", "write `attempts = 5`"),
        ("max_retries = 3", "3 retries are `attempts = 4`"),
        ("retries = 3", "3 retries are `attempts = 4`"),
        ("tries = 2", "write `attempts = 2`"),
        (
            "strategy = \"exponential\"",
            "without `strategy =`: `exponential`",
        ),
        ("\"exponential\"", "without quotes: `exponential`"),
        (
            "exponential(delay = \"1s\")",
            "the first delay is `base`: write `base = \"1s\"`",
        ),
        ("constant(base = \"1s\")", "the fixed delay is `delay`"),
        ("constant(dealy = \"1s\")", "did you mean `delay`?"),
    ] {
        let all = messages(args).join("\n");
        assert!(all.contains(expect), "{args}: {all}");
    }
}

#[test]
fn one_error_per_mistake() {
    for args in [
        "attempts = 3, attempts = 4",
        "exponential, linear",
        "attempts = 3,, jitter = \"full\"",
        "attempts: 3",
    ] {
        assert_eq!(messages(args).len(), 1, "{args}: {:?}", messages(args));
    }
    assert!(messages(", attempts = 3")[0].contains("extra `,`"));
    assert!(messages("attempts: 3")[0].contains("write `=` here, not `:`"));
}

/// The schedule language's crate reads the whole attribute as text: the
/// attribute's own values, whatever tokens they hold (a `'('`, a raw byte
/// string with a quote, a closure's commas, a custom jitter's path), come
/// back as written, and the arguments around them are still read.
#[test]
fn the_attributes_own_values_pass_through_the_text_whole() {
    let args = r####"when = |e: &E| e.0 == '(' || e.1 == br#"a")"#, attempts = 4, on_retry = |a, b| log(a, b), jitter = my::JITTER, max_elapsed = "2s""####;
    let mut errors = Errors::default();
    let parsed = RetryArgs::parse(args.parse().unwrap(), &mut errors);
    assert!(errors.finish().is_ok());
    assert!(parsed.when.is_some() && parsed.on_retry.is_some());
    assert_eq!(parsed.attempts.map(|a| a.value), Some(Attempts::Limited(4)));
    let Some(JitterKind::Custom(path)) = parsed.jitter.map(|j| j.value) else {
        panic!("a custom jitter");
    };
    assert_eq!(path.0.to_string(), "my :: JITTER");
    let max = parsed.max_elapsed.map(|m| m.value.value);
    assert_eq!(max, Some(std::time::Duration::from_secs(2)));
    assert_eq!(
        messages("when = f, attempts = 2, when = g"),
        ["duplicate argument `when`: it is already given; keep one"]
    );
}
