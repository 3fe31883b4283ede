//! The strategy argument (`exponential(base = "100ms", ..)` and its kin),
//! its parameters, and the ones only a stage of a composed form takes
//! (`times`) or refuses (`jitter`).

use proc_macro2::{Span, TokenStream};
use syn::ext::IdentExt;
use syn::parse::ParseStream;
use syn::{Ident, Lit, LitInt, Token};

use super::defaults;
use super::literal::{DurationArg, FactorArg, Slot, parse_duration, parse_factor};
use super::names::{
    JitterKind, OTHER_ARGUMENTS, StrategyKind, equivalent, param_home, top_level_home,
};
use super::suggest::{composed_example, example, list, param_example, unknown};
use super::syntax::{comma_separated, eq, in_parens, named_value, optional_value, shown_value};
use crate::duration;
use crate::errors::Errors;

/// The strategy argument: `exponential(base = "100ms", factor = 2, max = "5s")`.
pub(crate) struct StrategyArg {
    pub(crate) kind: StrategyKind,
    pub(crate) span: Span,
    /// `base`, or the constant's `delay`.
    pub(crate) base: Option<DurationArg>,
    pub(crate) factor: Option<FactorArg>,
    pub(crate) max: Option<DurationArg>,
    /// Inside another form: a stage of `chain`, `sum`, ...
    pub(crate) nested: bool,
    /// A stage's `times = n`: the retries it schedules before the next.
    pub(crate) times: Option<TimesArg>,
    /// A stage's `for = D`: it ends at the first failure once D has passed.
    pub(crate) lasting: Option<super::compose::ForArg>,
    /// The stages of `chain`, `shorter`, `longer` and `sum`.
    pub(crate) stages: Vec<StrategyArg>,
    /// The delays of `steps`.
    pub(crate) steps: Vec<DurationArg>,
}

/// `times = 3`, with the span of its name.
#[derive(Clone, Copy)]
pub(crate) struct TimesArg {
    pub(crate) value: u64,
    pub(crate) span: Span,
}

impl StrategyArg {
    /// `kind` with nothing given, written at `span`.
    pub(crate) fn new(kind: StrategyKind, span: Span, nested: bool) -> StrategyArg {
        StrategyArg {
            kind,
            span,
            base: None,
            factor: None,
            max: None,
            nested,
            times: None,
            lasting: None,
            stages: Vec::new(),
            steps: Vec::new(),
        }
    }

    /// The strategy when none is given.
    pub(crate) fn default_exponential() -> StrategyArg {
        StrategyArg::new(StrategyKind::Exponential, Span::call_site(), false)
    }

    /// The jitter this strategy has when `jitter` is not given: its
    /// kind's ([`defaults::jitter`]); for a composed one, none when every
    /// leaf has none (random by itself, or never waits), else full.
    pub(crate) fn default_jitter(&self) -> JitterKind {
        if self.stages.is_empty() {
            defaults::jitter(self.kind)
        } else if self
            .stages
            .iter()
            .all(|s| matches!(s.default_jitter(), JitterKind::None))
        {
            JitterKind::None
        } else {
            JitterKind::Full
        }
    }
}

/// A strategy that is not composed: `exponential`, `exponential(...)`,
/// `constant("1s")`, `immediate`.
pub(super) fn parse_leaf(
    strategy: StrategyArg,
    key: &Ident,
    input: ParseStream<'_>,
) -> syn::Result<StrategyArg> {
    let kind = strategy.kind;
    if input.peek(Token![=]) {
        return Err(syn::Error::new(
            key.span(),
            format!(
                "a strategy takes its parameters in parentheses, as in `{}`",
                example(kind)
            ),
        ));
    }
    if !input.peek(syn::token::Paren) {
        return Ok(strategy);
    }
    in_parens(input, |content| parse_params(strategy, content))
}

/// The parenthesized parameters of a strategy.
fn parse_params(mut strategy: StrategyArg, content: ParseStream<'_>) -> syn::Result<StrategyArg> {
    let kind = strategy.kind;
    let nested = strategy.nested;
    let stage_param = move |content: ParseStream<'_>| {
        nested
            && named_value(content)
                .is_some_and(|n| matches!(n.to_string().as_str(), "times" | "jitter" | "for"))
    };
    if kind == StrategyKind::Immediate && !stage_param(content) {
        let span = content.span();
        let named = named_value(content);
        let shown = {
            let fork = content.fork();
            let _ = fork.call(Ident::parse_any);
            shown_value(optional_value(&fork).as_ref()).unwrap_or_else(|| "...".to_owned())
        };
        if !content.parse::<TokenStream>()?.is_empty() {
            let message = match named.map(|n| n.unraw().to_string()) {
                Some(name) if OTHER_ARGUMENTS.contains(&name.as_str()) => format!(
                    "`immediate` takes no parameters; `{name}` is an argument of its own: write `immediate, {name} = {shown}`"
                ),
                _ => "`immediate` takes no parameters; it never waits".to_owned(),
            };
            return Err(syn::Error::new(span, message));
        }
        return Ok(strategy);
    }
    // `constant("1s")`: the delay without its name.
    if kind == StrategyKind::Constant && !content.is_empty() && named_value(content).is_none() {
        strategy.base = Some(parse_duration(
            content,
            &Slot::new(
                "constant",
                &defaults::literal(defaults::DELAY),
                Some("Policy::constant({})"),
            ),
        )?);
        // A stage's `constant("1m", times = 3)`.
        if content.peek(Token![,]) && {
            let fork = content.fork();
            fork.parse::<Token![,]>().is_ok() && stage_param(&fork)
        } {
            content.parse::<Token![,]>()?;
        } else if !content.is_empty() {
            return Err(syn::Error::new(
                content.span(),
                format!(
                    "`constant` takes one delay, as in `{}`",
                    example(StrategyKind::Constant)
                ),
            ));
        }
        if content.is_empty() {
            return Ok(strategy);
        }
    }
    let mut errors = Errors::default();
    comma_separated(content, &mut errors, |content, _| {
        parse_param(kind, &mut strategy, content)
    });
    errors.finish()?;
    Ok(strategy)
}

fn parse_param(
    kind: StrategyKind,
    strategy: &mut StrategyArg,
    input: ParseStream<'_>,
) -> syn::Result<()> {
    if input.peek(Token![,]) {
        return Err(syn::Error::new(input.span(), "extra `,`; remove it"));
    }
    if input.peek(Lit) {
        let lit: Lit = input.parse()?;
        let value = match &lit {
            Lit::Str(s) if duration::parse(&s.value()).is_ok() => Some(s.value()),
            Lit::Int(i) => Some(format!("{}ms", i.base10_digits())),
            _ => None,
        };
        // (`base`, or `unit` for `sidekiq` and `buckets`.)
        let param = kind.params().first().copied().unwrap_or("base");
        let message = match value {
            Some(value) => format!(
                "`{}` takes named parameters: write `{}({param} = \"{value}\")`",
                kind.name(),
                kind.name(),
            ),
            None => format!(
                "expected a parameter of `{}`: {}",
                kind.name(),
                list(kind.params())
            ),
        };
        return Err(syn::Error::new(lit.span(), message));
    }
    let key = input.call(Ident::parse_any).map_err(|_| {
        syn::Error::new(
            input.span(),
            format!(
                "expected a parameter of `{}`: {}",
                kind.name(),
                list(kind.params())
            ),
        )
    })?;
    let name = key.unraw().to_string();
    if let Some(done) = parse_stage_param(strategy, &key, &name, input) {
        return done;
    }
    if !kind.params().contains(&name.as_str()) {
        return Err(unknown_param(kind, &key, &name, input));
    }
    let example = if name == "factor" {
        "factor = 2".to_owned()
    } else {
        format!("{name} = {}", defaults::literal(defaults::BASE))
    };
    eq(input, &key, &example)?;
    let duplicate = || {
        syn::Error::new(
            key.span(),
            format!("duplicate parameter `{name}`: it is already given; keep one"),
        )
    };
    match name.as_str() {
        "factor" => {
            let factor = parse_factor(input)?;
            if strategy.factor.is_some() {
                return Err(duplicate());
            }
            strategy.factor = Some(factor);
        }
        "max" => {
            let setter = format!("Policy::{}(..).max_delay({{}})", kind.name());
            let max = defaults::literal(defaults::MAX);
            let d = parse_duration(input, &Slot::new("max", &max, Some(&setter)))?;
            if strategy.max.is_some() {
                return Err(duplicate());
            }
            strategy.max = Some(d);
        }
        _ => {
            let constructor = match kind {
                StrategyKind::Sidekiq => "Sidekiq::new().unit({})".to_owned(),
                StrategyKind::Buckets => "Buckets::new().unit({})".to_owned(),
                _ => format!("Policy::{}({{}})", kind.name()),
            };
            let example = defaults::literal(match name.as_str() {
                "delay" => defaults::DELAY,
                "unit" => defaults::UNIT,
                _ => defaults::BASE,
            });
            let d = parse_duration(input, &Slot::new(&name, &example, Some(&constructor)))?;
            if strategy.base.is_some() {
                return Err(duplicate());
            }
            strategy.base = Some(d);
        }
    }
    Ok(())
}

/// A name inside a strategy's parentheses that is not one of its
/// parameters: an argument of the attribute, another library's name for a
/// parameter, `factor` beside a strategy without one, or a typo.
fn unknown_param(
    kind: StrategyKind,
    key: &Ident,
    name: &str,
    input: ParseStream<'_>,
) -> syn::Error {
    let value = optional_value(input);
    let strategy = kind.name();
    if let Some(argument) = top_level_home(name) {
        let message = if name == argument {
            let shown = shown_value(value.as_ref()).unwrap_or_else(|| "...".to_owned());
            format!(
                "`{argument}` is an argument of its own, not a parameter of `{strategy}`; write it after the strategy: `{strategy}(..), {argument} = {shown}`"
            )
        } else {
            format!(
                "unknown parameter `{name}` of `{strategy}`; the attribute's `{argument}` is an argument of its own, written after the strategy: `{strategy}(..), {argument} = ...`"
            )
        };
        return syn::Error::new(key.span(), message);
    }
    let home = param_home(name).map(|(param, _)| equivalent(param, kind));
    if let Some(param) = home
        && let Some((_, what)) = param_home(param)
        && name != param
        && kind.params().contains(&param)
    {
        let shown = shown_value(value.as_ref())
            .filter(|v| {
                if param == "factor" {
                    v.starts_with(|c: char| c.is_ascii_digit())
                } else {
                    v.starts_with('"')
                }
            })
            .unwrap_or_else(|| param_example(param));
        return syn::Error::new(
            key.span(),
            format!(
                "unknown parameter `{name}` of `{strategy}`; {what} is `{param}`: write `{param} = {shown}`"
            ),
        );
    }
    if name == "factor" {
        return syn::Error::new(
            key.span(),
            format!(
                "`factor` applies to `exponential` only; `{strategy}` takes {}",
                list(kind.params())
            ),
        );
    }
    unknown(key, &format!("`{strategy}` parameter"), kind.params())
}

/// `times = n` or `jitter = ..` inside a strategy's parentheses: `None`
/// when `name` is neither, else the parameter parsed or its error.
pub(super) fn parse_stage_param(
    strategy: &mut StrategyArg,
    key: &Ident,
    name: &str,
    input: ParseStream<'_>,
) -> Option<syn::Result<()>> {
    match name {
        "times" => Some(parse_times(strategy, key, input)),
        "for" => Some(super::compose::parse_for(strategy, key, input)),
        "jitter" if strategy.nested => {
            // (The caller drops the value: the error is about the name.)
            Some(Err(syn::Error::new(
                key.span(),
                "`jitter` applies once, to the composed delay, not to one stage; remove it here and write it after the whole strategy, as in `chain(..), jitter = \"full\"`",
            )))
        }
        _ => None,
    }
}

fn parse_times(strategy: &mut StrategyArg, key: &Ident, input: ParseStream<'_>) -> syn::Result<()> {
    if !strategy.nested {
        return Err(syn::Error::new(
            key.span(),
            format!(
                "`times` belongs to a stage of `chain`, `shorter` or `longer`, as in `{}`; for the whole call's limit write `attempts = ..`",
                composed_example(StrategyKind::Chain)
            ),
        ));
    }
    eq(input, key, "times = 3")?;
    let lit: LitInt = input.parse().map_err(|e| {
        syn::Error::new(
            e.span(),
            "`times` takes a whole number of retries, as in `times = 3`",
        )
    })?;
    let value = lit.base10_parse::<u64>()?;
    if strategy.times.is_some() {
        return Err(syn::Error::new(
            key.span(),
            "duplicate parameter `times`: it is already given; keep one",
        ));
    }
    strategy.times = Some(TimesArg {
        value,
        span: key.span(),
    });
    Ok(())
}
